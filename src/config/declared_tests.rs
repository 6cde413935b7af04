//! Tests of `[fleet]`: its shape, secrets only by reference, and the documents it
//! builds for the datasource validation.

use super::*;
use crate::config::{Config, Mode, Overrides};

fn load(text: &str, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("kerf.toml");
    std::fs::write(&file, text).expect("write");
    let o = Overrides {
        config_file: Some(file),
        ..Default::default()
    };
    let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    Config::load(&o, env)
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The example file's fleet block, uncommented.
fn example_block() -> String {
    let example = include_str!("../../config/kerf.example.toml");
    let start = example
        .find("# --- fleet example ---")
        .expect("start marker");
    let end = example
        .find("# --- end of fleet example ---")
        .expect("end marker");
    example[start..end]
        .lines()
        .skip(1)
        .map(|l| l.strip_prefix("# ").or(l.strip_prefix('#')).unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_example_fleet_parses_and_reads_its_secrets_from_files_and_variables() {
    let dir = tempfile::tempdir().expect("tempdir");
    let token = dir.path().join("prometheus-token");
    std::fs::write(&token, "s3cret-bearer\n").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let private = std::fs::Permissions::from_mode(0o400);
        std::fs::set_permissions(&token, private).expect("chmod");
    }
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, "not checked here").expect("write");
    let block = example_block()
        .replace(
            "/etc/kerf/secrets/prometheus-token",
            &token.display().to_string(),
        )
        .replace("/etc/kerf/prometheus-ca.pem", &ca.display().to_string());
    let c = load(&block, &[]).expect("the example block loads");
    assert_eq!(c.fleet.datasources.len(), 1);
    assert_eq!(
        c.fleet.clusters[0].datasource.as_deref(),
        Some("prometheus")
    );
    let doc = c.fleet.datasources[0]
        .document(&env(&[("PROMETHEUS_API_KEY", "key-1")]), false)
        .expect("document");
    assert_eq!(
        doc["auth"],
        serde_json::json!({"type": "bearer", "token": "s3cret-bearer"})
    );
    assert_eq!(doc["headers"][1]["secret"], true);
    assert_eq!(doc["headers"][1]["value"], "key-1");
    assert_eq!(doc["headers"][0]["value"], "prod");
    assert_eq!(doc["tls"]["caPem"], "not checked here");
    assert_eq!(doc["timeoutSeconds"], 30);
    assert_eq!(doc["clusterLabel"], "cluster");
}

#[test]
fn a_secret_written_in_the_file_is_an_unknown_key_naming_the_file_and_env_keys() {
    let text = "[[fleet.datasources]]\nname = \"p\"\nurl = \"http://p:9090\"\n\
                auth = { type = \"basic\", username = \"u\", password = \"hunter2\" }\n";
    let err = load(text, &[]).unwrap_err().to_string();
    assert!(
        err.contains("unknown field `password`") && err.contains("password_file"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    let text = "[[fleet.clusters]]\nname = \"c\"\ntoken = \"kerf_ct_x\"\n";
    let err = load(text, &[]).unwrap_err().to_string();
    assert!(err.contains("unknown field `token`"), "{err}");
}

#[test]
fn each_secret_has_exactly_one_source_and_the_auth_type_decides_which() {
    let both = "[[fleet.clusters]]\nname = \"c\"\ntoken_file = \"/t\"\ntoken_env = \"T\"\n";
    let err = load(both, &[]).unwrap_err().to_string();
    assert!(
        err.contains("fleet.clusters.c.token_file and token_env are both set"),
        "{err}"
    );
    let bearer = "[[fleet.datasources]]\nname = \"p\"\nurl = \"http://p\"\n\
                  auth = { type = \"bearer\", password_env = \"P\" }\n";
    let err = load(bearer, &[]).unwrap_err().to_string();
    assert!(
        err.contains("fleet.datasources.p.auth: type \"bearer\" takes token_file or token_env"),
        "{err}"
    );
    let ours = "[[fleet.clusters]]\nname = \"c\"\ntoken_env = \"KERF_TOKEN\"\n";
    let err = load(ours, &[]).unwrap_err().to_string();
    assert!(
        err.contains("token_env KERF_TOKEN: names starting with KERF_"),
        "{err}"
    );
    let header = "[[fleet.datasources]]\nname = \"p\"\nurl = \"http://p\"\n\
                  headers = [{ name = \"X\", value = \"a\", value_env = \"B\" }]\n";
    let err = load(header, &[]).unwrap_err().to_string();
    assert!(err.contains("fleet.datasources.p.headers[0]"), "{err}");
}

#[test]
fn names_are_declared_once_and_an_agent_declares_no_fleet() {
    let twice = "[[fleet.clusters]]\nname = \"c\"\n[[fleet.clusters]]\nname = \"c\"\n";
    let err = load(twice, &[]).unwrap_err().to_string();
    assert!(err.contains("\"c\" is declared twice"), "{err}");
    let agent = "mode = \"agent\"\n[agent]\ncluster = \"c\"\nhub_url = \"https://hub\"\n\
                 [[fleet.clusters]]\nname = \"c\"\n";
    let err = load(agent, &[]).unwrap_err().to_string();
    assert!(err.contains("mode = \"agent\" has none"), "{err}");
    let c = load("[[fleet.clusters]]\nname = \"c\"\n", &[]).expect("hub");
    assert_eq!(c.mode, Mode::Hub);
}

#[test]
fn a_missing_secret_names_its_key_and_variable_never_a_value() {
    let text = "[[fleet.datasources]]\nname = \"p\"\nurl = \"http://p\"\n\
                auth = { type = \"bearer\", token_env = \"PROM_TOKEN\" }\n\
                [[fleet.clusters]]\nname = \"c\"\ntoken_file = \"/nonexistent/kerf-token\"\n";
    let c = load(text, &[]).expect("structure is fine");
    let err = c.fleet.datasources[0]
        .document(&env(&[]), false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("fleet.datasources.p.auth.token_env: the environment variable PROM_TOKEN is unset or empty"),
        "{err}"
    );
    let err = c.fleet.clusters[0]
        .token(&env(&[]), false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("fleet.clusters.c.token_file /nonexistent/kerf-token"),
        "{err}"
    );
    let ok = c.fleet.datasources[0]
        .document(&env(&[("PROM_TOKEN", " t0k3n \n")]), false)
        .expect("from the variable");
    assert_eq!(ok["auth"]["token"], "t0k3n");
}

#[test]
fn the_printed_config_shows_where_secrets_come_from_not_their_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("pw");
    std::fs::write(&file, "hunter2").expect("write");
    let text = format!(
        "[[fleet.datasources]]\nname = \"p\"\nurl = \"http://p\"\n\
         auth = {{ type = \"basic\", username = \"u\", password_file = \"{}\" }}\n",
        file.display()
    );
    let c = load(&text, &[]).expect("loads");
    let printed = c.to_toml();
    assert!(printed.contains("password_file"), "{printed}");
    assert!(!printed.contains("hunter2"), "{printed}");
    let again: Config = toml::from_str(&printed).expect("the print loads again");
    assert_eq!(again.fleet, c.fleet);
}

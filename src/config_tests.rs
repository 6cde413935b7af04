//! Tests of the boot configuration: precedence, unknown keys, typed env values and
//! the example file.

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn defaults_listen_on_loopback_in_hub_mode() {
    let c = Config::load(&Overrides::default(), env(&[])).expect("defaults load");
    assert_eq!(c.mode, Mode::Hub);
    assert!(c.listen.ip().is_loopback());
    assert_eq!(c.http.max_body_bytes, 1024 * 1024);
}

#[test]
fn env_overrides_file_and_flags_override_env() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("k.toml");
    std::fs::write(&file, "listen = \"127.0.0.1:9000\"\n[store]\nreaders = 2\n").unwrap();
    let o = Overrides {
        config_file: Some(file),
        listen: Some("127.0.0.1:9100".parse().unwrap()),
        ..Default::default()
    };
    let c = Config::load(
        &o,
        env(&[
            ("KERF_STORE__READERS", "3"),
            ("KERF_LISTEN", "127.0.0.1:9001"),
        ]),
    )
    .expect("loads");
    assert_eq!(c.store.readers, 3);
    assert_eq!(c.listen.port(), 9100);
}

#[test]
fn unknown_keys_are_refused_from_file_and_env() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("k.toml");
    std::fs::write(&file, "[http]\nmax_bodyy = 1\n").unwrap();
    let o = Overrides {
        config_file: Some(file),
        ..Default::default()
    };
    let err = Config::load(&o, env(&[])).unwrap_err().to_string();
    assert!(err.contains("max_bodyy"), "{err}");
    let err = Config::load(&Overrides::default(), env(&[("KERF_HTTP__NOPE", "1")]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("KERF_HTTP__NOPE") && err.contains("http.nope"),
        "{err}"
    );
}

#[test]
fn env_values_must_match_the_key_type() {
    let err = Config::load(
        &Overrides::default(),
        env(&[("KERF_STORE__READERS", "many")]),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("expected an integer"), "{err}");
}

#[test]
fn tls_needs_both_files() {
    let err = Config::load(
        &Overrides::default(),
        env(&[("KERF_TLS__CERT_FILE", "/x.pem")]),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("tls.cert_file and tls.key_file"), "{err}");
}

#[test]
fn example_config_lists_every_key_with_its_default() {
    let example = include_str!("../config/kerf.example.toml");
    let parsed: Config = toml::from_str(example).expect("example parses as a full config");
    let expected = Config {
        tls: parsed.tls.clone(),
        ..Config::default()
    };
    assert_eq!(parsed, expected, "example config drifted from the defaults");
}

//! Tests of the declared fleet's checks (the store side is black-box tested with the
//! real binary: tests/it/declared_fleet.rs).

use super::*;
use crate::config::declared::FleetConfig;

fn fleet(text: &str) -> FleetConfig {
    #[derive(serde::Deserialize)]
    struct File {
        fleet: FleetConfig,
    }
    toml::from_str::<File>(text).expect("fleet parses").fleet
}

#[test]
fn validation_paths_are_spelled_as_the_toml_keys() {
    assert_eq!(toml_key("$.timeoutSeconds"), "timeout_seconds");
    assert_eq!(toml_key("$.auth.password"), "auth.password_file");
    assert_eq!(toml_key("$.tls.caPem"), "tls.ca_file");
    assert_eq!(toml_key("$.headers[1].name"), "headers[1].name");
    assert_eq!(toml_key("displayName"), "display_name");
    assert_eq!(toml_key("$"), "(the declaration)");
}

#[test]
fn a_bad_datasource_is_refused_naming_its_keys_and_never_its_secrets() {
    let f = fleet(
        "[[fleet.datasources]]\nname = \"p\"\nurl = \"ftp://p\"\ntimeout_seconds = 0\n\
         auth = { type = \"bearer\", token_env = \"T\" }\n",
    );
    let env = vec![("T".to_string(), "the-secret-token".to_string())];
    let Err(DeclaredError::Refused(m)) = resolve(&f, &env) else {
        panic!("refused expected")
    };
    assert!(m.starts_with("fleet.datasources.p: url: required"), "{m}");
    assert!(
        m.contains("timeout_seconds: must be an integer from 1 to 600"),
        "{m}"
    );
    assert!(!m.contains("the-secret-token"), "{m}");
}

#[test]
fn a_declared_tls_without_a_ca_file_trusts_the_system_roots() {
    // The document has `"caPem": null` for the unset key, which reads as left out.
    let f = fleet(
        "[[fleet.datasources]]\nname = \"p\"\nurl = \"https://p:9090\"\n\
         tls = { insecure_skip_verify = true }\n",
    );
    let resolved = resolve(&f, &[]).expect("resolves");
    let settings = &resolved.datasources[0].settings;
    assert_eq!(
        (&settings.ca_pem, settings.insecure_skip_verify),
        (&None, true)
    );
}

#[test]
fn a_bad_cluster_is_refused_naming_its_key() {
    let f = fleet("[[fleet.clusters]]\nname = \"Prod_East\"\n");
    let Err(DeclaredError::Refused(m)) = resolve(&f, &[]) else {
        panic!("refused expected")
    };
    assert!(m.starts_with("fleet.clusters.Prod_East: name"), "{m}");
    let f = fleet("[[fleet.clusters]]\nname = \"c\"\nlabels = { \"bad key!\" = \"x\" }\n");
    let Err(DeclaredError::Refused(m)) = resolve(&f, &[]) else {
        panic!("refused expected")
    };
    assert!(m.starts_with("fleet.clusters.c: labels.bad key!"), "{m}");
}

#[test]
fn a_declared_token_must_be_a_long_cluster_token() {
    let f = fleet("[[fleet.clusters]]\nname = \"c\"\ntoken_env = \"T\"\n");
    for bad in [
        "kerf_ct_short",
        "kerf_at_0123456789abcdef0123456789abcdef",
        "nope-0",
    ] {
        let env = vec![("T".to_string(), bad.to_string())];
        let Err(DeclaredError::Refused(m)) = resolve(&f, &env) else {
            panic!("{bad} must be refused")
        };
        assert!(m.contains("the token must be kerf_ct_"), "{m}");
        assert!(!m.contains(bad), "{m}");
    }
    let good = format!("kerf_ct_{}", "ab".repeat(32));
    let env = vec![("T".to_string(), good)];
    assert_eq!(resolve(&f, &env).expect("resolves").counts(), (0, 1));
}

#[test]
fn the_api_may_change_only_what_the_file_leaves_undeclared() {
    let f = fleet(
        "[[fleet.clusters]]\nname = \"linked\"\ndatasource = \"p\"\ntoken_env = \"T\"\n\
         [[fleet.clusters]]\nname = \"bare\"\n",
    );
    let code = |r: Result<(), OpError>| match r {
        Ok(()) => "ok".to_string(),
        Err(OpError::Conflict { code, .. }) => code.to_string(),
        Err(e) => panic!("{e}"),
    };
    for part in [
        ClusterPart::Metadata,
        ClusterPart::Existence,
        ClusterPart::Token,
        ClusterPart::Datasource,
    ] {
        assert_eq!(
            code(guard_cluster(&f, "linked", part)),
            "declared_in_config"
        );
        assert_eq!(code(guard_cluster(&f, "api-made", part)), "ok");
    }
    assert_eq!(
        code(guard_cluster(&f, "bare", ClusterPart::Metadata)),
        "declared_in_config"
    );
    assert_eq!(code(guard_cluster(&f, "bare", ClusterPart::Token)), "ok");
    assert_eq!(
        code(guard_cluster(&f, "bare", ClusterPart::Datasource)),
        "ok"
    );
}

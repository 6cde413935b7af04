//! docs/connect-a-cluster.md stays a working example: its API bodies connect a cluster
//! on the real binary, its kerf.toml and Helm values pass `kerf config check`, and its
//! metric tables name exactly what kerf queries (the `metric` names of
//! `src/datasource/raw.rs`), the needed ones exactly what a datasource test requires.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{json, Value};

use crate::support::{bin, Api, DataDir};

const DOC: &str = include_str!("../../docs/connect-a-cluster.md");

/// The fenced block right after the marker `<!-- {marker} -->`.
fn block(marker: &str) -> String {
    let at = DOC
        .find(&format!("<!-- {marker} -->"))
        .unwrap_or_else(|| panic!("no marker {marker}"));
    let rest = &DOC[at..];
    let open = rest.find("```").expect("a fenced block");
    let body = &rest[open..];
    let start = body.find('\n').expect("fence line") + 1;
    let end = body[start..].find("```").expect("closing fence");
    body[start..start + end].to_string()
}

/// The fenced block that follows the first line containing `heading`.
fn block_after(heading: &str) -> String {
    let at = DOC.find(heading).unwrap_or_else(|| panic!("no {heading}"));
    let rest = &DOC[at..];
    let open = rest.find("```").expect("a fenced block");
    let body = &rest[open..];
    let start = body.find('\n').expect("fence line") + 1;
    let end = body[start..].find("```").expect("closing fence");
    body[start..start + end].to_string()
}

fn metrics_in(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            ["kube_", "container_", "rollout_info_"]
                .iter()
                .any(|p| w.starts_with(p))
                && w.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn the_metric_tables_name_exactly_what_kerf_reads_and_requires() {
    let raw = include_str!("../../src/datasource/raw.rs");
    let module = &raw[raw.find("pub mod metric").expect("metric module")..];
    let read: BTreeSet<String> = module
        .lines()
        .filter(|l| l.trim_start().starts_with("pub const") && l.contains(": &str = \""))
        .filter_map(|l| l.split('"').nth(1).map(str::to_string))
        .collect();
    let tables = &DOC[DOC.find("## 1.").expect("section 1")
        ..DOC.find("**The label allow-list.**").expect("allow-list")];
    assert_eq!(
        metrics_in(tables),
        read,
        "the doc's tables and src/datasource/raw.rs differ"
    );
    let needed_text = &tables[tables.find("Needed").expect("Needed")
        ..tables.find("Read when present").expect("optional")];
    let needed: BTreeSet<String> = metrics_in(needed_text);
    let required: BTreeSet<String> = kerf::datasource::raw::metric::REQUIRED
        .iter()
        .filter(|m| m.starts_with("kube_"))
        .map(|m| m.to_string())
        .collect();
    assert_eq!(needed, required);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pages_api_bodies_connect_a_cluster_on_the_real_binary() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let base = kerf.url("");
    let datasource: Value =
        serde_json::from_str(&block("body: datasource")).expect("datasource JSON");
    let (st, ds) = Api::new(&base, &admin)
        .call("POST", "/v1/datasources", Some(datasource))
        .await;
    assert_eq!(st, 201, "{ds}");
    assert_eq!(ds["id"], 1, "the page's link body names datasource 1");
    assert_eq!(ds["auth"], json!({"type": "bearer", "tokenSet": true}));
    let cluster: Value = serde_json::from_str(&block("body: cluster")).expect("cluster JSON");
    let (st, c) = Api::new(&base, &admin)
        .call("POST", "/v1/clusters", Some(cluster))
        .await;
    assert_eq!(st, 201, "{c}");
    assert!(
        c["token"]
            .as_str()
            .is_some_and(|t| t.starts_with("kerf_ct_")),
        "{c}"
    );
    assert_eq!(c["readiness"], Value::Null, "{c}");
    let link: Value = serde_json::from_str(&block("body: link")).expect("link JSON");
    let (st, v) = Api::new(&base, &admin)
        .call("PUT", "/v1/clusters/prod-east/datasource", Some(link))
        .await;
    assert_eq!(st, 200, "{v}");
    let (_, got) = Api::new(&base, &admin)
        .call("GET", "/v1/datasources/1", None)
        .await;
    assert_eq!(got["clusters"], json!(["prod-east"]), "{got}");
    assert!(!got.to_string().contains("REPLACE-WITH"), "{got}");
}

fn config_check(dir: &Path, toml: &str) -> String {
    let secrets = dir.join("secrets");
    for file in ["kerf-prometheus/token", "kerf-cluster-tokens/prod-east"] {
        let p = secrets.join(file);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        let value = if file.ends_with("prod-east") {
            format!("kerf_ct_{}", "c3".repeat(32))
        } else {
            "prom-token".into()
        };
        std::fs::write(&p, value).expect("secret");
        // Private, as the Helm chart mounts Secrets (0400): kerf refuses others' reads.
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o400);
        std::fs::set_permissions(&p, mode).expect("chmod");
    }
    let file = dir.join("kerf.toml");
    let toml = toml
        .replace("/etc/kerf/secrets", &secrets.display().to_string())
        .replace(
            "\"/data\"",
            &format!("{:?}", dir.join("data").display().to_string()),
        );
    std::fs::write(&file, toml).expect("write");
    let out = std::process::Command::new(bin())
        .args(["config", "check", "--config", &file.display().to_string()])
        .env_remove("KERF_CONFIG")
        .env_remove("KERF_LISTEN")
        .output()
        .expect("run kerf");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn the_pages_declarations_pass_config_check_in_kerf_toml_and_in_helm_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let said = config_check(dir.path(), &block("toml: declared"));
    assert!(
        said.ends_with("declares 1 datasource(s) and 1 cluster(s))"),
        "{said}"
    );

    let values = dir.path().join("values.yaml");
    std::fs::write(&values, block_after("With the Helm chart")).expect("values");
    let out = std::process::Command::new(crate::support::tools::helm())
        .args([
            "template",
            "kerf",
            concat!(env!("CARGO_MANIFEST_DIR"), "/packaging/helm/kerf"),
        ])
        .args([
            "-f",
            &values.display().to_string(),
            "--show-only",
            "templates/configmap.yaml",
        ])
        .output()
        .expect("helm template");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let map: Value = yaml_serde::from_slice(&out.stdout).expect("ConfigMap");
    let toml = map["data"]["kerf.toml"].as_str().expect("kerf.toml");
    let said = config_check(dir.path(), toml);
    assert!(
        said.ends_with("declares 1 datasource(s) and 1 cluster(s))"),
        "{said}"
    );
}

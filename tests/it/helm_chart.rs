//! The Helm chart (`packaging/helm/kerf`) with a real `helm` (built by
//! `scripts/ensure-helm.sh`, `HELM_BIN`): linted strictly, rendered, its kerf.toml
//! accepted by the real binary with the values it came from, its RBAC and CRDs exactly
//! the shipped ones, bad values refused in one line, and every rendered object accepted
//! by a server-side dry run on the real API server (`support::kube`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::tools::helm;
use crate::support::{bin, kube::control_plane};

const CHART: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/packaging/helm/kerf");

/// Values exercising every part of the chart: the fleet with secrets from a mounted
/// Secret and from a variable, integers that must stay integers, an Ingress.
const FULL: &str = r#"
config:
  log: { format: json, level: "info,kerf=debug" }
  http: { max_body_bytes: 2097152, shutdown_grace_seconds: 15 }
  notifications: { public_url: "https://kerf.example.com" }
fleet:
  datasources:
    - name: prometheus
      url: http://prometheus-operated.monitoring.svc:9090
      cluster_label: cluster
      step_seconds: 30
      auth: { type: bearer, token_file: /etc/kerf/secrets/kerf-prometheus/token }
      headers:
        - { name: X-Scope-OrgID, value: prod }
        - { name: X-Api-Key, value_env: PROMETHEUS_API_KEY }
  clusters:
    - name: prod-east
      display_name: "Production (east)"
      labels: { env: prod, "app.kubernetes.io/part-of": shop }
      datasource: prometheus
      token_file: /etc/kerf/secrets/kerf-cluster-tokens/prod-east
secretMounts:
  - name: kerf-prometheus
  - name: kerf-cluster-tokens
env:
  - name: PROMETHEUS_API_KEY
    valueFrom: { secretKeyRef: { name: kerf-prometheus, key: api-key } }
ingress:
  enabled: true
  className: nginx
  hosts: [{ host: kerf.example.com, paths: [{ path: /, pathType: Prefix }] }]
  tls: [{ secretName: kerf-tls, hosts: [kerf.example.com] }]
"#;

fn values_file(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("values.yaml");
    std::fs::write(&p, text).expect("values");
    p
}

/// `helm template` with `args`; the documents, or the failure's stderr.
fn template(args: &[&str]) -> Result<Vec<Value>, String> {
    let out = Command::new(helm())
        .args(["template", "kerf", CHART, "--namespace", "kerf"])
        .args(args)
        .output()
        .expect("run helm template");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).to_string());
    }
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    Ok(yaml_serde::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).expect("rendered YAML"))
        .filter(|v: &Value| !v.is_null())
        .collect())
}

fn kind<'a>(docs: &'a [Value], kind: &str) -> Option<&'a Value> {
    docs.iter().find(|d| d["kind"] == kind)
}

fn kerf_toml(docs: &[Value]) -> String {
    kind(docs, "ConfigMap").expect("ConfigMap")["data"]["kerf.toml"]
        .as_str()
        .expect("kerf.toml")
        .to_string()
}

#[test]
fn the_chart_lints_strictly_with_its_defaults_and_with_every_part_in_use() {
    let dir = tempfile::tempdir().expect("tempdir");
    let full = values_file(dir.path(), FULL).display().to_string();
    for extra in [
        &[][..],
        &["-f", &full][..],
        &["--set", "mode=all-in-one,config.agent.cluster=east"][..],
    ] {
        let out = Command::new(helm())
            .args(["lint", "--strict", CHART])
            .args(extra)
            .output()
            .expect("run helm lint");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{extra:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("1 chart(s) linted, 0 chart(s) failed"),
            "{text}"
        );
    }
}

#[test]
fn the_rendered_kerf_toml_is_accepted_by_kerf_with_the_values_it_came_from() {
    let dir = tempfile::tempdir().expect("tempdir");
    let docs =
        template(&["-f", &values_file(dir.path(), FULL).display().to_string()]).expect("renders");
    let toml = kerf_toml(&docs);
    // The mounted Secrets, as the pod would see them, under a temp dir.
    let secrets = dir.path().join("secrets");
    for (file, value) in [
        ("kerf-prometheus/token", "prom-token"),
        (
            "kerf-cluster-tokens/prod-east",
            &format!("kerf_ct_{}", "5a".repeat(32)),
        ),
    ] {
        let p = secrets.join(file);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, value).expect("secret");
        // The chart mounts Secrets with defaultMode 0400.
        let mode = std::fs::Permissions::from_mode(0o400);
        std::fs::set_permissions(&p, mode).expect("chmod");
    }
    let local = toml
        .replace("/etc/kerf/secrets", &secrets.display().to_string())
        .replace(
            "\"/data\"",
            &format!("{:?}", dir.path().join("data").display().to_string()),
        );
    let config = dir.path().join("kerf.toml");
    std::fs::write(&config, &local).expect("write");
    let run = |args: &[&str]| {
        Command::new(bin())
            .args(args)
            .args(["--config", &config.display().to_string()])
            .env("PROMETHEUS_API_KEY", "api-key")
            .env_remove("KERF_CONFIG")
            .env_remove("KERF_LISTEN")
            .output()
            .expect("run kerf")
    };
    let check = run(&["config", "check"]);
    let said = String::from_utf8_lossy(&check.stdout).to_string();
    assert!(
        check.status.success(),
        "{toml}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert_eq!(
        said.trim(),
        "configuration is valid (mode hub, listen 0.0.0.0:8080, declares 1 datasource(s) and 1 cluster(s))"
    );
    let printed = String::from_utf8_lossy(&run(&["config", "print"]).stdout).to_string();
    let effective: toml::Table = printed.parse().expect("printed config");
    assert_eq!(
        effective["http"]["max_body_bytes"].as_integer(),
        Some(2_097_152)
    );
    assert_eq!(effective["log"]["level"].as_str(), Some("info,kerf=debug"));
    let cluster = &effective["fleet"]["clusters"][0];
    assert_eq!(
        cluster["labels"]["app.kubernetes.io/part-of"].as_str(),
        Some("shop")
    );
    assert_eq!(
        effective["fleet"]["datasources"][0]["step_seconds"].as_integer(),
        Some(30)
    );

    let pod = &kind(&docs, "Deployment").expect("Deployment")["spec"]["template"];
    let c = &pod["spec"]["containers"][0];
    assert_eq!(c["image"], "ghcr.io/getkerf/kerf:0.1.0");
    assert_eq!(
        c["env"][0],
        serde_json::json!({"name": "KERF_CONFIG", "value": "/etc/kerf/kerf.toml"})
    );
    assert_eq!(c["env"][1]["name"], "PROMETHEUS_API_KEY");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["startupProbe"]["httpGet"]["path"], "/healthz");
    let mounts: Vec<&str> = c["volumeMounts"]
        .as_array()
        .expect("mounts")
        .iter()
        .filter_map(|m| m["mountPath"].as_str())
        .collect();
    assert_eq!(
        mounts,
        [
            "/etc/kerf/kerf.toml",
            "/data",
            "/tmp",
            "/etc/kerf/secrets/kerf-prometheus",
            "/etc/kerf/secrets/kerf-cluster-tokens"
        ]
    );
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    let claim = &kind(&docs, "PersistentVolumeClaim").expect("PVC");
    assert_eq!(claim["metadata"]["name"], "kerf-data");
    assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "2Gi");
    let ingress = kind(&docs, "Ingress").expect("Ingress");
    assert_eq!(
        ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"],
        "kerf"
    );
    assert!(
        kind(&docs, "ClusterRole").is_none(),
        "a hub needs no cluster rights"
    );

    // The pod restarts when the config changes, not otherwise.
    let checksum = |docs: &[Value]| {
        kind(docs, "Deployment").expect("Deployment")["spec"]["template"]["metadata"]["annotations"]
            ["checksum/config"]
            .clone()
    };
    let same =
        template(&["-f", &values_file(dir.path(), FULL).display().to_string()]).expect("renders");
    let changed = template(&[
        "-f",
        &values_file(dir.path(), FULL).display().to_string(),
        "--set",
        "config.http.shutdown_grace_seconds=16",
    ])
    .expect("renders");
    assert_eq!(checksum(&docs), checksum(&same));
    assert_ne!(checksum(&docs), checksum(&changed));
    let kept = template(&["--set", "persistence.existingClaim=kerf-old"]).expect("renders");
    assert!(kind(&kept, "PersistentVolumeClaim").is_none());
}

#[test]
fn all_in_one_brings_the_agents_cluster_role_and_crds_exactly_as_shipped() {
    let docs = template(&[
        "--set",
        "mode=all-in-one,config.agent.cluster=east",
        "--include-crds",
    ])
    .expect("renders");
    let shipped = crate::support::kube::manifests::documents("packaging/k8s/agent-rbac.yaml");
    let role = kind(&docs, "ClusterRole").expect("ClusterRole");
    assert_eq!(
        role["rules"], shipped[0]["rules"],
        "the chart's rules drifted from agent-rbac.yaml"
    );
    let binding = kind(&docs, "ClusterRoleBinding").expect("binding");
    assert_eq!(binding["subjects"][0]["name"], "kerf");
    assert_eq!(binding["subjects"][0]["namespace"], "kerf");
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    let crds = std::fs::read_to_string(format!("{CHART}/crds/crds.yaml")).expect("chart crds");
    let k8s = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/packaging/k8s/crds.yaml"
    ))
    .expect("crds");
    assert_eq!(
        crds, k8s,
        "packaging/helm/kerf/crds/crds.yaml drifted: copy packaging/k8s/crds.yaml"
    );
    assert!(kerf_toml(&docs).contains("mode = \"all-in-one\""));
    let agent = template(&[
        "--set",
        "mode=agent,config.agent.cluster=east,config.agent.hub_url=https://hub",
    ])
    .expect("renders");
    assert!(kind(&agent, "PersistentVolumeClaim").is_none() && kind(&agent, "Ingress").is_none());
}

#[test]
fn bad_values_fail_the_render_naming_what_to_change() {
    for (set, expected) in [
        (
            "mode=both",
            "kerf: mode must be hub, all-in-one or agent, not \"both\"",
        ),
        (
            "config.mode=agent",
            "kerf: config.mode is set by the chart; use .Values.mode",
        ),
        (
            "config.fleet.clusters=x",
            "kerf: config.fleet is set by the chart; use .Values.fleet",
        ),
        (
            "mode=all-in-one",
            "kerf: mode all-in-one needs config.agent.cluster",
        ),
        (
            "mode=agent,config.agent.cluster=c,fleet.clusters[0].name=c",
            "kerf: fleet declarations belong to the hub",
        ),
    ] {
        let err = template(&["--set", set]).expect_err(set);
        assert!(err.contains(expected), "{set}: {err}");
    }
}

/// `PATCH …?dryRun=All` (server-side apply) of one rendered object.
async fn dry_run(
    http: &reqwest::Client,
    server: &str,
    token: &str,
    ns: &str,
    doc: &Value,
) -> (u16, String) {
    let (api, kind) = (
        doc["apiVersion"].as_str().expect("apiVersion"),
        doc["kind"].as_str().expect("kind"),
    );
    let (plural, namespaced) = match kind {
        "ServiceAccount" => ("serviceaccounts", true),
        "ConfigMap" => ("configmaps", true),
        "PersistentVolumeClaim" => ("persistentvolumeclaims", true),
        "Service" => ("services", true),
        "Deployment" => ("deployments", true),
        "Ingress" => ("ingresses", true),
        "ClusterRole" => ("clusterroles", false),
        "ClusterRoleBinding" => ("clusterrolebindings", false),
        "CustomResourceDefinition" => ("customresourcedefinitions", false),
        other => panic!("the chart renders an unexpected kind {other}"),
    };
    let root = if api.contains('/') {
        format!("/apis/{api}")
    } else {
        format!("/api/{api}")
    };
    let scope = if namespaced {
        format!("/namespaces/{ns}")
    } else {
        String::new()
    };
    let name = doc["metadata"]["name"].as_str().expect("name");
    let url = format!(
        "{server}{root}{scope}/{plural}/{name}?dryRun=All&fieldManager=helm-test&force=true"
    );
    let resp = http
        .patch(url)
        .bearer_auth(token)
        .header("Content-Type", "application/apply-patch+yaml")
        .body(doc.to_string())
        .send()
        .await
        .expect("dry run");
    (
        resp.status().as_u16(),
        resp.text().await.unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn every_rendered_object_passes_a_server_side_dry_run_on_the_real_api_server() {
    let plane = control_plane();
    let admin = plane.admin().await;
    let ns = crate::support::kube::namespace(&admin, "helm-chart").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let full = values_file(dir.path(), FULL).display().to_string();
    // The README's Ingress: a host alone, its paths defaulting to `/`.
    let ingress = dir.path().join("ingress.yaml");
    std::fs::write(
        &ingress,
        "ingress:\n  enabled: true\n  hosts: [{ host: kerf.example.com }]\n",
    )
    .expect("values");
    let ingress = ingress.display().to_string();
    let http = reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(plane.pki.ca_pem.as_bytes()).expect("ca"),
        )
        .build()
        .expect("client");
    let token = &plane.pki.tokens.admin.token;
    for args in [
        vec!["-f", full.as_str(), "--namespace", ns.name.as_str()],
        vec![
            "--set",
            "mode=all-in-one,config.agent.cluster=east",
            "--include-crds",
            "--namespace",
            ns.name.as_str(),
        ],
        vec!["-f", ingress.as_str(), "--namespace", ns.name.as_str()],
    ] {
        let docs = template(&args).expect("renders");
        assert!(docs.len() >= 5, "{docs:?}");
        if let Some(ing) = kind(&docs, "Ingress") {
            assert_eq!(
                ing["spec"]["rules"][0]["http"]["paths"][0]["path"], "/",
                "{ing}"
            );
        }
        for doc in &docs {
            let (status, body) = dry_run(&http, &plane.server, token, &ns.name, doc).await;
            assert!(
                status == 200 || status == 201,
                "{} {}: {status} {body}",
                doc["kind"],
                doc["metadata"]["name"]
            );
        }
    }
}

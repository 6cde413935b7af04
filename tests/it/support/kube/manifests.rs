//! Installs what kerf ships for a cluster (`packaging/k8s/crds.yaml`,
//! `packaging/k8s/agent-rbac.yaml`) into the test control plane, as an admin would with
//! `kubectl apply`, so every test runs the agent with exactly the shipped CRDs and
//! ClusterRole; and the other projects' CRDs kerf reads (the VerticalPodAutoscaler's,
//! Argo Rollouts' and KEDA's ScaledObject, from their Go modules:
//! `scripts/ensure-crds.sh`).

use std::time::Duration;

use serde_json::Value;

/// The shipped manifests the tests install, in order.
pub const FILES: &[&str] = &["packaging/k8s/crds.yaml", "packaging/k8s/agent-rbac.yaml"];

/// `THIRD_PARTY_CRDS_DIR`, else what `scripts/ensure-crds.sh` prints: the directory of
/// the other projects' CRDs (from their Go modules, cached).
pub fn third_party_crds() -> std::path::PathBuf {
    if let Ok(dir) = std::env::var("THIRD_PARTY_CRDS_DIR") {
        return std::path::PathBuf::from(dir);
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ensure-crds.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .output()
        .expect("run scripts/ensure-crds.sh");
    assert!(
        out.status.success(),
        "scripts/ensure-crds.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    std::path::PathBuf::from(text.lines().last().expect("a path").trim())
}

/// Every document of `file` (relative to the repository, or absolute), as JSON.
pub fn documents(file: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    yaml_serde::Deserializer::from_str(&text)
        .map(|doc| {
            let v: Value = serde::Deserialize::deserialize(doc)
                .unwrap_or_else(|e| panic!("{file} is not valid YAML: {e}"));
            v
        })
        .filter(|v| !v.is_null())
        .collect()
}

fn collection(doc: &Value) -> String {
    let kind = doc["kind"].as_str().expect("kind");
    let api = doc["apiVersion"].as_str().expect("apiVersion");
    let plural = match kind {
        "CustomResourceDefinition" => "customresourcedefinitions",
        "ClusterRole" => "clusterroles",
        "ClusterRoleBinding" => "clusterrolebindings",
        other => panic!("the test installer does not know kind {other}"),
    };
    format!("/apis/{api}/{plural}")
}

/// Creates every document of [`FILES`] and of the other projects' CRDs, and waits until
/// the CRDs are established.
pub async fn install(server: &str, ca_pem: &str, admin_token: &str) {
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem.as_bytes()).expect("ca"))
        .build()
        .expect("client");
    let mut crds = Vec::new();
    let third_party = third_party_crds();
    let others: Vec<String> = ["vpa.yaml", "argo-rollout.yaml", "keda-scaledobject.yaml"]
        .iter()
        .map(|f| third_party.join(f).display().to_string())
        .collect();
    for file in FILES
        .iter()
        .copied()
        .chain(others.iter().map(String::as_str))
    {
        for doc in documents(file) {
            let url = format!("{server}{}", collection(&doc));
            let answer = client
                .post(&url)
                .bearer_auth(admin_token)
                .json(&doc)
                .send()
                .await
                .expect("create");
            let status = answer.status();
            let body = answer.text().await.unwrap_or_default();
            assert!(
                status.is_success(),
                "{file}: creating {url}: {status} {body}"
            );
            if doc["kind"] == "CustomResourceDefinition" {
                crds.push(format!(
                    "{url}/{}",
                    doc["metadata"]["name"].as_str().expect("name")
                ));
            }
        }
    }
    let what = format!("the CRDs established: {crds:?}");
    crate::support::eventually(&what, Duration::from_secs(30), async || {
        for url in &crds {
            let crd: Value = client
                .get(url)
                .bearer_auth(admin_token)
                .send()
                .await
                .expect("get CRD")
                .json()
                .await
                .expect("CRD json");
            let established = crd["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            if !established {
                return Err(crd);
            }
        }
        Ok(())
    })
    .await;
}

//! The hub of the agent benchmark: the real `kerf` binary (hub mode) in its own process
//! on a temp data dir, its cluster, policy and recommendations written beforehand
//! through kerf's own operations and store (as a run writes them), reached over HTTP as
//! a remote agent reaches it.

use std::sync::Arc;
use std::time::Duration;

use kerf::agent::http_hub::HttpHub;
use kerf::store::{ChunkWrite, NewRecommendation, Store, StoreOptions, WorkloadSeen};
use serde_json::json;

use crate::support::Kerf;

pub struct HubProcess {
    /// Stopped (killed) before the data dir goes.
    _kerf: Kerf,
    pub url: String,
    pub token: String,
    /// The hub's store, opened beside the hub process (as a run writes it).
    store: Store,
    /// The effective-policy identity of each namespace's workloads.
    identities: std::collections::BTreeMap<String, String>,
    _dir: tempfile::TempDir,
}

impl HubProcess {
    /// Writes a new recommendation for each of `items` (as a run would), suggesting
    /// `1/divisor` of its request.
    pub async fn recommend(&self, cluster: &str, items: &[Seeded], divisor: f64) {
        let now = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
        let mut by_identity: std::collections::BTreeMap<&str, Vec<Seeded>> = Default::default();
        for w in items {
            by_identity
                .entry(&self.identities[&w.namespace])
                .or_default()
                .push(w.clone());
        }
        for (identity, group) in by_identity {
            write(&self.store, cluster, &group, identity, now, divisor).await;
        }
    }

    pub fn client(&self, cluster: &str) -> Arc<HttpHub> {
        Arc::new(
            HttpHub::new(
                &self.url,
                cluster,
                self.token.clone(),
                None,
                Duration::from_secs(120),
            )
            .expect("hub client"),
        )
    }
}

/// One workload to recommend for: namespace, kind, name, and `app`'s current CPU request
/// (millicores) and memory request (bytes).
#[derive(Clone)]
pub struct Seeded {
    pub namespace: String,
    pub name: String,
    pub cpu: u64,
    pub memory: u64,
}

fn ctx() -> kerf::events::config_change::AuditContext {
    kerf::commands::operator("bench")
}

async fn write(
    store: &Store,
    cluster: &str,
    items: &[Seeded],
    identity: &str,
    now: i64,
    divisor: f64,
) {
    let mut chunk = ChunkWrite {
        run_id: format!("bench-{identity}"),
        now_ms: now,
        ..Default::default()
    };
    for w in items {
        let id = kerf::runs::workload::workload_id(cluster, &w.namespace, "Deployment", &w.name);
        // A share of the request: a change worth making.
        let setting = |v: f64| json!({ "current": null, "suggested": v, "confidence": 90 });
        let summary = json!({
            "containers": [{ "name": "app",
                "cpu": { "requests": setting(w.cpu as f64 / divisor), "dataQuality": "available", "coverage": 1.0 },
                "memory": { "requests": setting(w.memory as f64 / divisor), "dataQuality": "available", "coverage": 1.0 } }],
            "confidence": 90, "coverage": 1.0, "dataQuality": "available", "notices": [],
            "coveredSeconds": 8 * 86_400,
        });
        chunk.analyzed.push((
            WorkloadSeen {
                id: id.clone(),
                cluster: cluster.into(),
                namespace: w.namespace.clone(),
                kind: "Deployment".into(),
                name: w.name.clone(),
                uid: String::new(),
                replicas: Some(1),
                labels: "{}".into(),
                current: "[]".into(),
            },
            NewRecommendation {
                id: uuid::Uuid::new_v4().to_string(),
                workload_id: id,
                run_id: chunk.run_id.clone(),
                created_at: now,
                policy_version: "bench".into(),
                settings_identity: identity.into(),
                cost_delta: None,
                summary: summary.to_string(),
                analysis: "{}".into(),
                has_changes: true,
                data_quality: "available".into(),
                notices: String::new(),
                confidence: 90,
                risk: 0,
                change_tolerance: 0.05,
            },
        ));
    }
    store
        .writing(move |tx| tx.write_chunk(&chunk))
        .await
        .expect("recommendations");
}

/// Starts a hub for `cluster` whose policy puts namespaces matching `auto` in
/// `auto-patch` (the rest stay in `audit`), with a recommendation for every item.
pub async fn start(cluster: &str, auto: &str, items: &[Seeded]) -> HubProcess {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 10_000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, 0).expect("store");
    let now = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
    let token =
        kerf::fleet::clusters::register(&store, now, ctx(), cluster.into(), Default::default())
            .await
            .expect("cluster")
            .token;
    let policy: kerf::policy::PolicySpec = serde_json::from_value(json!({
        "name": "bench-auto", "selector": { "namespaces": [auto] },
        "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
        "guardrails": { "learningPeriod": "1d", "minConfidence": 50 },
    }))
    .expect("policy");
    kerf::fleet::policies::create(&store, now, ctx(), policy)
        .await
        .expect("policy");
    write(&store, cluster, items, "pending", now, 2.0).await;
    let kerf = Kerf::builder(dir.path())
        .env("KERF_LOG", "warn,kerf::server=info")
        .start();
    let mut hub = HubProcess {
        url: kerf.url(""),
        _kerf: kerf,
        token,
        store,
        identities: Default::default(),
        _dir: dir,
    };
    // Every workload has the same effective policy identity per mode: read them from
    // the config feed and store the recommendations under them.
    let feed: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/v1/clusters/{cluster}/config", hub.url))
        .bearer_auth(&hub.token)
        .send()
        .await
        .expect("config feed")
        .json()
        .await
        .expect("json");
    let identity_of = |ns: &str| -> String {
        feed["workloads"]
            .as_array()
            .expect("workloads")
            .iter()
            .find(|w| w["namespace"] == ns)
            .and_then(|w| w["policyIdentity"].as_str())
            .expect("identity")
            .to_string()
    };
    for w in items {
        if !hub.identities.contains_key(&w.namespace) {
            let identity = identity_of(&w.namespace);
            hub.identities.insert(w.namespace.clone(), identity);
        }
    }
    hub.recommend(cluster, items, 2.0).await;
    hub
}

/// The process's resident and peak memory, in MiB.
pub fn rss() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

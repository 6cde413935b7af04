//! `kerf demo`: the whole appliance on the built-in demo fleet. It makes an ephemeral
//! data dir (unless `--data-dir` names one), registers the demo clusters, creates an
//! admin user for the UI and an admin API token and the demo's policies, serves like
//! `kerf serve` with every cluster reading the demo datasource and one in-process agent
//! per cluster acting on the sim's in-process cluster (as `all-in-one` does on a real
//! one), starts the first recommendation run at once, prints the URL and the token, and
//! serves until Ctrl-C or SIGTERM. The ephemeral dir is removed on the way out.

use std::path::PathBuf;

use std::sync::Arc;

use crate::auth::accounts::{self, NewTokenInput, NewUserInput};
use crate::auth::Authenticator;
use crate::clock::{Clock, SystemClock};
use crate::commands::{self, Exit};
use crate::config::{Config, Mode};
use crate::datasource::{Datasource, DemoFleet};
use crate::fleet::clusters;
use crate::operation::OpError;
use crate::policy::PolicySpec;
use crate::runs::recommender::RECOMMENDER_KEY;
use crate::runs::saved_settings::save_recommender;
use crate::runs::{RecommenderSettings, Trigger};
use crate::server::Started;
#[cfg(feature = "agent")]
use crate::sim::in_process::SimCluster;
use crate::sim::live::Live;
use crate::store::StoreError;

/// The demo fleet's seed: every demo shows the same fleet.
pub const DEMO_SEED: u64 = 42;

/// Runs the demo. `explicit_data_dir`: the user named the data dir (kept on exit);
/// `ready_file`: where to say it is ready, after the banner.
pub fn run(
    mut config: Config,
    explicit_data_dir: bool,
    ready_file: Option<PathBuf>,
) -> Result<(), Exit> {
    let ephemeral: Option<PathBuf> = if explicit_data_dir {
        None
    } else {
        let dir = std::env::temp_dir().join(format!("kerf-demo-{}", uuid::Uuid::new_v4()));
        config.data_dir = dir.clone();
        Some(dir)
    };
    config.mode = Mode::Hub;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Exit::runtime)?;
    let credentials = runtime.block_on(prepare(&config))?;
    let data_dir = config.data_dir.clone();
    let live = Live::default();
    let source = Datasource::demo_live(DEMO_SEED, live.clone());
    let result = runtime.block_on(crate::server::run_with(
        config,
        Some(source),
        move |state, jobs| agents(state, jobs, &live),
        move |s| ready(s, credentials, data_dir, explicit_data_dir, ready_file),
    ));
    drop(runtime);
    if let Some(dir) = ephemeral {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result.map_err(Exit::runtime)
}

/// Migrates, registers the demo clusters, turns on leak detection (the demo has a
/// leak to show) and makes the admin login and API token, through the same operations
/// as the API and the command line (audited as `kerf demo`). A kept data dir from an
/// earlier demo keeps its clusters, settings and user.
async fn prepare(config: &Config) -> Result<Credentials, Exit> {
    let store = commands::open_store(config)?;
    let now = SystemClock.now_ms();
    let ctx = || commands::operator("kerf demo");
    let taken = |e: &OpError| matches!(e, OpError::Store(StoreError::Conflict(_)));
    for name in DemoFleet::clusters() {
        match clusters::register(&store, now, ctx(), name.to_string(), Default::default()).await {
            Err(e) if !taken(&e) => return Err(Exit::runtime(e)),
            _ => {}
        }
    }
    if store
        .reading(|r| r.setting(RECOMMENDER_KEY))
        .await
        .map_err(Exit::runtime)?
        .is_none()
    {
        let mut settings = RecommenderSettings::default();
        settings.policy.memory.leak_detection = Some(Default::default());
        // Often, so the values the demo's agents apply show in the next run within minutes.
        settings.schedule = "*/10 * * * *".into();
        save_recommender(&store, now, ctx(), settings)
            .await
            .map_err(Exit::runtime)?;
    }
    // The clusters' own policies, as their agents will report them (sim::git_policies).
    for cluster in DemoFleet::clusters() {
        let report = crate::wire::cluster_policies::ClusterPolicies {
            policies: crate::sim::git_policies::objects(cluster)
                .into_iter()
                .map(
                    |(name, spec)| crate::wire::cluster_policies::ClusterPolicyObject {
                        name: name.into(),
                        uid: crate::sim::git_policies::uid(DEMO_SEED, cluster, name),
                        generation: 1,
                        spec,
                    },
                )
                .collect(),
        };
        crate::fleet::cluster_policies::report(&store, now, cluster, report)
            .await
            .map_err(Exit::runtime)?;
    }
    for spec in demo_policies() {
        match crate::fleet::policies::create(&store, now, ctx(), spec).await {
            Err(e) if !taken(&e) => return Err(Exit::runtime(e)),
            _ => {}
        }
    }
    let input = NewTokenInput {
        name: "demo".into(),
        role: "admin".into(),
        ..Default::default()
    };
    let token = accounts::create_token(&store, now, ctx(), input)
        .await
        .map_err(Exit::runtime)?
        .value;
    let auth = Authenticator::new(&config.auth, Arc::new(SystemClock)).map_err(Exit::runtime)?;
    let input = NewUserInput {
        username: DEMO_USER.into(),
        role: Some("admin".into()),
        ..Default::default()
    };
    match accounts::create_user(&store, &auth, now, ctx(), input).await {
        Ok(made) => Ok(Credentials {
            token,
            login: made.one_time_password,
        }),
        // A kept data dir from an earlier demo already has the user; its password stands.
        Err(e) if taken(&e) => Ok(Credentials { token, login: None }),
        Err(e) => Err(Exit::runtime(e)),
    }
}

/// One in-process agent per demo cluster, each acting on its in-process cluster (the
/// catalogue's workloads) and reporting to the hub in process, as in `all-in-one`.
#[cfg(feature = "agent")]
fn agents(state: &crate::api::AppState, jobs: &mut crate::jobs::Jobs, live: &Live) {
    for cluster in DemoFleet::clusters() {
        let sim = match SimCluster::demo(cluster, DEMO_SEED, state.clock.clone(), live.clone()) {
            Ok(Some(sim)) => sim,
            Ok(None) => continue,
            Err(e) => {
                tracing::error!(%cluster, error = %e, "cannot build the demo cluster");
                continue;
            }
        };
        let options = crate::agent::Options {
            cluster: cluster.to_string(),
            namespaces: Vec::new(),
            agent_version: env!("CARGO_PKG_VERSION").into(),
        };
        // Job names are static; two short names, made once per demo.
        let name: &'static str = Box::leak(format!("agent:{cluster}").into_boxed_str());
        crate::server::agent::spawn_in_process(jobs, name, state, sim, options, "kerf demo");
    }
}

/// Without the agent the demo only recommends.
#[cfg(not(feature = "agent"))]
fn agents(_: &crate::api::AppState, _: &mut crate::jobs::Jobs, _: &Live) {}

/// The demo's policies: some workloads change on their own (in place in `web` of
/// demo-east, by rollout in `search` of demo-west, at night in `analytics`; in place in
/// `guardrails` of demo-east, whose workloads each meet one of the agent's guardrails,
/// `ledger-db` by rollout), the rest are recommended only (the default, `audit`).
pub fn demo_policies() -> Vec<PolicySpec> {
    let doc = |v: serde_json::Value| -> PolicySpec {
        serde_json::from_value(v).expect("the demo's policies are valid documents")
    };
    let engine_default = serde_json::to_value(
        crate::policy::presets::get("engine-default")
            .expect("engine-default is a preset")
            .analysis,
    )
    .expect("a policy serializes");
    let guardrails =
        serde_json::json!({ "learningPeriod": "3d", "minConfidence": 50, "cooldown": "6h" });
    vec![
        doc(serde_json::json!({
            "name": "demo-autopilot-web",
            "description": "web on demo-east: rightsized automatically, in place",
            "priority": 10,
            "selector": { "clusters": ["demo-east"], "namespaces": ["web"] },
            "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
            "guardrails": guardrails,
            "apply": { "strategy": "in-place" },
        })),
        doc(serde_json::json!({
            "name": "demo-autopilot-search",
            "description": "search on demo-west: rightsized automatically, by rollout",
            "priority": 10,
            "selector": { "clusters": ["demo-west"], "namespaces": ["search"] },
            "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
            "guardrails": guardrails,
            "apply": { "strategy": "rollout" },
        })),
        doc(serde_json::json!({
            "name": "demo-guardrails",
            "description": "guardrails on demo-east: applied automatically in place, where each workload meets one of the agent's guardrails",
            "priority": 10,
            "selector": { "clusters": ["demo-east"], "namespaces": [crate::sim::guarded::NAMESPACE] },
            "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
            // The engine's own defaults, which change CPU limits too: each workload's
            // guardrail is met by the change its shape asks for (sim::guarded's table).
            "analysis": engine_default,
            "guardrails": {
                "learningPeriod": "3d", "minConfidence": 50, "cooldown": "6h",
                "rollback": { "oomKills": 1, "restarts": 3, "throttlingRatio": 0.25, "watchDuration": "15m" },
            },
            "apply": { "strategy": "in-place" },
        })),
        doc(serde_json::json!({
            "name": "demo-guardrails-rollout",
            "description": "ledger-db and slow-start: by rollout (ledger-db's OnDelete pods evicted under a PodDisruptionBudget; slow-start's new pods never become Ready, so the rollout is rolled back)",
            "priority": 20,
            "selector": { "clusters": ["demo-east"], "namespaces": [crate::sim::guarded::NAMESPACE], "names": ["ledger-db", "slow-start"] },
            "apply": { "strategy": "rollout" },
        })),
        doc(serde_json::json!({
            "name": "demo-guardrails-batch",
            "description": "leaky-worker: changed even on thin evidence, because the health watch rolls a change back that does not help",
            "priority": 20,
            "selector": { "clusters": ["demo-east"], "namespaces": [crate::sim::guarded::NAMESPACE], "names": ["leaky-worker"] },
            "guardrails": { "minConfidence": 0 },
        })),
        doc(serde_json::json!({
            "name": "demo-nightly-analytics",
            "description": "analytics on demo-west: changes wait for the 02:00 UTC window",
            "priority": 10,
            "selector": { "clusters": ["demo-west"], "namespaces": ["analytics"] },
            "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
            "guardrails": guardrails,
            "apply": { "strategy": "deferred",
                       "maintenanceWindows": [{ "cron": "0 2 * * *", "duration": "1h", "timezone": "UTC" }] },
        })),
    ]
}

/// The demo's UI login name.
pub const DEMO_USER: &str = "admin";

/// What the demo prints for people and scripts.
struct Credentials {
    token: String,
    /// The admin user's generated password, when this run created the user (printed only
    /// this once; it stays valid until changed).
    login: Option<String>,
}

async fn ready(
    s: Started,
    credentials: Credentials,
    data_dir: PathBuf,
    kept: bool,
    ready_file: Option<PathBuf>,
) {
    // Runs are recorded before the banner, so whoever reads it sees them in /v1/runs.
    for cluster in DemoFleet::clusters() {
        match s.state.runs.start(cluster, Trigger::Manual).await {
            Ok((run, _)) => tracing::info!(%cluster, run = %run.id, "first demo run started"),
            Err(e) => tracing::error!(%cluster, error = %e, "cannot start the first demo run"),
        }
    }
    let lifetime = if kept { "kept" } else { "removed on exit" };
    println!("kerf demo is running on the built-in demo fleet");
    let url = format!("http://{}/", s.addr);
    println!("url: {url}");
    match &credentials.login {
        Some(password) => println!("ui login: {DEMO_USER} / {password}"),
        None => println!("ui login: {DEMO_USER} (password from the earlier demo in this data dir)"),
    }
    println!("admin token: {}", credentials.token);
    println!("data dir: {} ({lifetime})", data_dir.display());
    println!("the first recommendation run has started; press Ctrl-C to stop");
    // After the banner, so a script that waits for the file can read the token too.
    crate::server::ready_file::announce(ready_file.as_deref(), s.addr, Some(&url));
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_demo_clusters_own_policies_are_valid_and_each_object_has_its_own_uid() {
        for cluster in crate::sim::catalogue::CLUSTERS {
            for (name, spec) in crate::sim::git_policies::objects(cluster) {
                let doc = crate::policy::from_cluster::document_of(name, &spec);
                assert!(doc.is_ok(), "{cluster}/{name}: {doc:?}");
            }
        }
        let uid = |c: &str, n: &str| crate::sim::git_policies::uid(super::DEMO_SEED, c, n);
        assert_ne!(uid("demo-east", "x"), uid("demo-west", "x"));
        assert_eq!(uid("demo-west", "x"), uid("demo-west", "x"));
    }
}

//! The run engine on the real demo fleet with an injected clock: what a run stores, how
//! a partial run keeps the last good recommendation and marks workloads stale, how
//! retention prunes, and how one failing cluster leaves the others alone.

use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::analysis::Series;
use crate::clock::ManualClock;
use crate::datasource::Datasource;
use crate::datasource::{CollectPlan, Collection, DatasourceError, TestReport, UsageResource};
use crate::runs::progress::ActiveRuns;
use crate::runs::{RunError, RunStatus, Runs, Trigger};
use crate::store::{self, WorkloadFilter, WorkloadRow};

const T0: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    clock: Arc<ManualClock>,
    active: ActiveRuns,
}

fn fixture(clusters: &[&str]) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = store::StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, T0).expect("store");
    for (i, name) in clusters.iter().enumerate() {
        let digest = format!("digest-{i}");
        store
            .writing_blocking(|tx| {
                tx.insert_cluster(
                    &store::NewCluster {
                        name,
                        token_sha256: &digest,
                    },
                    &Default::default(),
                    T0,
                )
            })
            .expect("cluster");
    }
    Fixture {
        _dir: dir,
        store,
        clock: Arc::new(ManualClock::new(T0)),
        active: ActiveRuns::default(),
    }
}

fn settings(retention_days: u32) -> RecommenderSettings {
    let mut s = RecommenderSettings {
        lookback_seconds: 3 * 86_400,
        retention_days,
        ..Default::default()
    };
    s.policy.memory.leak_detection = Some(Default::default());
    s.validated().expect("valid")
}

/// A datasource that answers like the demo fleet but loses one workload and returns
/// unusable memory samples for another — what a flaky backend does.
struct Flaky {
    inner: Datasource,
    lose: &'static str,
    corrupt: &'static str,
}

impl Source for Flaky {
    async fn plan(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<CollectPlan, DatasourceError> {
        self.inner.plan(scope, window).await
    }

    async fn collect_group(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> Result<Collection, DatasourceError> {
        let mut c = self.inner.collect_group(plan, index).await?;
        c.workloads.retain(|w| w.name != self.lose);
        c.input.containers.retain(|x| x.target.name != self.lose);
        for x in c
            .input
            .containers
            .iter_mut()
            .filter(|x| x.target.name == self.corrupt)
        {
            for s in &mut x.memory.series {
                for sample in &mut s.samples {
                    sample.value = -1.0;
                }
            }
        }
        Ok(c)
    }

    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: &crate::workload::WorkloadKey,
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        self.inner
            .usage(scope, workload, container, resource, window)
            .await
    }

    async fn test(&self, scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        self.inner.test(scope).await
    }
}

async fn run_with<S: Source>(
    f: &Fixture,
    cluster: &str,
    s: &RecommenderSettings,
    source: S,
) -> RunRecord {
    let id = uuid::Uuid::new_v4().to_string();
    let mut run = new_record(id.clone(), cluster, Trigger::Manual, f.clock.now_ms(), s);
    let first = run.clone();
    run.seq = f
        .store
        .writing(move |tx| tx.insert_run(&first))
        .await
        .expect("insert run");
    let clock: Arc<dyn Clock> = f.clock.clone();
    let inputs = RunInputs {
        store: f.store.clone(),
        clock,
        settings: s.clone(),
        pricing: Pricing::default(),
        policies: {
            let (name, default) = (
                cluster.to_string(),
                serde_json::to_value(&s.policy).expect("policy json"),
            );
            f.store
                .reading(move |r| r.policy_set(Some(&name), default))
                .await
                .expect("policies")
        },
        progress: f.active.reserve(cluster, &id).expect("free"),
    };
    let scope = ClusterScope {
        cluster: cluster.into(),
        selector_label: None,
        selector_value: None,
    };
    execute(&inputs, run, Ok((source, scope))).await
}

/// The effective-policy identity of a workload no policy selects.
fn default_identity(s: &RecommenderSettings) -> String {
    let set = kerf_policy_set(s);
    set.resolve("x", &Default::default(), 0).identity
}

fn kerf_policy_set(s: &RecommenderSettings) -> crate::policy::PolicySet {
    crate::policy::PolicySet {
        default_analysis: serde_json::to_value(&s.policy).expect("policy json"),
        ..Default::default()
    }
}

async fn workloads(f: &Fixture, cluster: &str) -> Vec<WorkloadRow> {
    let filter = WorkloadFilter {
        cluster: Some(cluster.into()),
        limit: 500,
        ..Default::default()
    };
    f.store
        .reading(move |r| r.list_workloads(&filter))
        .await
        .expect("list")
        .items
}

async fn recommendation(f: &Fixture, id: String) -> Option<store::RecommendationRow> {
    f.store
        .reading(move |r| r.recommendation(&id))
        .await
        .expect("read")
}

async fn stored_run(f: &Fixture, id: String) -> Option<RunRecord> {
    f.store.reading(move |r| r.run(&id)).await.expect("read")
}

fn named<'a>(ws: &'a [WorkloadRow], name: &str) -> &'a WorkloadRow {
    ws.iter()
        .find(|w| w.seen.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

async fn summary(f: &Fixture, w: &WorkloadRow) -> (Value, Value) {
    let rec = recommendation(f, w.latest_rec_id.clone().expect("has one"))
        .await
        .expect("exists");
    (
        serde_json::from_str(&rec.summary).expect("summary json"),
        serde_json::from_str(&rec.analysis).expect("analysis json"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_demo_run_stores_every_workload_with_identity_evidence_and_the_expected_advice() {
    let f = fixture(&["demo-east"]);
    let s = settings(30);
    let run = run_with(&f, "demo-east", &s, Datasource::demo(7)).await;
    assert_eq!(run.status, RunStatus::Succeeded, "{}", run.errors);
    assert!(run.workloads_total >= 25, "{}", run.workloads_total);
    assert_eq!(run.recommendations, run.workloads_total);
    assert_eq!(run.workloads_done, run.workloads_total);
    assert_eq!(stored_run(&f, run.id.clone()).await.unwrap(), run);
    let ws = workloads(&f, "demo-east").await;
    assert_eq!(ws.len() as i64, run.workloads_total);
    for w in &ws {
        let rec = recommendation(&f, w.latest_rec_id.clone().unwrap())
            .await
            .unwrap();
        assert_eq!(rec.settings_identity, default_identity(&s));
        // Batch work runs the engine under the batch evidence rules (`runs::batch`).
        let batch = crate::datasource::mapping::pods::is_batch(&w.seen.kind);
        assert_eq!(
            rec.policy_version == s.policy_version(),
            !batch,
            "{}",
            w.seen.name
        );
        assert_eq!(rec.run_id, run.id);
        assert!(!w.stale);
    }
    // Over-provisioned: the CPU request comes down and the estimate is a saving.
    let catalog = named(&ws, "catalog");
    let (sum, analysis) = summary(&f, catalog).await;
    let cpu = &sum["containers"][0]["cpu"]["requests"];
    assert!(
        cpu["suggested"].as_f64().unwrap() < cpu["current"].as_f64().unwrap(),
        "{sum}"
    );
    assert!(catalog.cost_delta.unwrap() < 0.0 && catalog.monthly_savings > 0.0);
    assert!(
        analysis["results"][0]["decisionTrace"].is_object(),
        "evidence kept whole"
    );
    // OOM-killed: memory goes up, the notice is filterable.
    let ledger = named(&ws, "ledger");
    let (sum, _) = summary(&f, ledger).await;
    let mem = &sum["containers"][0]["memory"]["requests"];
    assert!(
        mem["suggested"].as_f64().unwrap() > mem["current"].as_f64().unwrap(),
        "{sum}"
    );
    assert!(
        ledger.notices.contains(",oom-kill-detected,"),
        "{}",
        ledger.notices
    );
    // The slow leak is flagged.
    assert!(named(&ws, "ingest-worker")
        .notices
        .contains(",potential-memory-leak,"));
    // Too little history: stored, but no change and the reason says why.
    let flags = named(&ws, "feature-flags");
    assert!(!flags.has_changes);
    assert_eq!(flags.confidence, -1);
    // Kubernetes' own namespace is left out, and the run says so.
    assert!(ws.iter().all(|w| w.seen.namespace != "kube-system"));
    let collect: Value = serde_json::to_value(&run.collect_stats).expect("collect");
    assert_eq!(
        collect["excluded"],
        serde_json::json!({ "namespaces": ["kube-system"], "workloads": 1 })
    );
    // The HPA-scaled storefront: flagged, with the target that keeps its scaling point.
    let store = named(&ws, "storefront");
    assert!(
        store.notices.contains(",hpa-cpu-utilization,"),
        "{}",
        store.notices
    );
    let (sum, _) = summary(&f, store).await;
    let hpa = &sum["hpa"];
    assert_eq!(hpa["cpuTargetUtilization"], 70.0, "{sum}");
    let (mut now, mut next) = (0.0, 0.0);
    for c in sum["containers"].as_array().expect("containers") {
        let r = &c["cpu"]["requests"];
        let cur = r["current"]
            .as_f64()
            .unwrap_or_else(|| match c["name"].as_str() {
                Some("proxy") => 100.0,
                _ => 500.0,
            });
        now += cur;
        next += r["suggested"].as_f64().unwrap_or(cur);
    }
    assert_eq!(
        hpa["coordinatedCpuTarget"],
        (70.0 * now / next).round(),
        "{sum}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_partial_run_keeps_the_last_good_recommendation_and_marks_workloads_stale() {
    let f = fixture(&["demo-east"]);
    let s = settings(30);
    let first = run_with(&f, "demo-east", &s, Datasource::demo(7)).await;
    let before = workloads(&f, "demo-east").await;
    f.clock.advance(HOUR);
    let flaky = Flaky {
        inner: Datasource::demo(7),
        lose: "catalog",
        corrupt: "ledger",
    };
    let second = run_with(&f, "demo-east", &s, flaky).await;
    assert_eq!(second.status, RunStatus::Partial, "{}", second.errors);
    assert_eq!(second.workloads_failed, 1);
    assert_eq!(second.workloads_stale, 2, "the failed one and the lost one");
    assert_eq!(second.recommendations, first.recommendations - 2);
    assert!(
        second
            .errors
            .to_string()
            .contains("payments/Deployment/ledger"),
        "{}",
        second.errors
    );
    let after = workloads(&f, "demo-east").await;
    for name in ["catalog", "ledger"] {
        let (b, a) = (named(&before, name), named(&after, name));
        assert!(a.stale, "{name} is stale");
        assert_eq!(
            a.latest_rec_id, b.latest_rec_id,
            "{name} keeps its last good one"
        );
        assert_eq!(a.stale_since, Some(T0 + HOUR));
    }
    assert_eq!(
        named(&after, "catalog").stale_reason.as_deref(),
        Some(ABSENT_REASON)
    );
    assert!(named(&after, "ledger")
        .stale_reason
        .as_deref()
        .unwrap()
        .contains("finite"));
    let fresh = named(&after, "postgres");
    assert!(!fresh.stale);
    assert_ne!(
        fresh.latest_rec_id,
        named(&before, "postgres").latest_rec_id
    );
    // The next good run clears the marks.
    f.clock.advance(HOUR);
    let third = run_with(&f, "demo-east", &s, Datasource::demo(7)).await;
    assert_eq!(third.status, RunStatus::Succeeded);
    assert!(workloads(&f, "demo-east").await.iter().all(|w| !w.stale));
}

#[tokio::test(flavor = "multi_thread")]
async fn retention_prunes_old_history_but_keeps_each_workloads_latest_recommendation() {
    let f = fixture(&["demo-east"]);
    let s = settings(1);
    let first = run_with(&f, "demo-east", &s, Datasource::demo(7)).await;
    f.clock.advance(2 * 24 * HOUR);
    let flaky = Flaky {
        inner: Datasource::demo(7),
        lose: "catalog",
        corrupt: "none",
    };
    let second = run_with(&f, "demo-east", &s, flaky).await;
    assert_eq!(second.status, RunStatus::Succeeded);
    let history = |id: String| {
        let store = f.store.clone();
        async move {
            store
                .reading(move |r| r.list_recommendations(&id, None, 50, false))
                .await
                .unwrap()
                .items
                .len()
        }
    };
    let ws = workloads(&f, "demo-east").await;
    assert_eq!(history(named(&ws, "postgres").seen.id.clone()).await, 2);
    super::super::retention::prune(&f.store, f.clock.now_ms(), s.retention_ms()).await;
    assert_eq!(
        history(named(&ws, "postgres").seen.id.clone()).await,
        1,
        "old one pruned"
    );
    let catalog = named(&ws, "catalog");
    assert_eq!(
        history(catalog.seen.id.clone()).await,
        1,
        "an old latest one is kept"
    );
    assert!(recommendation(&f, catalog.latest_rec_id.clone().unwrap())
        .await
        .is_some());
    assert!(stored_run(&f, first.id).await.is_none(), "old run pruned");
    assert!(stored_run(&f, second.id).await.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_the_datasource_cannot_serve_fails_alone_and_runs_never_overlap() {
    let f = fixture(&["demo-east", "nowhere"]);
    let clock: Arc<dyn Clock> = f.clock.clone();
    let runs = Runs::new(f.store.clone(), clock).with_source(Datasource::demo(7));
    let (east, east_task) = runs
        .start("demo-east", Trigger::Manual)
        .await
        .expect("starts");
    match runs.start("demo-east", Trigger::Manual).await {
        Err(RunError::AlreadyRunning { run_id, .. }) => assert_eq!(run_id, east.id),
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.0)),
    }
    let failed = runs
        .run_to_end("nowhere", Trigger::Manual)
        .await
        .expect("runs");
    assert_eq!(failed.status, RunStatus::Failed);
    assert!(
        failed.errors.to_string().contains("no cluster"),
        "{}",
        failed.errors
    );
    let east = east_task.await.expect("task");
    assert_eq!(east.status, RunStatus::Succeeded);
    assert!(runs.active().all().is_empty(), "slots freed");
    assert!(matches!(
        runs.start("unregistered", Trigger::Manual).await,
        Err(RunError::UnknownCluster(_))
    ));
}

#[test]
fn windows_end_on_the_step_grid_and_span_the_lookback() {
    let s = settings(30);
    let w = window_for(T0 + 59_999, &s);
    assert_eq!(w.end_ms, T0);
    assert_eq!(w.end_ms - w.start_ms, 3 * 86_400_000);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_workload_is_analyzed_under_its_effective_policy_and_records_its_identity() {
    let f = fixture(&["demo-east"]);
    let s = settings(30);
    let spec: crate::policy::PolicySpec = serde_json::from_value(serde_json::json!({
        "name": "catalog-p50",
        "selector": {"names": ["catalog"]},
        "analysis": {"cpu": {"percentile": 50}},
    }))
    .expect("spec");
    f.store
        .writing(move |tx| {
            let by = crate::store::policies::Author {
                actor: "{}".into(),
                reason: None,
            };
            tx.create_policy(&spec, &by, 0)
        })
        .await
        .expect("policy");
    let run = run_with(&f, "demo-east", &s, Datasource::demo(7)).await;
    assert_eq!(run.status, RunStatus::Succeeded, "{}", run.errors);
    let ws = workloads(&f, "demo-east").await;
    for w in &ws {
        let rec = recommendation(&f, w.latest_rec_id.clone().unwrap())
            .await
            .unwrap();
        let default = rec.settings_identity == default_identity(&s);
        let batch = crate::datasource::mapping::pods::is_batch(&w.seen.kind);
        let engine_default = rec.policy_version == s.policy_version() || batch;
        if w.seen.name == "catalog" {
            assert!(!default && !engine_default, "catalog used its policy");
        } else {
            assert!(
                default && engine_default,
                "{} kept the defaults",
                w.seen.name
            );
        }
    }
}

/// Group failures, whole and mid-stream.
#[path = "engine_group_tests.rs"]
mod groups;

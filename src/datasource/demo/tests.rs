//! The demo fleet through the shared mapping and the real engine: every showcase case
//! comes out as the demo promises.

use std::collections::BTreeMap;

use super::DemoFleet;
use crate::analysis::{
    analyze, default_policy, Output, Policy, Reason, Resource, ResourceAnalysis,
};
use crate::datasource::{ClusterScope, Collection, Window};

const END: i64 = 1_800_000_000_000;

fn scope(cluster: &str) -> ClusterScope {
    ClusterScope {
        cluster: cluster.into(),
        selector_label: None,
        selector_value: None,
    }
}

fn window(days: i64) -> Window {
    Window {
        end_ms: END,
        start_ms: END - days * 86_400_000,
        step_seconds: 60,
    }
}

fn leak_policy() -> Policy {
    let mut policy = default_policy();
    policy.memory.leak_detection = Some(Default::default());
    policy
}

fn run(cluster: &str) -> (Collection, Output) {
    let collection = DemoFleet::new(7)
        .collect_now(&scope(cluster), window(3))
        .expect("collect");
    let output = analyze(&collection.input, &leak_policy()).expect("analyze");
    (collection, output)
}

fn result<'a>(
    out: &'a Output,
    name: &str,
    container: &str,
    resource: Resource,
) -> &'a ResourceAnalysis {
    out.results
        .iter()
        .find(|r| {
            r.target.name == name && r.target.container == container && r.resource == resource
        })
        .unwrap_or_else(|| panic!("no {name}/{container} {resource:?} result"))
}

#[test]
fn demo_collection_is_deterministic_for_a_seed_and_window() {
    let a = DemoFleet::new(7)
        .collect_now(&scope("demo-east"), window(1))
        .expect("a");
    let b = DemoFleet::new(7)
        .collect_now(&scope("demo-east"), window(1))
        .expect("b");
    assert_eq!(a.input, b.input);
    let c = DemoFleet::new(8)
        .collect_now(&scope("demo-east"), window(1))
        .expect("c");
    assert_ne!(a.input, c.input);
}

#[test]
fn demo_has_two_clusters_of_about_sixty_workloads_in_several_namespaces() {
    let mut total = 0;
    let mut namespaces = BTreeMap::new();
    for cluster in DemoFleet::clusters() {
        let c = DemoFleet::new(1)
            .collect_now(&scope(cluster), window(1))
            .expect("collect");
        total += c.workloads.len();
        for w in &c.workloads {
            *namespaces.entry(w.namespace.clone()).or_insert(0) += 1;
        }
    }
    // About sixty, plus the guardrail workloads of demo-east (`sim::guarded`).
    let guarded = crate::sim::guarded::workloads(crate::sim::guarded::CLUSTER).len();
    assert!(guarded >= 10, "{guarded} guardrail workloads");
    assert!(
        (55 + guarded..=65 + guarded).contains(&total),
        "{total} workloads"
    );
    assert!(namespaces.len() >= 5, "{namespaces:?}");
}

#[test]
fn demo_shows_overprovisioning_oom_leak_rollout_and_short_history() {
    let (collection, out) = run("demo-east");
    // Over-provisioned: the CPU request comes down.
    let catalog = result(&out, "catalog", "app", Resource::Cpu);
    let rec = catalog
        .recommendations
        .iter()
        .find(|r| r.setting == crate::analysis::Setting::Requests);
    assert!(
        rec.is_some_and(|r| r.suggested_value < 500.0),
        "{}",
        show(catalog)
    );
    // OOM-killed: events detected and memory raised above the 256 MiB limit.
    let ledger = result(&out, "ledger", "app", Resource::Memory);
    assert!(
        ledger.notices.contains(&Reason::OomKillDetected),
        "{:?}",
        ledger.notices
    );
    assert!(ledger
        .recommendations
        .iter()
        .any(|r| r.suggested_value > 256.0 * 1024.0 * 1024.0));
    // The slow leak is flagged.
    let leak = result(&out, "ingest-worker", "worker", Resource::Memory);
    assert!(
        leak.notices.contains(&Reason::PotentialMemoryLeak),
        "{}",
        show(leak)
    );
    // The recent rollout falls back to the previous release.
    let store = result(&out, "storefront", "app", Resource::Cpu);
    assert!(
        store.notices.contains(&Reason::PreviousReleaseUsage),
        "{}",
        show(store)
    );
    let obs = collection
        .input
        .containers
        .iter()
        .find(|c| c.target.name == "storefront")
        .expect("storefront");
    assert_eq!(obs.previous_releases.len(), 1);
    // Too little history: nothing recommended, and the reason says why.
    let flags = result(&out, "feature-flags", "app", Resource::Cpu);
    assert!(flags.recommendations.is_empty());
    assert!(
        flags
            .data_quality
            .reasons
            .contains(&Reason::InsufficientHistory),
        "{:?}",
        flags.data_quality
    );
}

#[test]
fn demo_series_have_distinct_ids_per_lifetime_and_unset_settings_are_known_unset() {
    let (collection, _) = run("demo-east");
    for c in &collection.input.containers {
        let mut ids: Vec<&str> = c.cpu.series.iter().map(|s| s.id.as_str()).collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate series ids in {:?}", c.target);
    }
    let agent = collection
        .input
        .containers
        .iter()
        .find(|c| c.target.name == "node-agent")
        .expect("agent");
    assert!(agent.cpu.current_request.available && agent.cpu.current_request.unset);
    assert!(agent.inventory.available && agent.inventory.eligible == 4);
}

#[test]
fn unknown_demo_cluster_is_an_error_naming_the_known_ones() {
    let err = DemoFleet::new(1)
        .collect_now(&scope("prod"), window(1))
        .expect_err("unknown");
    assert!(err.to_string().contains("demo-east"));
}

fn show(r: &ResourceAnalysis) -> String {
    serde_json::to_string(r).unwrap_or_default()
}

#[test]
fn demo_workloads_carry_labels_from_their_own_metric_or_else_their_pods() {
    let (collection, _) = run("demo-east");
    let labels = |name: &str| {
        let w = collection.workloads.iter().find(|w| w.name == name);
        let pairs = w.map(|w| w.labels.clone()).unwrap_or_default();
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        labels("catalog"),
        ["app=catalog", "team=commerce", "tier=backend"]
    );
    assert_eq!(
        labels("postgres"),
        ["app=postgres", "team=data", "tier=data"]
    );
    // DaemonSets have no workload label metric in the demo: their pods' shared labels,
    // without the per-release hash.
    assert_eq!(
        labels("node-agent"),
        ["app=node-agent", "team=platform", "tier=platform"]
    );
    // Three each, and the guardrail workloads' extra labels (e.g. the JVM's fixed heap).
    for w in &collection.workloads {
        let extra =
            crate::sim::guarded::extras(&w.namespace, &w.name).map_or(0, |e| e.labels.len());
        assert_eq!(
            w.labels.len(),
            3 + extra,
            "{}/{}: {:?}",
            w.namespace,
            w.name,
            w.labels
        );
    }
}

#[test]
fn changes_made_while_the_demo_runs_are_the_values_in_force_and_shape_usage() {
    use crate::sim::catalogue::Resources;
    use crate::sim::live::{Live, LiveKey};
    let live = Live::default();
    let key = LiveKey {
        cluster: "demo-east".into(),
        namespace: "shop".into(),
        workload: "catalog".into(),
        container: "app".into(),
    };
    // An hour before the end, catalog went from 2 cores to 150m, 4 GiB to 512 MiB.
    let mib = 1024.0 * 1024.0;
    let small = Resources {
        cpu_request: Some(150.0),
        cpu_limit: Some(300.0),
        memory_request: Some(512.0 * mib),
        memory_limit: Some(512.0 * mib),
    };
    live.record(key, END - 3_600_000, small);
    let collection = DemoFleet::with_live(7, live)
        .collect_now(&scope("demo-east"), window(3))
        .expect("collect");
    let catalog = collection
        .input
        .containers
        .iter()
        .find(|c| c.target.name == "catalog" && c.target.container == "app")
        .expect("catalog");
    assert_eq!(catalog.cpu.current_request.value, 150.0);
    assert_eq!(catalog.memory.current_limit.value, 512.0 * mib);
}

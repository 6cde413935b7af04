//! The embedded usage store against a real Prometheus (issue 30): one seeded fleet
//! (`fleet`: kube-state-metrics and cAdvisor series of Deployments, a StatefulSet and a
//! DaemonSet with several replicas, a rolling update, a revision change that recreates
//! pods under their names, restarts, an OOM kill followed by an in-place resize, an
//! HPA, staleness markers; and a cluster whose OOM kill must be inferred from
//! restarts) written sample for sample into Prometheus by remote write and into the
//! usage store by `UsageStore::append`. `PrometheusSource` (remote read) and
//! `EmbeddedSource` must plan the same groups and hand the engine the same input —
//! every sample, setting, identity, inventory and OOM kill — and so get the same
//! recommendations; charts read the same series.

mod fleet;

use std::time::Instant;

use kerf::analysis::{analyze, default_policy};
use kerf::datasource::prometheus::{ClientAuth, ProtocolChoice};
use kerf::datasource::{Collection, EmbeddedSource, Source, UsageResource, Window};
use kerf::store::usage::{UsageOptions, UsageStore, WriteSeries, FILE_NAME};
use kerf::workload::WorkloadKey;

use crate::datasource_raw::Seeded;
use crate::support::prometheus::Prometheus;
use crate::support::raw_tsdb::Dataset;
use crate::support::series::{scope, source};
use fleet::*;

const WINDOW: Window = Window {
    start_ms: START,
    end_ms: END,
    step_seconds: 60,
};

fn container(name: &'static str, cores: f64, bytes: f64, limit: f64) -> Container {
    Container {
        name,
        cpu_request: (cores * 4.0 * 20.0).round() / 20.0,
        memory_limit: limit,
        cores,
        bytes,
        kills: Vec::new(),
        resize: None,
    }
}

#[allow(clippy::too_many_arguments)] // one line per pod reads best
fn pod(
    ns: &'static str,
    name: &str,
    uid: &str,
    owner: (&'static str, &str),
    revision: Option<&'static str>,
    app: &'static str,
    (from, to): (i64, i64),
    containers: Vec<Container>,
) -> Pod {
    Pod {
        ns,
        name: name.into(),
        uid: uid.into(),
        owner_kind: owner.0,
        owner: owner.1.into(),
        revision,
        app,
        from,
        to,
        containers,
    }
}

fn emb(w: &mut Writer<'_>) {
    // shop/api: a rolling update from api-6d4f9 to api-7b8c5, one pod at a time.
    w.workload(
        "shop",
        "deployment",
        "api",
        3.0,
        &[("label_app", "api"), ("label_tier", "web")],
    );
    w.hpa("shop", "api", 70.0, (3.0, 6.0));
    w.replica_set("shop", "api-6d4f9", "api", FIRST - 1440 * MIN, LAST);
    w.replica_set("shop", "api-7b8c5", "api", ROLLOUT, LAST);
    for (i, s) in ["q2x7k", "m9z4w", "c3v8n"].into_iter().enumerate() {
        let i = i as i64;
        let old = format!("api-6d4f9-{s}");
        let span = (FIRST - 600 * MIN, ROLLOUT + (i + 1) * 3 * MIN + 41_000);
        let c = vec![container("app", 0.2, 180.0 * MIB, 512.0 * MIB)];
        w.pod(&pod(
            "shop",
            &old,
            &format!("{old}-uid"),
            ("ReplicaSet", "api-6d4f9"),
            None,
            "api",
            span,
            c,
        ));
        let new = format!("api-7b8c5-{s}");
        let span = (ROLLOUT + i * 3 * MIN + 5_000, LAST);
        let c = vec![container("app", 0.3, 220.0 * MIB, 512.0 * MIB)];
        w.pod(&pod(
            "shop",
            &new,
            &format!("{new}-uid"),
            ("ReplicaSet", "api-7b8c5"),
            None,
            "api",
            span,
            c,
        ));
    }
    // shop/cart: two containers; one `app` exits with an error and restarts.
    w.workload("shop", "deployment", "cart", 2.0, &[("label_app", "cart")]);
    w.replica_set("shop", "cart-5c6d7", "cart", FIRST - 2880 * MIN, LAST);
    for (i, s) in ["h4k2p", "t7r5s"].into_iter().enumerate() {
        let name = format!("cart-5c6d7-{s}");
        let mut app = container("app", 0.5, 300.0 * MIB, 1024.0 * MIB);
        if i == 1 {
            app.kills.push((END - 200 * MIN + 13_000, "Error"));
        }
        let proxy = container("proxy", 0.05, 40.0 * MIB, 128.0 * MIB);
        let span = (FIRST - 900 * MIN, LAST);
        w.pod(&pod(
            "shop",
            &name,
            &format!("{name}-uid"),
            ("ReplicaSet", "cart-5c6d7"),
            None,
            "cart",
            span,
            vec![app, proxy],
        ));
    }
    // db/pg: a revision change recreates both pods under their names; pg-1 is then
    // OOM-killed at 512 MiB and resized in place to 768 MiB.
    w.workload("db", "statefulset", "pg", 2.0, &[("label_app", "pg")]);
    for (n, change) in [(0, END - 240 * MIN), (1, END - 236 * MIN)] {
        let name = format!("pg-{n}");
        let c = vec![container("postgres", 0.8, 400.0 * MIB, 512.0 * MIB)];
        let old = (FIRST - 1000 * MIN, change);
        w.pod(&pod(
            "db",
            &name,
            &format!("pg-{n}-a"),
            ("StatefulSet", "pg"),
            Some("pg-5f7"),
            "pg",
            old,
            c,
        ));
        let mut c = container("postgres", 0.8, 460.0 * MIB, 512.0 * MIB);
        if n == 1 {
            c.kills.push((PG_KILL, "OOMKilled"));
            c.resize = Some((PG_RESIZE, 768.0 * MIB));
        }
        let new = (change + 40_000, LAST);
        w.pod(&pod(
            "db",
            &name,
            &format!("pg-{n}-b"),
            ("StatefulSet", "pg"),
            Some("pg-6a8"),
            "pg",
            new,
            vec![c],
        ));
    }
    // infra/agent: a DaemonSet whose labels come from its pods.
    w.workload("infra", "daemonset", "agent", 2.0, &[]);
    for s in ["x1", "x2"] {
        let name = format!("agent-{s}");
        let c = vec![container("agent", 0.02, 30.0 * MIB, 64.0 * MIB)];
        let span = (FIRST - 5000 * MIN, LAST);
        w.pod(&pod(
            "infra",
            &name,
            &format!("{name}-uid"),
            ("DaemonSet", "agent"),
            Some("agent-55d"),
            "agent",
            span,
            c,
        ));
    }
}

fn emb_infer(w: &mut Writer<'_>) {
    w.workload("batch", "deployment", "worker", 2.0, &[]);
    w.replica_set("batch", "worker-9f8e7", "worker", FIRST - 1440 * MIN, LAST);
    for (i, s) in ["a1b2c", "d3e4f"].into_iter().enumerate() {
        let name = format!("worker-9f8e7-{s}");
        let mut c = container("app", 0.4, 200.0 * MIB, 256.0 * MIB);
        if i == 1 {
            c.kills.push((WORKER_KILL, "OOMKilled"));
        }
        let span = (FIRST - 300 * MIN, LAST);
        w.pod(&pod(
            "batch",
            &name,
            &format!("{name}-uid"),
            ("ReplicaSet", "worker-9f8e7"),
            None,
            "worker",
            span,
            vec![c],
        ));
    }
}

/// A cluster of the fleet: its name, whether its kube-state-metrics exports termination
/// times, and what it runs.
type FleetCluster = (&'static str, bool, fn(&mut Writer<'_>));

fn dataset() -> Dataset {
    let mut ds = Dataset::default();
    let clusters: [FleetCluster; 2] = [("emb", true, emb), ("emb-infer", false, emb_infer)];
    for (seed, (cluster, termination_time, write)) in clusters.into_iter().enumerate() {
        let rng = Seeded(0x9e37_79b9_7f4a_7c15 ^ seed as u64);
        write(&mut Writer {
            ds: &mut ds,
            cluster,
            rng,
            termination_time,
        });
    }
    ds
}

/// The store holding `ds`, each series under its `cluster` label's kerf cluster.
async fn usage_store(ds: &Dataset, dir: &tempfile::TempDir) -> UsageStore {
    let now = END + 10 * MIN;
    let store =
        UsageStore::open_and_migrate(&dir.path().join(FILE_NAME), &UsageOptions::default(), now)
            .expect("usage store");
    for cluster in ["emb", "emb-infer"] {
        let batch: Vec<WriteSeries> = ds
            .series
            .iter()
            .filter(|(l, _)| l["cluster"] == cluster)
            .map(|(labels, samples)| WriteSeries {
                labels: labels.clone(),
                samples: samples.clone(),
            })
            .collect();
        let written: usize = batch.iter().map(|s| s.samples.len()).sum();
        let outcome = store.append(cluster, batch, now).await.expect("append");
        assert_eq!(outcome.refused_samples(), 0, "{outcome:?}");
        assert_eq!(
            outcome.accepted as usize, written,
            "every sample stored once"
        );
    }
    store
}

/// `a` (Prometheus) and `b` (the store) hand the engine the same input and get the
/// same answer.
fn same(a: &Collection, b: &Collection, what: &str) {
    assert_eq!(a.workloads, b.workloads, "{what}");
    assert_eq!(a.input.evaluation_time, b.input.evaluation_time, "{what}");
    assert_eq!(a.input.window_start, b.input.window_start, "{what}");
    assert_eq!(a.input.containers.len(), b.input.containers.len(), "{what}");
    for (x, y) in a.input.containers.iter().zip(&b.input.containers) {
        // Whole observations compared (every sample); the message names what differs.
        let part = |x: &kerf::analysis::ContainerObservation,
                    y: &kerf::analysis::ContainerObservation| {
            [
                ("identity", x.identity == y.identity),
                ("inventory", x.inventory == y.inventory),
                ("cpu", x.cpu == y.cpu),
                ("memory", x.memory == y.memory),
                ("oomKills", x.oom_kills == y.oom_kills),
                (
                    "previousReleases",
                    x.previous_releases == y.previous_releases,
                ),
            ]
            .into_iter()
            .filter(|(_, same)| !same)
            .map(|(n, _)| n)
            .collect::<Vec<_>>()
        };
        assert!(
            x == y,
            "{what}: {}/{} differs: {:?}",
            x.target.name,
            x.target.container,
            part(x, y)
        );
    }
    assert_eq!(a.stats.series, b.stats.series, "{what}");
    assert_eq!(a.stats.samples, b.stats.samples, "{what}");
    let out_a = analyze(&a.input, &default_policy()).expect("analyze Prometheus's");
    let out_b = analyze(&b.input, &default_policy()).expect("analyze the store's");
    assert_eq!(
        serde_json::to_string(&out_a).expect("json"),
        serde_json::to_string(&out_b).expect("json"),
        "{what}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_store_and_prometheus_give_the_same_engine_input_and_recommendations() {
    let ds = dataset();
    let prom = Prometheus::remote_write_receiver();
    ds.write_to(&prom.url).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = usage_store(&ds, &dir).await;
    eprintln!(
        "{} series, {} samples written to both",
        ds.series.len(),
        ds.sample_count()
    );
    let prometheus = source(&prom.url, ClientAuth::None).with_protocol(ProtocolChoice::RemoteRead);
    let mut collected = Vec::new();
    for cluster in ["emb", "emb-infer"] {
        let embedded = EmbeddedSource::new(store.clone(), cluster);
        let (a, b) = (
            prometheus
                .plan(&scope(cluster), WINDOW)
                .await
                .expect("Prometheus's plan"),
            embedded
                .plan(&scope(cluster), WINDOW)
                .await
                .expect("the store's plan"),
        );
        assert_eq!(a.groups, b.groups, "{cluster}: the same groups");
        let started = Instant::now();
        let a = prometheus
            .collect(&scope(cluster), WINDOW)
            .await
            .expect("Prometheus");
        let prom_ms = started.elapsed().as_millis();
        let started = Instant::now();
        let b = embedded
            .collect(&scope(cluster), WINDOW)
            .await
            .expect("the store");
        let store_ms = started.elapsed().as_millis();
        assert_eq!(
            (a.stats.protocol.as_str(), b.stats.protocol.as_str()),
            ("remote-read", "embedded")
        );
        assert!(!b.input.containers.is_empty(), "{cluster}");
        same(&a, &b, cluster);
        let kills: usize = b.input.containers.iter().map(|c| c.oom_kills.len()).sum();
        eprintln!(
            "{cluster}: {} workloads, {} containers, {} series, {} samples, {kills} OOM kills: \
             equal; Prometheus {prom_ms} ms ({} requests), the store {store_ms} ms ({} reads)",
            b.workloads.len(),
            b.input.containers.len(),
            b.stats.series,
            b.stats.samples,
            a.stats.queries,
            b.stats.queries,
        );
        collected.push(b);
    }
    what_the_fleet_shows(&collected[0], &collected[1]);
    let api = WorkloadKey {
        namespace: "shop".into(),
        kind: "Deployment".into(),
        name: "api".into(),
    };
    let embedded = EmbeddedSource::new(store.clone(), "emb");
    for resource in [UsageResource::Cpu, UsageResource::Memory] {
        let a = prometheus
            .usage(&scope("emb"), &api, "app", resource, WINDOW)
            .await
            .expect("chart");
        let b = embedded
            .usage(&scope("emb"), &api, "app", resource, WINDOW)
            .await
            .expect("chart");
        assert_eq!(a.len(), 6, "{resource:?}: three pods of each release");
        assert!(a == b, "{resource:?}: the chart reads the same series");
    }
    let report = embedded.test(&scope("emb")).await.expect("test");
    assert!(report.missing_metrics.is_empty(), "{report:?}");
    eprintln!("test: {}", report.message);
}

/// The fleet's troubles are in the input (so the comparison compared them).
fn what_the_fleet_shows(emb: &Collection, infer: &Collection) {
    let find = |c: &Collection, name: &str, container: &str| {
        c.input
            .containers
            .iter()
            .find(|o| o.target.name == name && o.target.container == container)
            .cloned()
            .unwrap_or_else(|| panic!("no {name}/{container}"))
    };
    let api = find(emb, "api", "app");
    assert_eq!(
        (api.identity.release.as_str(), api.previous_releases.len()),
        ("api-7b8c5", 1)
    );
    let pg = find(emb, "pg", "postgres");
    assert_eq!(pg.identity.release, "pg-6a8");
    assert_eq!(pg.oom_kills.len(), 1, "{:?}", pg.oom_kills);
    assert_eq!(pg.oom_kills[0].timestamp, PG_KILL - PG_KILL % 1000);
    assert_eq!(
        pg.oom_kills[0].memory_limit_bytes,
        512.0 * MIB,
        "the limit at the kill"
    );
    // pg-1 was resized in place and pg-0 was not: the pods disagree, so the limit in
    // force is unknown rather than either pod's.
    assert!(
        !pg.memory.current_limit.available,
        "{:?}",
        pg.memory.current_limit
    );
    let cart = find(emb, "cart", "app");
    assert!(cart.oom_kills.is_empty(), "an error exit is no OOM kill");
    assert_eq!(cart.cpu.series.len(), 3, "a restart is a new lifetime");
    let agent = emb
        .workloads
        .iter()
        .find(|w| w.name == "agent")
        .expect("agent");
    assert_eq!(agent.labels.get("app").map(String::as_str), Some("agent"));
    let api_info = emb.workloads.iter().find(|w| w.name == "api").expect("api");
    assert_eq!(
        api_info.hpa.as_ref().and_then(|h| h.cpu_utilization()),
        Some(70.0)
    );
    let worker = find(infer, "worker", "app");
    assert_eq!(worker.oom_kills.len(), 1, "{:?}", worker.oom_kills);
    assert!(
        worker.oom_kills[0].id.ends_with("/inferred"),
        "{:?}",
        worker.oom_kills
    );
    assert_eq!(worker.oom_kills[0].memory_limit_bytes, 256.0 * MIB);
}

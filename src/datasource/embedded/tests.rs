//! The embedded datasource end to end on a real usage store: a rollout, a StatefulSet
//! OOM-killed before an in-place resize, a restart, streamed workload by workload; the
//! kill inferred from restarts when the termination time is not exported; a chart; the
//! test report; another cluster's scope refused.

use super::fixture::*;
use super::EmbeddedSource;
use crate::analysis::ContainerObservation;
use crate::datasource::{Collection, DatasourceError, Source, UsageResource};
use crate::store::usage::{UsageStore, WriteSeries};
use crate::workload::WorkloadKey;

const ROLLOUT: i64 = END - 120 * MIN;
const KILL: i64 = END - 180 * MIN;
const RESIZE: i64 = END - 150 * MIN;

fn workload(out: &mut Vec<WriteSeries>, ns: &str, kind: &str, name: &str, replicas: f64) {
    let l = [("namespace", ns), (kind, name)];
    let from = WINDOW.start_ms - 60 * MIN;
    let created = ((from - 600 * MIN) / 1000) as f64;
    out.push(series(
        &format!("kube_{kind}_created"),
        &l,
        every_30s(from, END + MIN, created),
    ));
    let desired = match kind {
        "deployment" => "kube_deployment_spec_replicas",
        _ => "kube_statefulset_replicas",
    };
    out.push(series(desired, &l, every_30s(from, END + MIN, replicas)));
}

fn replica_set(out: &mut Vec<WriteSeries>, ns: &str, rs: &str, deployment: &str, created: i64) {
    let owner = [
        ("namespace", ns),
        ("replicaset", rs),
        ("owner_kind", "Deployment"),
        ("owner_name", deployment),
    ];
    let from = WINDOW.start_ms - 60 * MIN;
    out.push(series(
        "kube_replicaset_owner",
        &owner,
        every_30s(from, END + MIN, 1.0),
    ));
    let l = [("namespace", ns), ("replicaset", rs)];
    let value = (created / 1000) as f64;
    out.push(series(
        "kube_replicaset_created",
        &l,
        every_30s(created, END + MIN, value),
    ));
}

/// shop/api rolled out from api-old to api-new; db/pg OOM-killed, resized, restarted.
fn fleet() -> Vec<WriteSeries> {
    let mut out = Vec::new();
    let (old_from, end) = (WINDOW.start_ms - 60 * MIN, END + MIN);
    workload(&mut out, "shop", "deployment", "api", 2.0);
    replica_set(&mut out, "shop", "api-old", "api", old_from - 60 * MIN);
    replica_set(&mut out, "shop", "api-new", "api", ROLLOUT - 2 * MIN);
    for (rs, from, to, cores) in [
        ("api-old", old_from, ROLLOUT, 0.2),
        ("api-new", ROLLOUT, end, 0.3),
    ] {
        for suffix in ["a", "b"] {
            let (pod, uid) = (format!("{rs}-{suffix}"), format!("{rs}-{suffix}-uid"));
            let spec = PodSpec {
                ns: "shop",
                pod: &pod,
                uid: &uid,
                owner_kind: "ReplicaSet",
                owner: rs,
                from,
                to,
                cpu_request: 0.25,
                memory_limit: 512.0 * MIB,
            };
            ksm_pod(&spec, &mut out);
            cadvisor(
                ("shop", &pod, &format!("/{uid}/c1")),
                (from, to),
                cores,
                200.0 * MIB,
                &mut out,
            );
        }
    }
    workload(&mut out, "db", "statefulset", "pg", 1.0);
    let spec = PodSpec {
        ns: "db",
        pod: "pg-0",
        uid: "pg-0-uid",
        owner_kind: "StatefulSet",
        owner: "pg",
        from: old_from,
        to: end,
        cpu_request: 1.0,
        memory_limit: 256.0 * MIB,
    };
    ksm_pod(&spec, &mut out);
    // Resized in place after the kill: the limit series changes value at RESIZE.
    let limit = out.last_mut().expect("the memory limit");
    for s in limit.samples.iter_mut().filter(|s| s.0 >= RESIZE) {
        s.1 = 512.0 * MIB;
    }
    let pod = [("namespace", "db"), ("pod", "pg-0"), ("uid", "pg-0-uid")];
    let with = |extra: &[(&'static str, &'static str)]| {
        pod.iter().chain(extra).copied().collect::<Vec<_>>()
    };
    let revision = with(&[("label_controller_revision_hash", "pg-7c9")]);
    out.push(series(
        "kube_pod_labels",
        &revision,
        every_30s(old_from, end, 1.0),
    ));
    let oom = with(&[("container", "app"), ("reason", "OOMKilled")]);
    out.push(series(
        "kube_pod_container_status_last_terminated_reason",
        &oom,
        every_30s(KILL, end, 1.0),
    ));
    out.push(series(
        "kube_pod_container_status_last_terminated_timestamp",
        &with(&[("container", "app")]),
        every_30s(KILL, end, (KILL / 1000) as f64),
    ));
    cadvisor(
        ("db", "pg-0", "/pg/c1"),
        (old_from, KILL),
        0.5,
        250.0 * MIB,
        &mut out,
    );
    cadvisor(
        ("db", "pg-0", "/pg/c2"),
        (KILL + 20_000, end),
        0.5,
        180.0 * MIB,
        &mut out,
    );
    out
}

async fn store_of(cluster: &str, batch: Vec<WriteSeries>) -> (tempfile::TempDir, UsageStore) {
    let (dir, store) = open();
    let outcome = store.append(cluster, batch, END).await.expect("append");
    assert_eq!(outcome.refused_samples(), 0, "{outcome:?}");
    (dir, store)
}

fn container<'a>(c: &'a Collection, name: &str) -> &'a ContainerObservation {
    c.input
        .containers
        .iter()
        .find(|o| o.target.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

#[tokio::test]
async fn a_rollout_a_resize_after_an_oom_kill_and_a_restart_map_as_prometheus_would() {
    let (_dir, store) = store_of("c1", fleet()).await;
    let src = EmbeddedSource::new(store, "c1");
    let plan = src.plan(&scope("c1"), WINDOW).await.expect("plan");
    assert_eq!(plan.workloads(), 2);
    let (sink, mut pieces) = tokio::sync::mpsc::channel(8);
    let mut sent = 0;
    for index in 0..plan.groups.len() {
        src.stream_group(&plan, index, &sink).await.expect("stream");
        while let Ok(piece) = pieces.try_recv() {
            assert_eq!(piece.workloads.len(), 1, "one workload a piece");
            sent += 1;
        }
    }
    assert_eq!(sent, 2);
    let got = src.collect(&scope("c1"), WINDOW).await.expect("collect");
    assert_eq!(got.stats.protocol, "embedded");
    let api = container(&got, "api");
    assert_eq!(api.identity.release, "api-new");
    assert!(!api.identity.ambiguous);
    assert_eq!(
        api.identity.release_started_at,
        ROLLOUT - 2 * MIN - (ROLLOUT - 2 * MIN) % 1000
    );
    assert_eq!((api.inventory.eligible, api.inventory.observed), (2, 2));
    assert_eq!(api.cpu.current_request.value, 250.0);
    // The request's raw time: the last scrape at or before the end, off the minute.
    let last_scrape = every_30s(ROLLOUT, END + 1, 0.0).last().expect("scrapes").0;
    assert_eq!(api.cpu.current_request.timestamp, last_scrape);
    assert_eq!(api.identity.timestamp, last_scrape);
    assert_eq!(api.cpu.series.len(), 4, "two pods of each release");
    assert_eq!(api.previous_releases.len(), 1);
    assert_eq!(api.previous_releases[0].release, "api-old");
    let pg = container(&got, "pg");
    assert_eq!(pg.identity.release, "pg-7c9");
    assert_eq!(pg.memory.series.len(), 2, "a restart is a new lifetime");
    assert_eq!(pg.oom_kills.len(), 1, "{:?}", pg.oom_kills);
    let kill = &pg.oom_kills[0];
    assert_eq!(kill.timestamp, KILL - KILL % 1000);
    assert_eq!(
        kill.memory_limit_bytes,
        256.0 * MIB,
        "the limit at the kill"
    );
    assert_eq!(kill.id, format!("pg-0-uid/app/{}", kill.timestamp));
    assert_eq!(pg.memory.current_limit.value, 512.0 * MIB, "today's limit");
}

#[tokio::test]
async fn without_the_termination_time_a_restart_under_an_oom_reason_is_an_inferred_kill() {
    let mut batch = Vec::new();
    let (from, end) = (WINDOW.start_ms - 60 * MIN, END + MIN);
    workload(&mut batch, "batch", "deployment", "worker", 1.0);
    replica_set(&mut batch, "batch", "worker-r1", "worker", from);
    let spec = PodSpec {
        ns: "batch",
        pod: "worker-r1-a",
        uid: "w-uid",
        owner_kind: "ReplicaSet",
        owner: "worker-r1",
        from,
        to: end,
        cpu_request: 0.5,
        memory_limit: 128.0 * MIB,
    };
    ksm_pod(&spec, &mut batch);
    let ids = [
        ("namespace", "batch"),
        ("pod", "worker-r1-a"),
        ("uid", "w-uid"),
        ("container", "app"),
    ];
    let restarted = every_30s(KILL, end, 0.0)[0].0;
    let restarts = every_30s(from, end, 0.0)
        .into_iter()
        .map(|(t, _)| (t, if t >= restarted { 1.0 } else { 0.0 }))
        .collect();
    batch.push(series(
        "kube_pod_container_status_restarts_total",
        &ids,
        restarts,
    ));
    let mut reason = ids.to_vec();
    reason.push(("reason", "OOMKilled"));
    batch.push(series(
        "kube_pod_container_status_last_terminated_reason",
        &reason,
        every_30s(KILL, end, 1.0),
    ));
    cadvisor(
        ("batch", "worker-r1-a", "/w/c1"),
        (from, KILL),
        0.1,
        120.0 * MIB,
        &mut batch,
    );
    cadvisor(
        ("batch", "worker-r1-a", "/w/c2"),
        (KILL + 20_000, end),
        0.1,
        60.0 * MIB,
        &mut batch,
    );
    let (_dir, store) = store_of("c2", batch).await;
    let got = EmbeddedSource::new(store, "c2")
        .collect(&scope("c2"), WINDOW)
        .await
        .expect("collect");
    let worker = container(&got, "worker");
    assert_eq!(worker.oom_kills.len(), 1, "{:?}", worker.oom_kills);
    let kill = &worker.oom_kills[0];
    // Stamped with the first step that sees the restart: within a step after it.
    let step = restarted + (MIN - restarted % MIN) % MIN;
    assert_eq!(kill.timestamp, step);
    assert_eq!(kill.id, format!("w-uid/app/{step}/inferred"));
    assert_eq!(kill.memory_limit_bytes, 128.0 * MIB);
}

#[tokio::test]
async fn a_chart_reads_one_container_and_the_test_reports_what_the_store_holds() {
    let (_dir, store) = store_of("c1", fleet()).await;
    let src = EmbeddedSource::new(store, "c1");
    let api = WorkloadKey {
        namespace: "shop".into(),
        kind: "Deployment".into(),
        name: "api".into(),
    };
    let cpu = src
        .usage(&scope("c1"), &api, "app", UsageResource::Cpu, WINDOW)
        .await
        .expect("chart");
    assert_eq!(cpu.len(), 4);
    assert!(cpu
        .iter()
        .all(|s| s.samples.iter().all(|x| x.timestamp <= END)));
    let report = src.test(&scope("c1")).await.expect("test");
    assert!(report.reachable && report.authenticated);
    assert_eq!(report.protocol.as_deref(), Some("embedded"));
    assert!(report.missing_metrics.is_empty(), "{report:?}");
    assert!(
        report.message.contains("series of cluster c1"),
        "{}",
        report.message
    );
    let other = src.plan(&scope("c2"), WINDOW).await;
    assert!(
        matches!(other, Err(DatasourceError::Invalid(_))),
        "{other:?}"
    );
}

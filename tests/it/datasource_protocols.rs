//! Remote read against `query_range` on one real Prometheus: the same collection, sample
//! for sample, and the same engine output, for the rollout/restart/OOM fixture plus
//! scrapes that the step grid has to resolve — jittered times, a gap longer than the
//! lookback, a series that ends mid-window, and a sample exactly one lookback before a
//! step. Also: the protocol is chosen automatically, named by the datasource test, and
//! remote read moves far fewer bytes. VictoriaMetrics (which refuses remote read) is
//! tested in `datasource_vm_export.rs`.

use kerf::analysis::{analyze, default_policy};
use kerf::datasource::prometheus::{ClientAuth, Protocol, ProtocolChoice};
use kerf::datasource::Source;

use crate::datasource_prometheus::{fixture, scope, source, END, START, WINDOW};
use crate::support::cut_proxy::CutProxy;
use crate::support::prometheus::{OpenMetrics, Prometheus};

const MIN: i64 = 60_000;

/// `east/jitter/odd`: one pod scraped every 15 s with up to 4.9 s of jitter, a 12-minute
/// gap, a restart 47 minutes before the end, and a lone sample exactly 5 minutes before
/// a step followed by 7 minutes of silence.
pub(crate) fn jittered(om: &mut OpenMetrics) {
    let ns = "jitter";
    let base = [("cluster", "east"), ("namespace", ns)];
    let mut rs_owner = base.to_vec();
    rs_owner.extend([
        ("replicaset", "odd-r1"),
        ("owner_kind", "Deployment"),
        ("owner_name", "odd"),
    ]);
    let mut dep = base.to_vec();
    dep.push(("deployment", "odd"));
    let pod = [
        ("cluster", "east"),
        ("namespace", ns),
        ("pod", "odd-r1-aaaaa"),
        ("uid", "odd-uid"),
    ];
    let mut owner = pod.to_vec();
    owner.extend([
        ("owner_kind", "ReplicaSet"),
        ("owner_name", "odd-r1"),
        ("owner_is_controller", "true"),
    ]);
    let mut limit = pod.to_vec();
    limit.extend([("container", "app"), ("resource", "memory")]);
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample(
            "kube_deployment_created",
            &dep,
            ((START - 1_440 * MIN) / 1000) as f64,
            t,
        );
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample("kube_deployment_spec_replicas", &dep, 1.0, t);
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample("kube_replicaset_owner", &rs_owner, 1.0, t);
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample("kube_pod_owner", &owner, 1.0, t);
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample(
            "kube_pod_created",
            &pod,
            ((START - 60 * MIN) / 1000) as f64,
            t,
        );
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample(
            "kube_pod_container_resource_limits",
            &limit,
            512.0 * 1_048_576.0,
            t,
        );
    }
    let restart = END - 47 * MIN;
    let gap = (END - 200 * MIN, END - 188 * MIN);
    let edge = END - 100 * MIN - 5 * MIN; // a step lies exactly 5 minutes after it
    let times = |from: i64, to: i64| {
        let mut out = Vec::new();
        let mut k: i64 = 0;
        loop {
            let jitter = (k * 7_919 % 4_900) - 2_450;
            let t = from + k * 15_000 + jitter;
            if t >= to {
                return out;
            }
            let in_gap = (gap.0..gap.1).contains(&t);
            let near_edge = (edge..edge + 7 * MIN).contains(&t);
            if !in_gap && !near_edge {
                out.push(t);
            }
            k += 1;
        }
    };
    for (id, from, to) in [
        ("/c1", START - 30 * MIN, restart),
        ("/c2", restart + 20_000, END),
    ] {
        let mut l = pod.to_vec();
        l.truncate(3);
        l.extend([("container", "app"), ("id", id)]);
        let mut ts = times(from, to);
        if id == "/c1" {
            ts.push(edge);
            ts.sort_unstable();
        }
        let mut counter = 0.0;
        for (i, t) in ts.iter().enumerate() {
            counter += 0.125 + (i % 13) as f64 * 0.031_25;
            om.sample("container_cpu_usage_seconds_total", &l, counter, *t);
        }
        for (i, t) in ts.iter().enumerate() {
            let mem = 100.0 * 1_048_576.0 + ((i * 37) % 101) as f64 * 65_536.0;
            om.sample("container_memory_working_set_bytes", &l, mem, *t);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_read_and_query_range_give_identical_samples_and_recommendations() {
    let mut om = fixture();
    jittered(&mut om);
    let prom = Prometheus::with_data(&om, false);
    let auto = source(&prom.url, ClientAuth::None);
    assert!(
        matches!(auto.protocol().await, Ok(Protocol::RemoteRead(l)) if l.ms == 300_000 && l.inclusive),
        "Prometheus 2.x streams remote read with a 5-minute, inclusive lookback"
    );
    let report = auto.test(&scope("east")).await.expect("test");
    assert_eq!(report.remote_read, Some(true), "{report:?}");
    assert!(
        report.message.contains("remote read: yes"),
        "{}",
        report.message
    );

    let streamed = source(&prom.url, ClientAuth::None).with_protocol(ProtocolChoice::RemoteRead);
    let ranged = source(&prom.url, ClientAuth::None).with_protocol(ProtocolChoice::QueryRange);
    let report = ranged.test(&scope("east")).await.expect("test");
    assert_eq!(report.protocol.as_deref(), Some("query-range"));
    for cluster in ["east", "west", "bare"] {
        let a = streamed
            .collect(&scope(cluster), WINDOW)
            .await
            .expect("remote read");
        let b = ranged
            .collect(&scope(cluster), WINDOW)
            .await
            .expect("query_range");
        assert_eq!(a.stats.protocol, "remote-read");
        assert_eq!(b.stats.protocol, "query-range");
        assert!(!a.input.containers.is_empty(), "{cluster}");
        assert_eq!(a.workloads, b.workloads, "{cluster}");
        assert_eq!(
            a.input.containers.len(),
            b.input.containers.len(),
            "{cluster}"
        );
        for (x, y) in a.input.containers.iter().zip(&b.input.containers) {
            // Whole observations compared (every sample); the message stays short.
            assert!(
                x == y,
                "{cluster}: {} differs between the protocols",
                x.target.name
            );
        }
        assert_eq!(a.stats.samples, b.stats.samples, "{cluster}");
        let out_a = analyze(&a.input, &default_policy()).expect("analyze remote read");
        let out_b = analyze(&b.input, &default_policy()).expect("analyze query_range");
        assert_eq!(
            serde_json::to_string(&out_a).expect("json"),
            serde_json::to_string(&out_b).expect("json"),
            "{cluster}"
        );
        if cluster == "east" {
            assert!(
                a.stats.bytes * 2 < b.stats.bytes,
                "remote read {} bytes, query_range {} bytes",
                a.stats.bytes,
                b.stats.bytes
            );
            let odd = a
                .input
                .containers
                .iter()
                .find(|c| c.target.name == "odd")
                .expect("the jittered workload");
            let first = &odd.cpu.series[0].samples;
            let step_at = |t: i64| first.iter().any(|s| s.timestamp == t);
            assert!(
                step_at(END - 100 * MIN),
                "the sample one lookback old still counts"
            );
            assert!(
                !step_at(END - 190 * MIN),
                "no point inside a gap longer than the lookback"
            );
            assert!(
                first.iter().all(|s| s.timestamp % MIN == 0),
                "points sit on the step grid"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_read_stream_cut_mid_answer_is_resumed_and_loses_nothing() {
    let mut om = fixture();
    jittered(&mut om);
    let prom = Prometheus::with_data(&om, false);
    let direct = source(&prom.url, ClientAuth::None)
        .collect(&scope("east"), WINDOW)
        .await
        .expect("direct");
    // Remote read 1 is the probe; 2 is the group's usage, cut after 20 kB.
    let proxy = CutProxy::start(&prom.url, 2, 20_000).await;
    let through = source(&proxy.url, ClientAuth::None);
    let resumed = through
        .collect(&scope("east"), WINDOW)
        .await
        .expect("resumed after the cut");
    assert!(
        proxy.cut.load(std::sync::atomic::Ordering::SeqCst),
        "the answer was cut"
    );
    assert_eq!(resumed.stats.protocol, "remote-read");
    assert_eq!(resumed.workloads, direct.workloads);
    assert!(resumed.input == direct.input, "every sample arrived once");
    assert_eq!(
        resumed.stats.queries,
        direct.stats.queries + 1,
        "one more request: the resume"
    );
}

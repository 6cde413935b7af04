//! Remote read against range selectors on one real Prometheus: the same raw samples,
//! sample for sample, and the same engine output, for the rollout/restart/OOM fixture
//! plus scrapes off the step grid — jittered times, a gap longer than the lookback, a
//! series that ends mid-window, and a lone sample before 7 minutes of silence, each
//! handed on at its own time. Also: the protocol is chosen automatically, named by the
//! datasource test, and remote read moves far fewer bytes. VictoriaMetrics (which refuses remote read) is
//! tested in `datasource_vm_export.rs`.

use kerf::analysis::{analyze, default_policy};
use kerf::datasource::prometheus::{ClientAuth, Protocol, ProtocolChoice};
use kerf::datasource::Source;

use crate::support::cut_proxy::CutProxy;
use crate::support::prometheus::Prometheus;
use crate::support::series::{fixture, jittered, scope, source, GAP, LONE, MIN, WINDOW};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_read_and_range_selectors_give_identical_samples_and_recommendations() {
    let mut om = fixture();
    jittered(&mut om);
    let prom = Prometheus::with_data(&om, false);
    let auto = source(&prom.url, ClientAuth::None);
    assert!(
        matches!(auto.protocol().await, Ok(Protocol::RemoteRead)),
        "Prometheus 2.x streams remote read"
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
    assert_eq!(report.protocol.as_deref(), Some("range-selector"));
    for cluster in ["east", "west", "bare"] {
        let a = streamed
            .collect(&scope(cluster), WINDOW)
            .await
            .expect("remote read");
        let b = ranged
            .collect(&scope(cluster), WINDOW)
            .await
            .expect("range selectors");
        assert_eq!(a.stats.protocol, "remote-read");
        assert_eq!(b.stats.protocol, "range-selector");
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
        let out_b = analyze(&b.input, &default_policy()).expect("analyze range selectors");
        assert_eq!(
            serde_json::to_string(&out_a).expect("json"),
            serde_json::to_string(&out_b).expect("json"),
            "{cluster}"
        );
        if cluster == "east" {
            assert!(
                a.stats.bytes * 2 < b.stats.bytes,
                "remote read {} bytes, range selectors {} bytes",
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
            let sample_at = |t: i64| first.iter().any(|s| s.timestamp == t);
            // Raw samples (issue 29): the lone sample at its own time and no copy of it
            // 5 minutes on; nothing inside the gap; scrape times, not steps.
            assert!(
                sample_at(LONE),
                "the lone sample is handed on at its own time"
            );
            assert!(
                !sample_at(LONE + 5 * MIN),
                "nothing is carried forward from it"
            );
            assert!(
                !first.iter().any(|s| (GAP.0..GAP.1).contains(&s.timestamp)),
                "no sample inside the gap"
            );
            assert!(
                first.iter().any(|s| s.timestamp % MIN != 0),
                "samples keep their scrape times, off the step grid"
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

//! VictoriaMetrics's export API against range selectors of its own query API, on one
//! real VictoriaMetrics: the server refuses remote read, `auto` picks the export API and
//! the datasource test names it; the same raw samples sample for sample and the same
//! engine output for the rollout/restart/OOM fixture plus jittered scrapes, a gap, a
//! restart and a lone sample (in one span, and in spans kerf joins at their boundaries);
//! far fewer bytes.

use kerf::analysis::{analyze, default_policy};
use kerf::datasource::prometheus::{ClientAuth, Protocol, ProtocolChoice};
use kerf::datasource::{Collection, Source, Window};

use crate::support::prometheus::Prometheus;
use crate::support::series::{fixture, jittered, scope, source, END, START, WINDOW};
use crate::support::victoria::Victoria;

/// Asserts `a` (export) and `b` (range selectors) hand the engine the same input and
/// get the same answer.
fn same(a: &Collection, b: &Collection, what: &str) {
    assert_eq!(a.stats.protocol, "vm-export", "{what}");
    assert_eq!(b.stats.protocol, "range-selector", "{what}");
    assert!(!a.input.containers.is_empty(), "{what}");
    assert_eq!(a.workloads, b.workloads, "{what}");
    assert_eq!(a.input.containers.len(), b.input.containers.len(), "{what}");
    for (x, y) in a.input.containers.iter().zip(&b.input.containers) {
        // Whole observations compared (every sample); the message stays short.
        assert!(
            x == y,
            "{what}: {} differs between the protocols",
            x.target.name
        );
    }
    assert_eq!(a.stats.samples, b.stats.samples, "{what}");
    let out_a = analyze(&a.input, &default_policy()).expect("analyze export");
    let out_b = analyze(&b.input, &default_policy()).expect("analyze range selectors");
    assert_eq!(
        serde_json::to_string(&out_a).expect("json"),
        serde_json::to_string(&out_b).expect("json"),
        "{what}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn victoria_metrics_export_and_range_selectors_give_identical_samples_and_recommendations() {
    let mut om = fixture();
    jittered(&mut om);
    let vm = Victoria::with_data(&om).await;
    let auto = source(&vm.url, ClientAuth::None);
    assert!(
        matches!(auto.protocol().await, Ok(Protocol::VmExport)),
        "VictoriaMetrics answers the export API"
    );
    let report = auto.test(&scope("east")).await.expect("test");
    assert_eq!(report.remote_read, Some(false), "{report:?}");
    assert_eq!(report.protocol.as_deref(), Some("vm-export"), "{report:?}");
    assert!(
        report
            .message
            .contains("remote read: no; usage read with vm-export"),
        "{}",
        report.message
    );
    let forced = source(&vm.url, ClientAuth::None).with_protocol(ProtocolChoice::RemoteRead);
    let err = forced
        .collect(&scope("east"), WINDOW)
        .await
        .expect_err("remote read is forced but refused");
    assert!(err.to_string().contains("refused it"), "{err}");

    let exported = source(&vm.url, ClientAuth::None).with_protocol(ProtocolChoice::VmExport);
    let ranged = source(&vm.url, ClientAuth::None).with_protocol(ProtocolChoice::QueryRange);
    for cluster in ["east", "west", "bare"] {
        let a = exported
            .collect(&scope(cluster), WINDOW)
            .await
            .expect("export");
        let b = ranged
            .collect(&scope(cluster), WINDOW)
            .await
            .expect("range selectors");
        same(&a, &b, cluster);
        if cluster == "east" {
            // Both send every raw sample (2-4 per step here); the export, gzipped, sends
            // fewer bytes, several times fewer per sample decoded.
            let per = |c: &Collection| c.stats.bytes as f64 / c.stats.samples_decoded as f64;
            assert!(
                a.stats.bytes < b.stats.bytes && per(&a) * 3.0 < per(&b),
                "export {} bytes for {} samples, range selectors {} bytes for {}",
                a.stats.bytes,
                a.stats.samples_decoded,
                b.stats.bytes,
                b.stats.samples_decoded
            );
        }
    }
    // 1 s steps over 6 h: range selectors read the window in three spans of at most
    // 10,000 steps, joined where they meet; the same raw samples as the export.
    let fine = Window {
        start_ms: START,
        end_ms: END,
        step_seconds: 1,
    };
    let a = exported
        .collect(&scope("east"), fine)
        .await
        .expect("export");
    let b = ranged
        .collect(&scope("east"), fine)
        .await
        .expect("range selectors");
    same(&a, &b, "east at 1 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn victoria_metrics_reads_the_workloads_prometheus_reads_and_prometheus_refuses_the_export_api(
) {
    let om = fixture();
    let (vm, prom) = (
        Victoria::with_data(&om).await,
        Prometheus::with_data(&om, false),
    );
    // The same workloads, containers and container lifetimes as Prometheus gives.
    let shape = |c: &Collection| {
        let mut v: Vec<(String, String, Vec<String>)> = c
            .input
            .containers
            .iter()
            .map(|x| {
                let ids = x.cpu.series.iter().map(|s| s.id.clone()).collect();
                (x.target.name.clone(), x.target.release.clone(), ids)
            })
            .collect();
        v.sort();
        v
    };
    let from_vm = source(&vm.url, ClientAuth::None)
        .collect(&scope("east"), WINDOW)
        .await
        .expect("collect from VictoriaMetrics");
    assert_eq!(from_vm.stats.protocol, "vm-export");
    let from_prom = source(&prom.url, ClientAuth::None)
        .collect(&scope("east"), WINDOW)
        .await
        .expect("collect from Prometheus");
    assert_eq!(shape(&from_vm), shape(&from_prom));
    assert!(from_vm
        .input
        .containers
        .iter()
        .all(|c| !c.memory.series[0].samples.is_empty()));

    let forced = source(&prom.url, ClientAuth::None).with_protocol(ProtocolChoice::VmExport);
    let err = forced
        .collect(&scope("east"), WINDOW)
        .await
        .expect_err("Prometheus has no export API");
    assert!(err.to_string().contains("refused it"), "{err}");
    let report = forced.test(&scope("east")).await.expect("test");
    assert_eq!(
        report.protocol.as_deref(),
        Some("none (the export API is forced but refused)"),
        "{report:?}"
    );
}

//! What the embedded datasource's tests share: a real usage store in a temp dir, and
//! series as the agent's collector writes them (kube-state-metrics names and labels,
//! cAdvisor usage), made from literals.

use crate::datasource::raw::Labels;
use crate::datasource::{ClusterScope, Window};
use crate::store::usage::{UsageOptions, UsageStore, WriteSeries, FILE_NAME, METRIC_NAME};

/// A slot start in November 2023: the window's end in the tests is after it.
pub const T0: i64 = 1_699_999_200_000;
pub const MIN: i64 = 60_000;
pub const MIB: f64 = 1_048_576.0;

/// A store in a new temp dir (kept alive by the returned dir).
pub fn open() -> (tempfile::TempDir, UsageStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store =
        UsageStore::open_and_migrate(&dir.path().join(FILE_NAME), &UsageOptions::default(), T0)
            .expect("usage store");
    (dir, store)
}

pub fn labels(metric: &str, pairs: &[(&str, &str)]) -> Labels {
    let mut out: Labels = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    out.insert(METRIC_NAME.into(), metric.into());
    out
}

pub fn series(metric: &str, pairs: &[(&str, &str)], samples: Vec<(i64, f64)>) -> WriteSeries {
    WriteSeries {
        labels: labels(metric, pairs),
        samples,
    }
}

/// `value` every 30 s in `[from, to)`, 7.3 s off the minute.
pub fn every_30s(from: i64, to: i64, value: f64) -> Vec<(i64, f64)> {
    (0..)
        .map(|k| from + 7_300 + k * 30_000)
        .take_while(|t| *t < to)
        .map(|t| (t, value))
        .collect()
}

/// Prometheus's staleness marker.
pub fn marker() -> f64 {
    f64::from_bits(crate::datasource::prometheus::samples::STALE_NAN_BITS)
}

pub fn scope(cluster: &str) -> ClusterScope {
    ClusterScope {
        cluster: cluster.into(),
        selector_label: None,
        selector_value: None,
    }
}

/// Six hours ending 8 hours after `T0`, at a 60 s step.
pub const END: i64 = T0 + 8 * 60 * MIN;
pub const WINDOW: Window = Window {
    start_ms: END - 6 * 60 * MIN,
    end_ms: END,
    step_seconds: 60,
};

/// One pod of a Deployment as kube-state-metrics exports it, over `[from, to)`: owner,
/// creation, requests and limits of container `app`.
pub struct PodSpec<'a> {
    pub ns: &'a str,
    pub pod: &'a str,
    pub uid: &'a str,
    pub owner_kind: &'a str,
    pub owner: &'a str,
    pub from: i64,
    pub to: i64,
    pub cpu_request: f64,
    pub memory_limit: f64,
}

pub fn ksm_pod<'a>(p: &PodSpec<'a>, out: &mut Vec<WriteSeries>) {
    let base = [("namespace", p.ns), ("pod", p.pod), ("uid", p.uid)];
    let with = |extra: [(&'a str, &'a str); 3]| -> Vec<(&'a str, &'a str)> {
        base.iter().copied().chain(extra).collect()
    };
    let mut owner = base.to_vec();
    owner.extend([
        ("owner_kind", p.owner_kind),
        ("owner_name", p.owner),
        ("owner_is_controller", "true"),
    ]);
    let each = |v: f64| every_30s(p.from, p.to, v);
    out.push(series("kube_pod_owner", &owner, each(1.0)));
    out.push(series(
        "kube_pod_created",
        &base,
        each((p.from / 1000) as f64),
    ));
    out.push(series(
        "kube_pod_container_resource_requests",
        &with([("container", "app"), ("resource", "cpu"), ("unit", "core")]),
        each(p.cpu_request),
    ));
    out.push(series(
        "kube_pod_container_resource_limits",
        &with([
            ("container", "app"),
            ("resource", "memory"),
            ("unit", "byte"),
        ]),
        each(p.memory_limit),
    ));
}

/// cAdvisor series of container `app` of `pod` (instance `id`) over `[from, to)`,
/// every 15 s: `cores` of CPU and `bytes` of memory.
pub fn cadvisor(
    (ns, pod, id): (&str, &str, &str),
    (from, to): (i64, i64),
    cores: f64,
    bytes: f64,
    out: &mut Vec<WriteSeries>,
) {
    let l = [
        ("namespace", ns),
        ("pod", pod),
        ("container", "app"),
        ("id", id),
    ];
    let times: Vec<i64> = (0..)
        .map(|k| from + 2_000 + k * 15_000)
        .take_while(|t| *t < to)
        .collect();
    let cpu = times
        .iter()
        .map(|t| (*t, cores * (t - from) as f64 / 1000.0))
        .collect();
    let mem = times.iter().map(|t| (*t, bytes)).collect();
    out.push(series("container_cpu_usage_seconds_total", &l, cpu));
    out.push(series("container_memory_working_set_bytes", &l, mem));
}

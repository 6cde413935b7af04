//! cAdvisor's container counters in the Prometheus text format, at `/metrics/cadvisor`
//! as a kubelet serves them: CPU usage, CFS periods and throttled periods, working set,
//! OOM events. A Prometheus scraping this endpoint gives kerf's datasource the same
//! series a real cluster's would.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::routing::get;
use axum::Router;

use super::Shared;
use crate::sim::kubelet::ContainerRun;

pub(crate) async fn serve(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    let app = Router::new().route(
        "/metrics/cadvisor",
        get(move || {
            let shared = shared.clone();
            async move { render(&shared, None) }
        }),
    );
    if let Err(e) = axum::serve(listener, app).await {
        tracing::warn!(error = %e, "sim kubelet: metrics server stopped");
    }
}

/// Metric name, type, help, and the value of one container.
type Family = (
    &'static str,
    &'static str,
    &'static str,
    fn(&ContainerRun) -> f64,
);

/// The counters of every pod, or of those on `node` (what that node's kubelet serves).
pub(crate) fn render(shared: &Shared, node: Option<&str>) -> String {
    let pods = shared.pods.lock().unwrap_or_else(|e| e.into_inner());
    let mut rows: Vec<(String, &super::PodRun, &ContainerRun)> = pods
        .values()
        .filter(|p| node.is_none_or(|n| n == p.node))
        .flat_map(|p| {
            p.containers
                .iter()
                .map(move |c| (format!("{}/{}/{}", p.namespace, p.name, c.name), p, c))
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let families: [Family; 5] = [
        (
            "container_cpu_usage_seconds_total",
            "counter",
            "Cumulative cpu time consumed in seconds.",
            |c| c.cpu_seconds,
        ),
        (
            "container_cpu_cfs_periods_total",
            "counter",
            "Number of elapsed enforcement period intervals.",
            |c| c.periods as f64,
        ),
        (
            "container_cpu_cfs_throttled_periods_total",
            "counter",
            "Number of throttled period intervals.",
            |c| c.throttled_periods as f64,
        ),
        (
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set in bytes.",
            |c| c.memory_bytes,
        ),
        (
            "container_oom_events_total",
            "counter",
            "Count of out of memory events observed for the container.",
            |c| f64::from(c.oom_kills),
        ),
    ];
    let mut out = String::new();
    for (name, kind, help, value) in families {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (_, pod, c) in &rows {
            let _ = writeln!(
                out,
                "{name}{{container=\"{}\",namespace=\"{}\",pod=\"{}\"}} {}",
                c.name,
                pod.namespace,
                pod.name,
                value(c)
            );
        }
    }
    out
}

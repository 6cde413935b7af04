//! cAdvisor's container counters in the Prometheus text format, at `/metrics/cadvisor`
//! as a kubelet serves them (`sim::kubelet::cadvisor`: CPU usage, CFS periods and
//! throttled periods, working set, OOM events, with the kubelet's timestamps). A
//! Prometheus scraping this endpoint gives kerf's datasource the same series a real
//! cluster's would.

use std::sync::Arc;

use axum::routing::get;
use axum::Router;

use super::Shared;
use crate::sim::kubelet::cadvisor::{self, PodCgroups};

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

/// The page of every pod, or of those on `node` (what that node's kubelet serves).
pub(crate) fn render(shared: &Shared, node: Option<&str>) -> String {
    let pods = shared.pods.lock().unwrap_or_else(|e| e.into_inner());
    let mut rows: Vec<PodCgroups> = pods
        .iter()
        .filter(|(_, p)| node.is_none_or(|n| n == p.node))
        .map(|(uid, p)| PodCgroups {
            namespace: &p.namespace,
            name: &p.name,
            uid,
            containers: p
                .containers
                .iter()
                .zip(
                    p.images
                        .iter()
                        .map(String::as_str)
                        .chain(std::iter::repeat("")),
                )
                .collect(),
        })
        .collect();
    cadvisor::render(&mut rows)
}

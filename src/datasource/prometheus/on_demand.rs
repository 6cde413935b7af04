//! What the API asks of a Prometheus source outside runs: one container's raw series
//! for a chart (read as runs read them), and the datasource test (reachability, credentials, the metrics kerf needs,
//! whether the server streams remote read or answers VictoriaMetrics's export API).

use super::merged::Merged;
use super::protocol::{self, Protocol, ProtocolChoice};
use super::queries::{self, Selector};
use super::remote_read::{MatchType, Matcher, ReadQuery};
use super::stream::{read_raw, Reader};
use super::vm_export;
use super::{check, PrometheusSource};
use crate::analysis::Series;
use crate::datasource::mapping::{chart_series, PodIndex, WorkloadKey};
use crate::datasource::raw::{label, metric};
use crate::datasource::{ClusterScope, DatasourceError, Group, TestReport, UsageResource, Window};

/// Only the chart's container: the namespace's inventory (instant queries) names the
/// workload's pods, and one selector reads that container of those pods, raw, with the
/// source's protocol (the chart downsamples for drawing only).
pub(super) async fn usage(
    src: &PrometheusSource,
    scope: &ClusterScope,
    workload: &WorkloadKey,
    container: &str,
    resource: UsageResource,
    window: Window,
) -> Result<Vec<Series>, DatasourceError> {
    let window_s = check(window)?;
    let ns = workload.namespace.as_str();
    let namespaces = vec![ns.to_string()];
    let inventory = src
        .inventory(&Selector::new(scope, &namespaces), window_s, window.end_ms)
        .await?;
    let pods = PodIndex::build(&inventory);
    drop(inventory);
    let mut group = Group {
        namespaces,
        ..Group::default()
    };
    if pods.ksm_present {
        match pods
            .workloads_by_namespace()
            .remove(ns)
            .and_then(|mut w| w.remove(workload))
        {
            Some(w) => group.pods = w.pods,
            None => return Ok(Vec::new()),
        }
    }
    let name_of = match resource {
        UsageResource::Cpu => metric::CPU,
        UsageResource::Memory => metric::MEMORY,
    };
    let mut matchers = queries::usage_matchers(scope, &group.namespaces, &group.pods);
    matchers[0] = Matcher::new(MatchType::Eq, label::NAME, name_of);
    matchers.push(Matcher::new(MatchType::Eq, label::CONTAINER, container));
    let query = ReadQuery {
        start_ms: window.start_ms,
        end_ms: window.end_ms,
        matchers,
    };
    let reader = match src.protocol().await? {
        Protocol::RemoteRead => Reader::RemoteRead,
        Protocol::VmExport => Reader::VmExport,
        Protocol::RangeSelector => Reader::RangeSelector,
    };
    let mut merged = Merged::default();
    for s in read_raw(src, reader, &query).await? {
        merged.add(s.labels, Some(queries::USAGE_LABELS), s.samples);
    }
    let series = merged.into_series();
    Ok(chart_series(
        window,
        &pods,
        (workload, container),
        resource,
        series,
    ))
}

/// The report of a test that stopped before the metrics could be checked.
fn not_checked(reachable: bool, message: String) -> TestReport {
    TestReport {
        reachable,
        authenticated: false,
        remote_read: None,
        protocol: None,
        missing_metrics: metric::REQUIRED.iter().map(|m| m.to_string()).collect(),
        message,
    }
}

pub(super) async fn test(
    src: &PrometheusSource,
    scope: &ClusterScope,
) -> Result<TestReport, DatasourceError> {
    // A reachability probe asks the real server about the real present.
    let now = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
    match src.client.ping(now).await {
        Ok(()) => {}
        Err(DatasourceError::Unauthorized(code)) => {
            let message = format!("the datasource refused the credentials (HTTP {code})");
            return Ok(not_checked(true, message));
        }
        Err(e @ DatasourceError::Redirected(_)) => return Ok(not_checked(true, e.to_string())),
        Err(e @ DatasourceError::Unreachable(_)) => return Ok(not_checked(false, e.to_string())),
        Err(e) => return Err(e),
    }
    let present = src
        .client
        .query(&queries::presence(&Selector::new(scope, &[])), now)
        .await?;
    let missing: Vec<String> = metric::REQUIRED
        .iter()
        .filter(|m| !present.iter().any(|s| s.label("__name__") == **m))
        .map(|m| m.to_string())
        .collect();
    let remote_read = protocol::probe(&src.client, now).await?.is_ok();
    let export = (!remote_read || src.choice == ProtocolChoice::VmExport)
        && vm_export::probe(&src.client, now).await?.is_ok();
    let used = match (src.choice, remote_read, export) {
        (ProtocolChoice::QueryRange, _, _) | (ProtocolChoice::Auto, false, false) => {
            "range-selector"
        }
        (ProtocolChoice::Auto | ProtocolChoice::RemoteRead, true, _) => "remote-read",
        (ProtocolChoice::RemoteRead, false, _) => "none (remote read is forced but refused)",
        (ProtocolChoice::Auto | ProtocolChoice::VmExport, _, true) => "vm-export",
        (ProtocolChoice::VmExport, _, false) => "none (the export API is forced but refused)",
    };
    let facts = format!(
        "remote read: {}; usage read with {used}",
        if remote_read { "yes" } else { "no" }
    );
    let message = if missing.is_empty() {
        format!("reachable, authenticated, and every metric kerf needs is present; {facts}")
    } else {
        format!(
            "reachable and authenticated; missing: {}; {facts}",
            missing.join(", ")
        )
    };
    Ok(TestReport {
        reachable: true,
        authenticated: true,
        remote_read: Some(remote_read),
        protocol: Some(used.to_string()),
        missing_metrics: missing,
        message,
    })
}

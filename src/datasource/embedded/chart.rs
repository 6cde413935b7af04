//! One container's raw series for a chart, read as runs read them: the namespace's
//! inventory names the workload's pods, then one read takes that container of those
//! pods (the chart downsamples for drawing only).

use super::selection::Selection;
use super::stream::usage_query;
use super::{check, EmbeddedSource};
use crate::analysis::Series;
use crate::datasource::mapping::{chart_series, PodIndex, WorkloadKey};
use crate::datasource::prometheus::merged::usage_of;
use crate::datasource::raw::{label, metric, RawSeries};
use crate::datasource::{ClusterScope, DatasourceError, UsageResource, Window};
use crate::store::usage::LabelMatcher;

pub(super) async fn usage(
    src: &EmbeddedSource,
    scope: &ClusterScope,
    workload: &WorkloadKey,
    (container, resource): (&str, UsageResource),
    window: Window,
) -> Result<Vec<Series>, DatasourceError> {
    let window_ms = check(window)?;
    src.check_scope(scope)?;
    let ns = workload.namespace.clone();
    let sel = Selection::new(&src.cluster, scope, std::slice::from_ref(&ns));
    let inventory_sel = sel.clone();
    let end = window.end_ms;
    let inventory = src
        .read(move |r| super::inventory::inventory(r, &inventory_sel, end, window_ms))
        .await?;
    let pods = PodIndex::build(&inventory);
    drop(inventory);
    let mut sel = sel;
    if pods.ksm_present {
        match pods
            .workloads_by_namespace()
            .remove(&ns)
            .and_then(|mut w| w.remove(workload))
        {
            Some(w) => sel = sel.pods(&ns, &w.pods),
            None => return Ok(Vec::new()),
        }
    }
    let name = match resource {
        UsageResource::Cpu => metric::CPU,
        UsageResource::Memory => metric::MEMORY,
    };
    let q = usage_query(&sel, &[name], window)
        .matching(LabelMatcher::equal(label::CONTAINER, container));
    let stored = src.read(move |r| r.select(&q)).await?;
    let raw = stored
        .into_iter()
        .map(|s| RawSeries {
            labels: s.labels,
            samples: s.samples,
        })
        .collect();
    let usage = usage_of(raw)
        .map_err(|why| DatasourceError::Decode(format!("datasource {}: {why}", src.name())))?;
    let series = match resource {
        UsageResource::Cpu => usage.cpu,
        UsageResource::Memory => usage.memory,
    };
    Ok(chart_series(
        window,
        &pods,
        (workload, container),
        resource,
        series,
    ))
}

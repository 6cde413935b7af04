//! Answers read whole before their workloads are sent: the export API's (series come
//! in any order), range selectors' (span by span), and one selector's for a chart. Each
//! series goes to the workload whose pod it is, or its fault does.

use std::collections::HashMap;

use super::{fault_in, Got, Member, RESUMES, SERIES_PER_POD};
use crate::datasource::prometheus::queries;
use crate::datasource::prometheus::range_selector::{self, span_steps};
use crate::datasource::prometheus::remote_read::{MatchType, Matcher, ReadQuery};
use crate::datasource::prometheus::samples::{check_order, drop_stale, SeriesFault};
use crate::datasource::prometheus::PrometheusSource;
use crate::datasource::raw::{label, RawSeries};
use crate::datasource::{ClusterScope, DatasourceError};

/// `{name op "value", …}`: the selector text of remote-read matchers.
pub(super) fn selector_text(matchers: &[Matcher]) -> String {
    let parts: Vec<String> = matchers
        .iter()
        .map(|m| {
            let op = match m.kind {
                MatchType::Eq => "=",
                MatchType::Neq => "!=",
                MatchType::Re => "=~",
                MatchType::Nre => "!~",
            };
            format!("{}{op}{}", m.name, queries::quote(&m.value))
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// Which members each `(namespace, pod)` belongs to (a pod name reused by two
/// workloads belongs to both; each keeps only its own series when mapped).
pub(super) fn owners(members: &[Member]) -> HashMap<(&str, &str), Vec<usize>> {
    let mut owners: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, m) in members.iter().enumerate() {
        if let Some(key) = &m.key {
            for pod in &m.pod_names {
                owners
                    .entry((key.namespace.as_str(), pod.as_str()))
                    .or_default()
                    .push(i);
            }
        }
    }
    owners
}

/// Hands `series` (or its fault) to the members whose pod it is.
fn hold(
    owners: &HashMap<(&str, &str), Vec<usize>>,
    held: &mut [Got],
    series: RawSeries,
    fault: Option<SeriesFault>,
) {
    let at = (series.label(label::NAMESPACE), series.label(label::POD));
    let targets: Vec<usize> = match owners.get(&at) {
        _ if owners.is_empty() => vec![0],
        Some(many) => many.clone(),
        None => return,
    };
    let why = fault.map(|f| fault_in(&f, &series.labels));
    for i in targets {
        match (&why, held[i].as_mut()) {
            (Some(why), Ok(_)) => held[i] = Err(why.clone()),
            (None, Ok(list)) => list.push(series.clone()),
            (_, Err(_)) => {}
        }
    }
}

/// Reads one batch over the export API (one `match[]` per workload), whole: series come
/// in any order. A cut answer is read again whole: nothing of it was sent.
pub(super) async fn read_export_batch(
    src: &PrometheusSource,
    members: &[Member],
) -> Result<Vec<Got>, DatasourceError> {
    let selectors: Vec<String> = members
        .iter()
        .map(|m| selector_text(&m.query.matchers))
        .collect();
    let owners = owners(members);
    let (from, to) = (members[0].query.start_ms, members[0].query.end_ms);
    let mut resumes = 0u32;
    loop {
        let mut stream = src.client.vm_export(&selectors, from, to).await?;
        let mut held: Vec<Got> = members.iter().map(|_| Ok(Vec::new())).collect();
        let outcome = loop {
            match stream.next().await {
                Ok(Some(series)) => hold(&owners, &mut held, series, None),
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        src.client.count_samples(stream.counts.samples);
        drop(stream);
        match outcome {
            Ok(()) => return Ok(held),
            Err(e @ DatasourceError::Unreachable(_)) if resumes < RESUMES => {
                resumes += 1;
                tracing::debug!(error = %e, "export answer cut short; reading it again");
            }
            Err(e) => return Err(e),
        }
    }
}

/// Reads one batch with range selectors: one selector naming every member's pods, in
/// spans sized so a span of the batch's series stays inside the range selectors' share
/// of the samples budget.
pub(super) async fn read_selector_batch(
    src: &PrometheusSource,
    (scope, step_seconds): (&ClusterScope, u32),
    members: &[Member],
) -> Result<Vec<Got>, DatasourceError> {
    let selector = match members {
        [one] => selector_text(&one.query.matchers),
        many => {
            let mut namespaces: Vec<String> = Vec::new();
            let mut pods: Vec<String> = Vec::new();
            for m in many {
                if let Some(key) = &m.key {
                    if !namespaces.contains(&key.namespace) {
                        namespaces.push(key.namespace.clone());
                    }
                }
                pods.extend(m.pod_names.iter().cloned());
            }
            selector_text(&queries::usage_matchers(scope, &namespaces, &pods))
        }
    };
    let series: u64 = members.iter().map(|m| m.pods as u64 * SERIES_PER_POD).sum();
    let (from, to) = (members[0].query.start_ms, members[0].query.end_ms);
    let step_ms = i64::from(step_seconds.max(1)) * 1000;
    let budget = src.budget.for_range_selectors();
    let span_ms = span_steps(budget.samples_per_request, series) as i64 * step_ms;
    let owners = owners(members);
    let mut held: Vec<Got> = members.iter().map(|_| Ok(Vec::new())).collect();
    for (s, fault) in range_selector::read(&src.client, &selector, (from, to), span_ms).await? {
        hold(&owners, &mut held, s, fault);
    }
    Ok(held)
}

/// Every series `query` selects, raw, read whole with `reader` (charts: one container
/// of one workload's pods), staleness markers dropped; a fault is an error.
pub(in crate::datasource::prometheus) async fn read_raw(
    src: &PrometheusSource,
    reader: super::Reader,
    query: &ReadQuery,
) -> Result<Vec<RawSeries>, DatasourceError> {
    let selector = selector_text(&query.matchers);
    let range = (query.start_ms, query.end_ms);
    let mut out: Vec<(RawSeries, Option<SeriesFault>)> = Vec::new();
    match reader {
        super::Reader::RemoteRead => {
            let mut stream = src.client.remote_read(std::slice::from_ref(query)).await?;
            while let Some(read) = stream.next().await? {
                let series = RawSeries {
                    labels: read.labels,
                    samples: read.samples,
                };
                out.push((series, read.fault));
            }
            src.client.count_samples(stream.counts.samples);
        }
        super::Reader::VmExport => {
            let mut stream = src.client.vm_export(&[selector], range.0, range.1).await?;
            while let Some(series) = stream.next().await? {
                out.push((series, None));
            }
            src.client.count_samples(stream.counts.samples);
        }
        super::Reader::RangeSelector => {
            let span = range_selector::MAX_SPAN_STEPS as i64 * 1000;
            out = range_selector::read(&src.client, &selector, range, span).await?;
        }
    }
    let mut series = Vec::with_capacity(out.len());
    for (mut s, fault) in out {
        if let Some(fault) = fault.or_else(|| check_order(&s.samples).err()) {
            return Err(DatasourceError::Decode(format!(
                "datasource {}: {}",
                src.client.name(),
                fault_in(&fault, &s.labels)
            )));
        }
        drop_stale(&mut s.samples);
        series.push(s);
    }
    Ok(series)
}

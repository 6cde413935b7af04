//! A scan's results as rows: per workload its cost change and HPA, per container the
//! values in force and recommended (the hub's own `plan`), the confidence, the data
//! quality and the reason in a few words.

use serde::Serialize;

use crate::datasource::WorkloadInfo;
use crate::export::plan::{plan, ContainerPlan};
use crate::runs::analyze::ChunkOutcome;
use crate::wire::{HpaSummary, RecommendationSummary, ResourceSummary};
use crate::workload::WorkloadKey;

/// How a container's line is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Nothing changes.
    None,
    /// A saving.
    Saving,
    /// The evidence is partial or missing.
    Attention,
    /// Growth: under-provisioned, OOM-killed, leaking or without a request.
    Risk,
}

/// One container of a scanned workload.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRow {
    #[serde(flatten)]
    pub plan: ContainerPlan,
    /// The lowest confidence of its recommendations, if any.
    pub confidence: Option<i64>,
    /// `available`, `partial`, `unavailable` (the hub's reading, informing reasons aside).
    pub data_quality: String,
    pub reason: String,
    pub severity: Severity,
}

/// One scanned workload.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub replicas: Option<u32>,
    /// Monthly cost change of the requests (`null` when replicas are unknown).
    pub monthly_cost_delta: Option<f64>,
    pub data_quality: String,
    pub notices: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hpa: Option<HpaSummary>,
    pub containers: Vec<ContainerRow>,
    /// Why the workload could not be analyzed, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Row {
    /// The workload's identity (rows sort by it).
    pub fn key(&self) -> WorkloadKey {
        WorkloadKey::new(&self.namespace, self.kind.clone(), &self.name)
    }
}

fn words(code: &str) -> String {
    code.replace('-', " ")
}

/// The reason of one resource, and whether it is a risk or a saving.
fn resource_reason(r: &ResourceSummary, memory: bool) -> (String, Severity) {
    let has = |n: &str| r.notices.iter().any(|x| x == n);
    if let Some(req) = &r.requests {
        return match req.current {
            None => ("no request set".into(), Severity::Risk),
            Some(c) if req.suggested > c && memory && has("oom-kill-detected") => {
                ("OOM-killed".into(), Severity::Risk)
            }
            Some(c) if req.suggested > c && memory && has("potential-memory-leak") => {
                ("grows like a leak".into(), Severity::Risk)
            }
            Some(c) if req.suggested > c => ("under-provisioned".into(), Severity::Risk),
            Some(_) => ("over-provisioned".into(), Severity::Saving),
        };
    }
    if r.limits.is_some() {
        return ("limit only".into(), Severity::Saving);
    }
    if memory && has("potential-memory-leak") {
        return ("potential leak, no change".into(), Severity::Attention);
    }
    let why = r
        .no_action_reason
        .as_deref()
        .map_or("no change".into(), words);
    let severity = if r.quality_reasons.is_empty() {
        Severity::None
    } else {
        Severity::Attention
    };
    (why, severity)
}

fn container_row(plan: ContainerPlan, s: Option<&crate::wire::ContainerSummary>) -> ContainerRow {
    let mut parts: Vec<(String, String, Severity)> = Vec::new();
    let mut confidence: Option<i64> = None;
    let mut quality = "unavailable".to_string();
    if let Some(s) = s {
        let mut worst = None;
        for (name, r, memory) in [("cpu", &s.cpu, false), ("memory", &s.memory, true)] {
            let Some(r) = r else { continue };
            for v in [&r.requests, &r.limits].into_iter().flatten() {
                confidence = Some(confidence.map_or(v.confidence, |c| c.min(v.confidence)));
            }
            worst = worst.max(Some(r.data_quality));
            let (why, severity) = resource_reason(r, memory);
            parts.push((name.to_string(), why, severity));
        }
        if let Some(w) = worst {
            quality = w.as_str().to_string();
        }
    }
    let severity = parts
        .iter()
        .map(|p| p.2)
        .max()
        .unwrap_or(Severity::Attention);
    let reason = match parts.as_slice() {
        [] => "no result".to_string(),
        [(_, a, _), (_, b, _)] if a == b => a.clone(),
        many => many
            .iter()
            .map(|(name, why, _)| format!("{name} {why}"))
            .collect::<Vec<_>>()
            .join("; "),
    };
    ContainerRow {
        plan,
        confidence,
        data_quality: quality,
        reason,
        severity,
    }
}

/// The rows of one analyzed chunk; `infos` are its workloads as collected.
pub fn rows(outcome: ChunkOutcome, infos: &[WorkloadInfo]) -> Vec<Row> {
    let replicas = |ns: &str, kind: &str, name: &str| {
        infos
            .iter()
            .find(|i| (i.namespace.as_str(), i.kind.as_str(), i.name.as_str()) == (ns, kind, name))
            .and_then(|i| i.replicas)
    };
    let mut out = Vec::new();
    for (seen, rec) in outcome.analyzed {
        let summary: Option<RecommendationSummary> = serde_json::from_str(&rec.summary).ok();
        let current: serde_json::Value =
            serde_json::from_str(&seen.current).unwrap_or(serde_json::Value::Null);
        let containers = plan(&current, summary.as_ref())
            .into_iter()
            .map(|p| {
                let s = summary
                    .as_ref()
                    .and_then(|s| s.containers.iter().find(|c| c.name == p.name));
                container_row(p, s)
            })
            .collect();
        out.push(Row {
            replicas: replicas(&seen.namespace, &seen.kind, &seen.name),
            namespace: seen.namespace,
            kind: seen.kind,
            name: seen.name,
            monthly_cost_delta: rec.cost_delta,
            data_quality: rec.data_quality,
            notices: summary
                .as_ref()
                .map(|s| s.notices.clone())
                .unwrap_or_default(),
            hpa: summary.and_then(|s| s.hpa),
            containers,
            error: None,
        });
    }
    for (seen, why) in outcome.failed {
        out.push(Row {
            replicas: replicas(&seen.namespace, &seen.kind, &seen.name),
            namespace: seen.namespace,
            kind: seen.kind,
            name: seen.name,
            monthly_cost_delta: None,
            data_quality: "unavailable".into(),
            notices: Vec::new(),
            hpa: None,
            containers: Vec::new(),
            error: Some(why),
        });
    }
    out
}

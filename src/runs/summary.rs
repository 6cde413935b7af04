//! What runs derive from one workload's engine results: the small summary the lists and
//! the agent feed serve (values per container × resource), the columns lists filter and
//! sort on, and the estimated monthly cost delta.
//!
//! Cost delta (monthly) = `((new − current pod CPU request in millicores) / 1000 × price
//! per vCPU-hour + (new − current pod memory request in bytes) / 2^30 × price per
//! GiB-hour) × 730 hours × replicas`.
//!
//! Only `requests` count (they are what the scheduler reserves and nodes are paid for),
//! and a pod's request is its *effective* one ([`crate::workload::effective_pod_value`]):
//! the app containers and sidecars summed, or a larger init container's. Without init
//! containers or sidecars that is the sum over containers of new − current. A container
//! without a request recommendation keeps its request; an unset current request counts
//! as 0. kube-state-metrics does not say in which order init containers and sidecars
//! run, so init containers are counted as running before the sidecars start (the order
//! meshes inject them in). Unknown replicas give no estimate (`null`), never a made-up
//! number.

use crate::analysis::{QualityStatus as Quality, Reason, Resource, ResourceAnalysis, Setting};
use crate::wire::summary::{
    ContainerSummary, HpaSummary, QualityStatus, RecommendationSummary, ResourceSummary,
    SettingValues,
};
use crate::workload::{effective_pod_value, ContainerRole};
use std::collections::BTreeMap;

/// Hours in an average month (8760 / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The derived view of one workload's results.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// What lists and the agent feed serve.
    pub summary: RecommendationSummary,
    /// Some recommendation suggests a change.
    pub has_changes: bool,
    /// Worst data-quality status over the results.
    pub data_quality: &'static str,
    /// Every notice over the results, sorted, de-duplicated.
    pub notices: Vec<String>,
    /// Lowest recommendation confidence; -1 when there is none.
    pub confidence: i64,
    /// Monthly cost delta; `None` when replicas are unknown.
    pub cost_delta: Option<f64>,
    /// What applying it protects against (lists sort by it): [`RISK_OOM`],
    /// [`RISK_LEAK`], [`RISK_UNDER_PROVISIONED`] or 0.
    pub risk: i64,
}

/// The container was OOM-killed and the recommendation changes it.
pub const RISK_OOM: i64 = 3;
/// Memory grows like a leak and the recommendation changes it.
pub const RISK_LEAK: i64 = 2;
/// A request is raised: the container uses more than it reserves.
pub const RISK_UNDER_PROVISIONED: i64 = 1;

/// The risk class of a workload's results (see [`Summary::risk`]).
fn risk(has_changes: bool, notices: &[String], raised: bool) -> i64 {
    let has = |n: &str| notices.iter().any(|x| x == n);
    match () {
        _ if !has_changes => 0,
        _ if has("oom-kill-detected") => RISK_OOM,
        _ if has("potential-memory-leak") => RISK_LEAK,
        _ if raised => RISK_UNDER_PROVISIONED,
        _ => 0,
    }
}

impl Summary {
    /// The summary as stored (JSON).
    pub fn stored(&self) -> String {
        serde_json::to_string(&self.summary).expect("a summary has only string keys")
    }
}

/// Data-quality reasons that say something about the analysis without making its
/// evidence worse: a release start the engine inferred from a boundary it saw, a change
/// too small to make, a clamp, limits the policy leaves alone. The engine counts them
/// towards `partial` (its contract); kerf's lists and badges do not. Every other
/// reason lowers quality. `assets/ui/quality.js` holds the same list.
pub const INFORMING_REASONS: &[&str] = &[
    "inferred-release-start",
    "no-material-change",
    "bound-applied",
    "limit-changes-disabled",
    "previous-release-usage",
    "oom-kill-detected",
    "potential-memory-leak",
];

/// True when `reason` only informs (see [`INFORMING_REASONS`]).
pub fn informs(reason: Reason) -> bool {
    INFORMING_REASONS.contains(&reason.as_str())
}

/// The hub's status of one result: the engine's, except that `partial` needs a reason
/// that lowers quality.
fn quality(r: &ResourceAnalysis) -> QualityStatus {
    match r.data_quality.status {
        Quality::Available => QualityStatus::Available,
        Quality::Partial if r.data_quality.reasons.iter().all(|x| informs(*x)) => {
            QualityStatus::Available
        }
        Quality::Partial => QualityStatus::Partial,
        Quality::Unavailable => QualityStatus::Unavailable,
    }
}

/// One container's request of one resource, now and after the recommendation (as the
/// agent applies it).
#[derive(Debug, Clone, Copy)]
struct RequestChange {
    role: ContainerRole,
    now: f64,
    new: f64,
}

/// How much a pod's effective request of one resource moves with `changes`.
fn pod_delta(changes: &[RequestChange]) -> f64 {
    let mut ordered = changes.to_vec();
    ordered.sort_by_key(|c| c.role.assumed_start());
    if ordered.iter().all(|c| c.role == ContainerRole::App) {
        return ordered.iter().map(|c| c.new - c.now).sum();
    }
    // Whole millicores and bytes, as the agent applies them.
    let pod = |value: fn(&RequestChange) -> f64| {
        effective_pod_value(
            ordered
                .iter()
                .map(|c| (c.role, value(c).max(0.0).round() as u64)),
        ) as f64
    };
    pod(|c| c.new) - pod(|c| c.now)
}

/// The summary of one resource's result, and its request now and after.
fn resource_summary(r: &ResourceAnalysis, role: ContainerRole) -> (ResourceSummary, RequestChange) {
    let in_force = &r.evidence.current_request;
    let now = if in_force.available && !in_force.unset {
        in_force.value
    } else {
        0.0
    };
    let mut change = RequestChange {
        role,
        now,
        new: now,
    };
    let (notes, lowering): (Vec<Reason>, Vec<Reason>) =
        r.data_quality.reasons.iter().partition(|x| informs(**x));
    let names = |v: Vec<Reason>| v.iter().map(|x| x.as_str().to_string()).collect();
    let mut out = ResourceSummary {
        requests: None,
        limits: None,
        data_quality: quality(r),
        quality_reasons: names(lowering),
        quality_notes: names(notes),
        coverage: r.data_quality.coverage,
        no_action_reason: r.no_action_reason.map(|n| n.as_str().to_string()),
        notices: r.notices.iter().map(|n| n.as_str().to_string()).collect(),
    };
    for rec in &r.recommendations {
        let values = SettingValues {
            current: (!rec.current_unset).then_some(rec.current_value),
            suggested: rec.suggested_value,
            confidence: rec.confidence,
        };
        match rec.setting {
            Setting::Requests => {
                // Priced as the agent applies it (`wire::applied`): after the change,
                // nothing of this delta is left over.
                let applied = match r.resource {
                    Resource::Cpu => crate::wire::applied::cpu_millis(rec.suggested_value) as f64,
                    Resource::Memory => {
                        crate::wire::applied::memory_bytes(rec.suggested_value) as f64
                    }
                };
                change.now = values.current.unwrap_or(0.0);
                change.new = applied;
                out.requests = Some(values);
            }
            Setting::Limits => out.limits = Some(values),
        }
    }
    (out, change)
}

/// How much of the window `[start_ms, end_ms]` a result's history covers, in seconds.
/// Each observation stands for the cadence before it (a counter's rate for the interval
/// since the previous scrape), and, as the engine's coverage allows, one cadence of
/// tolerance at either edge: a week of scrapes a minute apart covers the 7-day window,
/// not the 6 d 23 h 59 m between its first and last sample.
fn history_seconds(r: &ResourceAnalysis, (start_ms, end_ms): (i64, i64)) -> i64 {
    let q = &r.data_quality;
    if q.sample_count == 0 {
        return 0;
    }
    let cadence = (q.cadence_seconds * 1000.0).round() as i64;
    let mut from = q.observed_start - cadence;
    if from - start_ms <= cadence {
        from = start_ms;
    }
    let mut to = q.observed_end;
    if end_ms - to <= cadence {
        to = end_ms;
    }
    (to - from).max(0) / 1000
}

/// Summarizes `results` (one workload's, any order) under the given prices; `pods`
/// are its replicas and the roles of its sidecars and init containers (the others are
/// app containers); `window_ms` is the window they were analysed over (start, end in
/// Unix ms).
pub fn summarize(
    results: &[&ResourceAnalysis],
    (replicas, roles): (Option<u32>, &BTreeMap<String, ContainerRole>),
    prices: (f64, f64),
    window_ms: (i64, i64),
) -> Summary {
    let mut containers: Vec<ContainerSummary> = Vec::new();
    let mut worst = QualityStatus::Available;
    let mut notices: Vec<String> = Vec::new();
    let mut confidence: Option<i64> = None;
    let mut min_coverage: Option<f64> = None;
    let mut covered_seconds: Option<i64> = None;
    let mut has_changes = false;
    let mut raised = false;
    let (mut cpu_changes, mut memory_changes) = (Vec::new(), Vec::new());
    for r in results {
        worst = worst.max(quality(r));
        notices.extend(r.notices.iter().map(|n| n.as_str().to_string()));
        let coverage = r.data_quality.coverage;
        min_coverage = Some(min_coverage.map_or(coverage, |c| c.min(coverage)));
        let span = history_seconds(r, window_ms);
        covered_seconds = Some(covered_seconds.map_or(span, |c| c.min(span)));
        for rec in &r.recommendations {
            has_changes = true;
            confidence = Some(confidence.map_or(rec.confidence, |c| c.min(rec.confidence)));
            raised |= rec.setting == Setting::Requests
                && (rec.current_unset || rec.suggested_value > rec.current_value);
        }
        let name = &r.target.container;
        let role = roles.get(name).copied().unwrap_or_default();
        let (entry, change) = resource_summary(r, role);
        match r.resource {
            Resource::Cpu => cpu_changes.push(change),
            Resource::Memory => memory_changes.push(change),
        }
        let slot = match containers.iter_mut().position(|c| &c.name == name) {
            Some(i) => &mut containers[i],
            None => {
                containers.push(ContainerSummary {
                    name: name.clone(),
                    role,
                    cpu: None,
                    memory: None,
                });
                containers.last_mut().expect("just pushed")
            }
        };
        match r.resource {
            Resource::Cpu => slot.cpu = Some(entry),
            Resource::Memory => slot.memory = Some(entry),
        }
    }
    containers.sort_by(|a, b| a.name.cmp(&b.name));
    notices.sort();
    notices.dedup();
    let risk = risk(has_changes, &notices, raised);
    let (cpu_price, mem_price) = prices;
    let (cpu_delta_m, mem_delta_b) = (pod_delta(&cpu_changes), pod_delta(&memory_changes));
    let cost_delta = replicas.map(|n| {
        (cpu_delta_m / 1000.0 * cpu_price + mem_delta_b / GIB * mem_price)
            * HOURS_PER_MONTH
            * f64::from(n)
    });
    Summary {
        summary: RecommendationSummary {
            containers,
            confidence,
            coverage: min_coverage,
            data_quality: worst,
            notices: notices.clone(),
            covered_seconds,
            hpa: None,
            throttling: Vec::new(),
        },
        has_changes,
        data_quality: worst.as_str(),
        notices,
        confidence: confidence.unwrap_or(-1),
        cost_delta,
        risk,
    }
}

/// The hub's notice on a workload whose HPA scales on CPU utilization (next to the
/// engine's notices): a CPU request change moves its scaling point.
pub const HPA_NOTICE: &str = "hpa-cpu-utilization";

/// `hpa` with the CPU target that keeps today's scaling point under the summary's
/// requests (`containers` carry today's), and the notice added to `summary` when it
/// scales on CPU utilization. The HPA divides the pod's CPU by the sum of its
/// containers' requests, so the target scales by Σ today / Σ recommended.
pub fn with_hpa(
    summary: &mut Summary,
    hpa: Option<&crate::datasource::Hpa>,
    containers: &[crate::analysis::ContainerObservation],
) {
    let Some(hpa) = hpa else { return };
    let target = hpa.cpu_utilization();
    let (mut now, mut next, mut known) = (0.0, 0.0, !containers.is_empty());
    for c in containers {
        let r = &c.cpu.current_request;
        if !r.available || r.unset {
            known = false;
            continue;
        }
        let suggested = summary
            .summary
            .containers
            .iter()
            .find(|s| s.name == c.target.container)
            .and_then(|s| s.cpu.as_ref()?.requests.as_ref())
            .map_or(r.value, |v| v.suggested);
        now += r.value;
        next += suggested;
    }
    let coordinated = match target {
        Some(t) if known && next > 0.0 => Some((t * now / next).round()),
        _ => None,
    };
    let other_metrics = hpa
        .targets
        .iter()
        .filter(|t| !(t.metric == "cpu" && t.target_type == "utilization"))
        .map(|t| format!("{}/{}", t.metric, t.target_type))
        .collect();
    summary.summary.hpa = Some(HpaSummary {
        name: hpa.name.clone(),
        min_replicas: hpa.min_replicas,
        max_replicas: hpa.max_replicas,
        cpu_target_utilization: target,
        coordinated_cpu_target: coordinated,
        other_metrics,
    });
    if target.is_some() && !summary.notices.iter().any(|n| n == HPA_NOTICE) {
        summary.notices.push(HPA_NOTICE.to_string());
        summary.notices.sort();
        summary.summary.notices = summary.notices.clone();
    }
}

/// The `,a,b,` form the store filters notices on.
pub fn notices_column(notices: &[String]) -> String {
    if notices.is_empty() {
        String::new()
    } else {
        format!(",{},", notices.join(","))
    }
}

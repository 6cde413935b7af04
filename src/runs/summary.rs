//! What runs derive from one workload's engine results: the small summary the lists and
//! the agent feed serve (values per container × resource), the columns lists filter and
//! sort on, and the estimated monthly cost delta.
//!
//! Cost delta (monthly) = Σ over containers of `((new − current CPU request in
//! millicores) / 1000 × price per vCPU-hour + (new − current memory request in bytes) /
//! 2^30 × price per GiB-hour) × 730 hours × replicas`.
//!
//! Only `requests` count (they are what the scheduler reserves and nodes are paid for);
//! a resource without a request recommendation contributes 0; an unset current request
//! counts as 0. Unknown replicas give no estimate (`null`), never a made-up number.

use serde_json::{json, Map, Value};

use crate::analysis::{QualityStatus, Resource, ResourceAnalysis, Setting};

/// Hours in an average month (8760 / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The derived view of one workload's results.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// `{"containers":[…],"confidence","coverage","dataQuality","notices"}`.
    pub json: Value,
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
}

fn quality_rank(q: QualityStatus) -> (u8, &'static str) {
    match q {
        QualityStatus::Available => (0, "available"),
        QualityStatus::Partial => (1, "partial"),
        QualityStatus::Unavailable => (2, "unavailable"),
    }
}

/// Summarizes `results` (one workload's, any order) under the given prices.
pub fn summarize(
    results: &[&ResourceAnalysis],
    replicas: Option<u32>,
    prices: (f64, f64),
) -> Summary {
    let mut containers: Vec<(String, Map<String, Value>)> = Vec::new();
    let mut worst = (0u8, "available");
    let mut notices: Vec<String> = Vec::new();
    let mut confidence: Option<i64> = None;
    let mut min_coverage: Option<f64> = None;
    let mut has_changes = false;
    let (mut cpu_delta_m, mut mem_delta_b) = (0.0, 0.0);
    for r in results {
        let q = quality_rank(r.data_quality.status);
        if q.0 > worst.0 {
            worst = q;
        }
        for n in &r.notices {
            notices.push(n.as_str().to_string());
        }
        min_coverage = Some(min_coverage.map_or(r.data_quality.coverage, |c: f64| {
            c.min(r.data_quality.coverage)
        }));
        let mut entry = Map::new();
        for rec in &r.recommendations {
            has_changes = true;
            confidence = Some(confidence.map_or(rec.confidence, |c| c.min(rec.confidence)));
            let key = match rec.setting {
                Setting::Requests => "requests",
                Setting::Limits => "limits",
            };
            entry.insert(
                key.into(),
                json!({
                    "current": if rec.current_unset { Value::Null } else { json!(rec.current_value) },
                    "suggested": rec.suggested_value,
                    "confidence": rec.confidence,
                }),
            );
            if rec.setting == Setting::Requests {
                let current = if rec.current_unset {
                    0.0
                } else {
                    rec.current_value
                };
                match r.resource {
                    Resource::Cpu => cpu_delta_m += rec.suggested_value - current,
                    Resource::Memory => mem_delta_b += rec.suggested_value - current,
                }
            }
        }
        entry.insert("dataQuality".into(), json!(q.1));
        entry.insert("coverage".into(), json!(r.data_quality.coverage));
        if let Some(reason) = r.no_action_reason {
            entry.insert("noActionReason".into(), json!(reason.as_str()));
        }
        if !r.notices.is_empty() {
            let n: Vec<&str> = r.notices.iter().map(|n| n.as_str()).collect();
            entry.insert("notices".into(), json!(n));
        }
        let name = &r.target.container;
        let slot = match containers.iter_mut().find(|(n, _)| n == name) {
            Some((_, m)) => m,
            None => {
                containers.push((name.clone(), Map::new()));
                &mut containers.last_mut().expect("just pushed").1
            }
        };
        slot.insert(r.resource.as_str().into(), Value::Object(entry));
    }
    containers.sort_by(|a, b| a.0.cmp(&b.0));
    notices.sort();
    notices.dedup();
    let (cpu_price, mem_price) = prices;
    let cost_delta = replicas.map(|n| {
        (cpu_delta_m / 1000.0 * cpu_price + mem_delta_b / GIB * mem_price)
            * HOURS_PER_MONTH
            * f64::from(n)
    });
    let containers: Vec<Value> = containers
        .into_iter()
        .map(|(name, mut m)| {
            m.insert("name".into(), json!(name));
            Value::Object(m)
        })
        .collect();
    Summary {
        json: json!({
            "containers": containers,
            "confidence": confidence,
            "coverage": min_coverage,
            "dataQuality": worst.1,
            "notices": notices,
        }),
        has_changes,
        data_quality: worst.1,
        notices,
        confidence: confidence.unwrap_or(-1),
        cost_delta,
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

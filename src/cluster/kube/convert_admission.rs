//! ResourceQuotas and LimitRanges (k8s-openapi) → the cluster model's admission facts.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::cluster::admission::*;
use crate::cluster::quantity::{cpu_millis, memory_bytes};

/// The smaller of two optional amounts (`cpu` and `requests.cpu` both limit requests).
fn tighter(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn amounts(m: &BTreeMap<String, Quantity>) -> QuotaAmounts {
    let q = |k: &str, parse: fn(&str) -> Option<u64>| m.get(k).and_then(|v| parse(&v.0));
    let count = |v: &str| v.parse::<u64>().ok();
    QuotaAmounts {
        requests_cpu: tighter(q("requests.cpu", cpu_millis), q("cpu", cpu_millis)),
        requests_memory: tighter(
            q("requests.memory", memory_bytes),
            q("memory", memory_bytes),
        ),
        limits_cpu: q("limits.cpu", cpu_millis),
        limits_memory: q("limits.memory", memory_bytes),
        pods: tighter(q("pods", count), q("count/pods", count)),
    }
}

pub fn resource_quota(q: &core::ResourceQuota) -> ResourceQuota {
    let spec = q.spec.as_ref();
    let status = q.status.as_ref();
    // `status.hard` is what admission enforces now; `spec.hard` what it enforces once
    // the quota controller has caught up with an edit (seconds later). The tighter of
    // the two per amount: a quota just lowered holds a change at once.
    let amounts_of = |m: Option<&BTreeMap<String, Quantity>>| m.map(amounts);
    let hard = match (
        amounts_of(spec.and_then(|s| s.hard.as_ref())),
        amounts_of(status.and_then(|s| s.hard.as_ref())),
    ) {
        (Some(a), Some(b)) => Some(QuotaAmounts {
            requests_cpu: tighter(a.requests_cpu, b.requests_cpu),
            requests_memory: tighter(a.requests_memory, b.requests_memory),
            limits_cpu: tighter(a.limits_cpu, b.limits_cpu),
            limits_memory: tighter(a.limits_memory, b.limits_memory),
            pods: tighter(a.pods, b.pods),
        }),
        (a, b) => a.or(b),
    };
    let mut scopes: Vec<String> = spec.and_then(|s| s.scopes.clone()).unwrap_or_default();
    let selected = spec
        .and_then(|s| s.scope_selector.as_ref())
        .and_then(|s| s.match_expressions.as_ref());
    scopes.extend(selected.into_iter().flatten().map(|e| e.scope_name.clone()));
    ResourceQuota {
        namespace: q.metadata.namespace.clone().unwrap_or_default(),
        name: q.metadata.name.clone().unwrap_or_default(),
        hard: hard.unwrap_or_default(),
        used: status.and_then(|s| s.used.as_ref()).map(amounts),
        scopes,
    }
}

type Parse = fn(&str) -> Option<u64>;

fn cpu_memory(m: &Option<BTreeMap<String, Quantity>>, cpu: Parse, memory: Parse) -> CpuMemory {
    let get = |k: &str, parse: Parse| m.as_ref().and_then(|m| m.get(k)).and_then(|v| parse(&v.0));
    CpuMemory {
        cpu: get("cpu", cpu),
        memory: get("memory", memory),
    }
}

/// A ratio quantity (`2`, `1500m`) in thousandths.
fn ratio_milli(text: &str) -> Option<u64> {
    cpu_millis(text)
}

pub fn limit_range(l: &core::LimitRange) -> LimitRange {
    let items = l
        .spec
        .as_ref()
        .map(|s| s.limits.as_slice())
        .unwrap_or_default()
        .iter()
        .filter_map(|i| {
            let kind = match i.type_.as_str() {
                "Container" => LimitKind::Container,
                "Pod" => LimitKind::Pod,
                _ => return None,
            };
            Some(LimitRangeItem {
                kind,
                min: cpu_memory(&i.min, cpu_millis, memory_bytes),
                max: cpu_memory(&i.max, cpu_millis, memory_bytes),
                max_ratio_milli: cpu_memory(&i.max_limit_request_ratio, ratio_milli, ratio_milli),
            })
        })
        .collect();
    LimitRange {
        namespace: l.metadata.namespace.clone().unwrap_or_default(),
        name: l.metadata.name.clone().unwrap_or_default(),
        items,
    }
}

/// Files quotas and limit ranges under their namespaces.
pub fn by_namespace(
    quotas: impl IntoIterator<Item = ResourceQuota>,
    limit_ranges: impl IntoIterator<Item = LimitRange>,
) -> BTreeMap<String, NamespaceAdmission> {
    let mut out: BTreeMap<String, NamespaceAdmission> = BTreeMap::new();
    for q in quotas {
        out.entry(q.namespace.clone()).or_default().quotas.push(q);
    }
    for l in limit_ranges {
        out.entry(l.namespace.clone())
            .or_default()
            .limit_ranges
            .push(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(spec_cpu: &str, status_cpu: Option<&str>) -> core::ResourceQuota {
        serde_json::from_value(serde_json::json!({
            "metadata": { "name": "team", "namespace": "shop" },
            "spec": { "hard": { "requests.cpu": spec_cpu, "pods": "10" } },
            "status": status_cpu.map(|c| serde_json::json!({
                "hard": { "requests.cpu": c },
                "used": { "requests.cpu": "1" },
            })),
        }))
        .expect("a quota")
    }

    #[test]
    fn the_tighter_of_what_is_enforced_now_and_what_the_edit_asks_for_holds() {
        // Lowered: admission still enforces 10 for a moment, but 2 is coming.
        let lowered = resource_quota(&quota("2", Some("10")));
        assert_eq!(lowered.hard.requests_cpu, Some(2000));
        // Raised: 2 is enforced until the controller catches up.
        assert_eq!(
            resource_quota(&quota("10", Some("2"))).hard.requests_cpu,
            Some(2000)
        );
        // An amount only the edit names counts too; one never counted has no use yet.
        assert_eq!(lowered.hard.pods, Some(10));
        let fresh = resource_quota(&quota("4", None));
        assert_eq!((fresh.hard.requests_cpu, fresh.used), (Some(4000), None));
    }
}

//! What a recommendation would set, per container: each request and limit with the
//! value in force and the recommended one, from the workload's stored settings
//! (`current`) and its recommendation summary. Lists show it as current → recommended;
//! exports render it as Kubernetes quantities, rounded as the agent rounds what it
//! applies (CPU up to whole millicores, memory up to whole MiB; docs/contracts/agent.md).

use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::cluster::quantity::{format_cpu, format_memory};
use crate::wire::summary::SettingValues;
use crate::wire::{RecommendationSummary, ResourceSummary};
use crate::workload::{effective_pod_value, ContainerRole};

const MIB: f64 = 1024.0 * 1024.0;

fn is_true(b: &bool) -> bool {
    *b
}

/// One setting (a request or a limit of one resource); in lists, CPU in millicores and
/// memory in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, ToSchema)]
pub struct SettingPlan {
    /// The value in force; `None` when not set or unknown.
    pub current: Option<f64>,
    /// False when kerf does not know the value in force (only then serialized).
    #[serde(skip_serializing_if = "is_true")]
    pub known: bool,
    /// The recommended value when the recommendation changes it, as the agent applies
    /// it (whole millicores, whole MiB, rounded up).
    pub recommended: Option<f64>,
}

impl SettingPlan {
    /// The value to set: the recommended one, else the one in force.
    pub fn target(&self) -> Option<f64> {
        self.recommended.or(self.current)
    }
}

/// A resource's request and limit.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, ToSchema)]
pub struct ResourcePlan {
    pub request: SettingPlan,
    pub limit: SettingPlan,
}

impl ResourcePlan {
    pub fn changes(&self) -> bool {
        self.request.recommended.is_some() || self.limit.recommended.is_some()
    }
}

/// One container: the list's `resources[]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, ToSchema)]
pub struct ContainerPlan {
    pub name: String,
    /// `sidecar` or `init` for an entry of `spec.initContainers`; absent for an app
    /// container.
    #[serde(skip_serializing_if = "ContainerRole::is_app")]
    pub role: ContainerRole,
    /// Millicores.
    pub cpu: ResourcePlan,
    /// Bytes.
    pub memory: ResourcePlan,
}

impl ContainerPlan {
    pub fn changes(&self) -> bool {
        self.cpu.changes() || self.memory.changes()
    }
}

/// The value in force of `current[].{cpu|memory}.{request|limit}`.
fn in_force(setting: Option<&Value>) -> (Option<f64>, bool) {
    match setting {
        Some(s) if s["known"] == json!(true) => (s["value"].as_f64(), true),
        _ => (None, false),
    }
}

/// `applied`: how the agent rounds a suggested value (`cpu_millis`, `memory_mib`), so
/// the page, the CSV, the YAML and the change itself say the same number.
fn setting(
    current: Option<&Value>,
    summary: Option<&SettingValues>,
    applied: fn(f64) -> f64,
) -> SettingPlan {
    let (value, known) = in_force(current);
    SettingPlan {
        current: value.or(summary.and_then(|s| s.current)),
        known: known || summary.is_some(),
        recommended: summary.map(|s| applied(s.suggested)),
    }
}

fn resource(
    current: Option<&Value>,
    summary: Option<&ResourceSummary>,
    applied: fn(f64) -> f64,
) -> ResourcePlan {
    let at = |k: &str| current.and_then(|c| c.get(k));
    ResourcePlan {
        request: setting(
            at("request"),
            summary.and_then(|s| s.requests.as_ref()),
            applied,
        ),
        limit: setting(
            at("limit"),
            summary.and_then(|s| s.limits.as_ref()),
            applied,
        ),
    }
}

fn cpu_as_applied(v: f64) -> f64 {
    cpu_millis(v) as f64
}

fn memory_as_applied(v: f64) -> f64 {
    memory_mib(v) as f64 * MIB
}

/// The plan of every container: those with settings in force, in their order, then any
/// only the summary names.
pub fn plan(current: &Value, summary: Option<&RecommendationSummary>) -> Vec<ContainerPlan> {
    let mut names: Vec<String> = current
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    for c in summary.map(|s| s.containers.as_slice()).unwrap_or_default() {
        if !names.contains(&c.name) {
            names.push(c.name.clone());
        }
    }
    names
        .into_iter()
        .map(|name| {
            let cur = current
                .as_array()
                .and_then(|a| a.iter().find(|c| c["name"] == json!(name)));
            let sum = summary.and_then(|s| s.containers.iter().find(|c| c.name == name));
            let stored_role = cur
                .and_then(|c| c.get("role"))
                .and_then(|r| serde_json::from_value(r.clone()).ok());
            ContainerPlan {
                role: stored_role.or(sum.map(|s| s.role)).unwrap_or_default(),
                cpu: resource(
                    cur.and_then(|c| c.get("cpu")),
                    sum.and_then(|s| s.cpu.as_ref()),
                    cpu_as_applied,
                ),
                memory: resource(
                    cur.and_then(|c| c.get("memory")),
                    sum.and_then(|s| s.memory.as_ref()),
                    memory_as_applied,
                ),
                name,
            }
        })
        .collect()
}

/// One resource of a pod's effective request, now and as
/// recommended (CPU millicores, memory bytes).
#[derive(Debug, Clone, PartialEq, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodValue {
    /// `None` when some container's request in force is unknown.
    pub current: Option<f64>,
    pub recommended: Option<f64>,
    /// The init container whose request (with the sidecars started before it) sets
    /// the recommended value, when one does rather than the app containers and
    /// sidecars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_by_init_container: Option<String>,
}

/// A pod's effective requests: what the scheduler reserves for each replica, with init
/// containers and sidecars counted as Kubernetes counts them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodRequests {
    pub cpu: PodValue,
    pub memory: PodValue,
}

/// The plans in the order their containers are assumed to start
/// ([`ContainerRole::assumed_start`]).
fn in_pod_order(plans: &[ContainerPlan]) -> Vec<&ContainerPlan> {
    let mut ordered: Vec<&ContainerPlan> = plans.iter().collect();
    ordered.sort_by_key(|c| c.role.assumed_start());
    ordered
}

fn pod_value(plans: &[&ContainerPlan], request: fn(&ContainerPlan) -> &SettingPlan) -> PodValue {
    let whole = |v: Option<f64>| v.unwrap_or(0.0).max(0.0).round() as u64;
    let value = |pick: fn(&SettingPlan) -> Option<f64>| {
        effective_pod_value(plans.iter().map(|c| (c.role, whole(pick(request(c)))))) as f64
    };
    let known = plans.iter().all(|c| {
        let r = request(c);
        r.known || r.current.is_some()
    });
    let recommended = value(SettingPlan::target);
    let without_init = effective_pod_value(
        plans
            .iter()
            .filter(|c| c.role.long_running())
            .map(|c| (c.role, whole(request(c).target()))),
    ) as f64;
    let set_by_init_container = (recommended > without_init)
        .then(|| {
            plans
                .iter()
                .filter(|c| c.role == ContainerRole::Init)
                .max_by_key(|c| whole(request(c).target()))
                .map(|c| c.name.clone())
        })
        .flatten();
    PodValue {
        current: known.then(|| value(|s| s.current)),
        recommended: Some(recommended),
        set_by_init_container,
    }
}

/// The pod's effective requests from its containers' plans.
pub fn pod_requests(plans: &[ContainerPlan]) -> PodRequests {
    let ordered = in_pod_order(plans);
    PodRequests {
        cpu: pod_value(&ordered, |c| &c.cpu.request),
        memory: pod_value(&ordered, |c| &c.memory.request),
    }
}

pub use crate::wire::applied::{cpu_millis, memory_mib};

/// A CPU value as a Kubernetes quantity (`"250m"`, `"2"`).
pub fn cpu_quantity(v: f64) -> String {
    format_cpu(cpu_millis(v))
}

/// A memory value as a Kubernetes quantity (`"512Mi"`, `"2Gi"`); a value in force that
/// is not a whole MiB keeps its exact bytes.
pub fn memory_quantity(v: f64, recommended: bool) -> String {
    if recommended {
        format_memory(memory_mib(v) << 20)
    } else {
        format_memory(v.max(0.0).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> RecommendationSummary {
        serde_json::from_value(json!({
            "containers": [{ "name": "app",
                "cpu": { "dataQuality": "available", "coverage": 1.0,
                    "requests": { "current": 1400.0, "suggested": 1144.3, "confidence": 95 } },
                "memory": { "dataQuality": "available", "coverage": 1.0,
                    "limits": { "current": null, "suggested": 987654321.0, "confidence": 90 } } }],
            "confidence": 90, "coverage": 1.0, "dataQuality": "available", "notices": []
        }))
        .expect("summary")
    }

    #[test]
    fn plans_join_settings_in_force_with_the_recommended_values() {
        let current = json!([
            { "name": "app", "cpu": { "request": { "known": true, "value": 1400.0 },
                "limit": { "known": true, "unset": true } },
              "memory": { "request": { "known": true, "value": 536870912.0 }, "limit": { "known": false } } },
            { "name": "proxy", "cpu": { "request": { "known": true, "value": 100.0 } } }
        ]);
        let p = plan(&current, Some(&summary()));
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0].cpu.request,
            SettingPlan {
                current: Some(1400.0),
                known: true,
                // As the agent applies it: whole millicores, rounded up.
                recommended: Some(1145.0)
            }
        );
        assert_eq!(
            p[0].cpu.limit,
            SettingPlan {
                current: None,
                known: true,
                recommended: None
            }
        );
        // Whole MiB, rounded up: 987,654,321 bytes is 941.9 MiB.
        assert_eq!(p[0].memory.limit.recommended, Some(942.0 * MIB));
        assert!(
            p[0].memory.limit.known,
            "the summary knows the value in force"
        );
        assert!(p[0].changes() && !p[1].changes());
        let j = serde_json::to_value(plan(&current, Some(&summary()))).expect("json");
        assert_eq!(
            j[0]["cpu"]["request"],
            json!({ "current": 1400.0, "recommended": 1145.0 })
        );
        assert_eq!(
            j[1]["memory"]["limit"],
            json!({ "current": null, "recommended": null, "known": false })
        );
    }

    #[test]
    fn the_pod_request_counts_sidecars_with_the_app_and_a_large_init_container_alone() {
        let current = json!([
            { "name": "app", "cpu": { "request": { "known": true, "value": 300.0 } },
              "memory": { "request": { "known": true, "value": 1000.0 } } },
            { "name": "istio-proxy", "role": "sidecar",
              "cpu": { "request": { "known": true, "value": 100.0 } },
              "memory": { "request": { "known": true, "value": 500.0 } } },
            { "name": "migrate", "role": "init",
              "cpu": { "request": { "known": true, "value": 800.0 } },
              "memory": { "request": { "known": true, "value": 200.0 } } }
        ]);
        let p = plan(&current, None);
        assert_eq!(
            p.iter().map(|c| c.role).collect::<Vec<_>>(),
            [
                ContainerRole::App,
                ContainerRole::Sidecar,
                ContainerRole::Init
            ]
        );
        let pod = pod_requests(&p);
        // CPU: the init container (800m) outweighs app + sidecar (400m).
        assert_eq!(pod.cpu.current, Some(800.0));
        assert_eq!(pod.cpu.set_by_init_container.as_deref(), Some("migrate"));
        // Memory: app + sidecar (1500) outweigh the init container.
        assert_eq!(pod.memory.recommended, Some(1500.0));
        assert_eq!(pod.memory.set_by_init_container, None);
        let j = serde_json::to_value(&p[1]).expect("json");
        assert_eq!(j["role"], "sidecar");
        assert!(serde_json::to_value(&p[0])
            .expect("json")
            .get("role")
            .is_none());
    }

    #[test]
    fn quantities_round_up_as_the_agent_applies_them() {
        assert_eq!(cpu_quantity(1144.3), "1145m");
        assert_eq!(cpu_quantity(2000.0), "2");
        assert_eq!(cpu_quantity(0.2), "1m");
        assert_eq!(memory_quantity(987654321.0, true), "942Mi");
        assert_eq!(memory_quantity(2.0 * 1024.0 * MIB, true), "2Gi");
        assert_eq!(
            memory_quantity(1_000_000.0, false),
            "1000000",
            "a value in force stays exact"
        );
    }

    #[cfg(feature = "agent")]
    #[test]
    fn rounding_is_the_agents() {
        use crate::agent::decide::values::{round_cpu, round_memory};
        for v in [0.2, 1.0, 999.5, 1144.3, 64_000.0] {
            assert_eq!(cpu_millis(v), round_cpu(v));
        }
        for v in [1.0, MIB, MIB + 1.0, 987654321.0, 3.5 * 1024.0 * MIB] {
            assert_eq!(memory_mib(v) << 20, round_memory(v));
        }
    }
}

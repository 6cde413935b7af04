//! Named starting points for a policy's `analysis` (the engine's `Policy`), and the one
//! a new hub uses when no policy selects a workload (the shipped fleet default). The
//! engine's own `default_policy()` stays what `kerf analyze` uses: its CPU request of
//! P95 × 3 with a limit of 5 × the request suits a single service someone is watching,
//! not a fleet (docs/contracts/policy.md, "Presets", has the backtest behind the numbers).
//! Pure: the API serves these, runs and `kerf scan` analyze with them.

use serde::Serialize;

use crate::analysis::leak::MemoryLeakPolicy;
use crate::analysis::{self, Policy};

/// The preset a new hub analyzes with when no policy sets `analysis`.
pub const FLEET_DEFAULT: &str = "balanced";

/// Every preset name, in the order they are offered.
pub const NAMES: &[&str] = &["cost-saving", "balanced", "conservative", "engine-default"];

/// One preset: its name, who it is for, and the analysis policy it stands for.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Preset {
    pub name: &'static str,
    /// One line: who it is for.
    pub description: &'static str,
    /// The engine's `Policy`, normalized (every field spelled out).
    #[schema(value_type = Object)]
    pub analysis: Policy,
    /// True for the one a new hub uses when no policy selects a workload.
    pub fleet_default: bool,
}

/// The preset called `name`, or `None`.
pub fn get(name: &str) -> Option<Preset> {
    let (description, raw) = match name {
        "cost-saving" => (
            "Dev, staging and batch fleets where an occasional restart is cheaper than idle \
             capacity: CPU at P90 + 5 %, memory at the peak + 10 %.",
            cost_saving(),
        ),
        "balanced" => (
            "Most production services (the fleet default): CPU at P95 + 15 % with no new CPU \
             limits, memory at the peak + 10 % with a limit 1.3 × the request.",
            balanced(),
        ),
        "conservative" => (
            "Latency-critical services and databases: CPU at P99 + 30 %, memory at the peak \
             + 30 % with a limit 1.5 × the request, and a day of history before any change.",
            conservative(),
        ),
        "engine-default" => (
            "The analysis engine's own defaults (what `kerf analyze` uses): CPU P95 × 3 with \
             a limit 5 × the request, memory peak × 1.2 with a limit 3 × the request.",
            Policy::default(),
        ),
        _ => return None,
    };
    let analysis = analysis::normalize_policy(&raw).expect("the presets are valid policies");
    Some(Preset {
        name: NAMES.iter().find(|n| **n == name).copied()?,
        description,
        analysis,
        fleet_default: name == FLEET_DEFAULT,
    })
}

/// Every preset, in [`NAMES`] order.
pub fn all() -> Vec<Preset> {
    NAMES.iter().filter_map(|n| get(n)).collect()
}

/// The analysis a new hub uses when no policy selects a workload.
pub fn fleet_default() -> Policy {
    get(FLEET_DEFAULT)
        .expect("the fleet default is a preset")
        .analysis
}

fn base(percentile: f64, cpu_headroom: f64, memory_headroom: f64, memory_ratio: f64) -> Policy {
    let mut p = Policy::default();
    p.cpu.percentile = percentile;
    p.cpu.headroom_coefficient = cpu_headroom;
    // No CPU limits added or changed: a limit throttles a service that would otherwise
    // borrow idle cores, and the request is what the scheduler reserves.
    p.cpu.requests_only = true;
    p.memory.headroom_coefficient = memory_headroom;
    p.memory.limits_to_requests_ratio = memory_ratio;
    // Advisory only: it never changes a value, and a leak is worth knowing about.
    p.memory.leak_detection = Some(MemoryLeakPolicy::default());
    p
}

fn cost_saving() -> Policy {
    base(90.0, 1.05, 1.1, 1.0)
}

fn balanced() -> Policy {
    base(95.0, 1.15, 1.1, 1.3)
}

fn conservative() -> Policy {
    let mut p = base(99.0, 1.3, 1.3, 1.5);
    p.evidence.minimum_history_seconds = 86_400;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_normalizes_and_has_a_distinct_policy_version() {
        let versions: std::collections::BTreeSet<String> = all()
            .iter()
            .map(|p| analysis::policy_version(&p.analysis).expect("version"))
            .collect();
        assert_eq!(versions.len(), NAMES.len());
        assert_eq!(all().iter().filter(|p| p.fleet_default).count(), 1);
    }

    #[test]
    fn engine_default_is_the_engines_own_and_the_fleet_default_adds_no_cpu_limits() {
        assert_eq!(
            get("engine-default").expect("preset").analysis,
            analysis::default_policy()
        );
        let fleet = fleet_default();
        assert!(fleet.cpu.requests_only);
        assert!(!fleet.memory.requests_only);
        assert!(fleet.cpu.headroom_coefficient < 3.0);
        assert!(get("no-such").is_none());
    }
}

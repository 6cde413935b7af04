//! Step 6 (workload guardrails) and step 7 (per-resource guardrails) of the decision
//! order, as ordered lists of pure checks over [`Ctx`]. A workload guardrail returning a
//! finding holds the whole change; a per-resource guardrail refuses one resource (its
//! finding lists it in `resources`) and the change goes on with the other. The first
//! per-resource guardrail that refuses a resource is its reason.
//!
//! Workload: `VPAConflict`, `LearningPeriod`, `LowConfidence`, `Cooldown`, `HPACoupled` (`hpa`),
//! `SingleReplicaUnsafe` (`disruption`), `UnsupportedNode`, `LimitRange` and
//! `ResourceQuota` (`admission`), `NoFittingNode` (`fit`). Per resource: `Throttled`
//! and `OOMKilled` (`pressure`), `JVMFixedHeap` and `RestartPolicyRequired`
//! (`runtime`).

use super::{Ctx, Finding};
use crate::policy::validate::parse_duration;
use crate::policy::Strategy;
use crate::timestamp::format_ms;
use crate::wire::{EventResource, Reason};

/// A workload guardrail.
pub type WorkloadGuardrail = fn(&Ctx) -> Option<Finding>;
/// A per-resource guardrail.
pub type ResourceGuardrail = fn(&Ctx, EventResource) -> Option<Finding>;

/// Step 6, in order.
pub const WORKLOAD_GUARDRAILS: &[WorkloadGuardrail] = &[
    vpa_conflict,
    learning_period,
    low_confidence,
    cooldown,
    hpa_coupled,
    single_replica_unsafe,
    unsupported_node,
    super::admission::limit_range,
    super::admission::resource_quota,
    super::fit::no_fitting_node,
];

/// The workload guardrails that hold a change whenever it would come: another vertical
/// autoscaler acting on the workload, and whether the API server and the scheduler would
/// take it (the last three of step 6). Also read for a change waiting for approval in
/// `audit`, so that the workload's page says before anyone approves that it would be
/// held.
pub const ADMISSION_GUARDRAILS: &[WorkloadGuardrail] = &[
    vpa_conflict,
    super::admission::limit_range,
    super::admission::resource_quota,
    super::fit::no_fitting_node,
];

/// Step 7, in order.
pub const RESOURCE_GUARDRAILS: &[ResourceGuardrail] = &[
    super::pressure::throttled,
    super::pressure::oom_killed,
    super::runtime::jvm_fixed_heap,
    super::runtime::restart_policy_required,
];

/// `VPAConflict`: a VerticalPodAutoscaler that acts on the workload (any `updateMode` but
/// `Off`) sets its requests too; kerf does not fight it.
fn vpa_conflict(c: &Ctx) -> Option<Finding> {
    let key = &c.input.live.key;
    let vpa = c
        .input
        .vpas
        .iter()
        .find(|v| v.acts() && v.target.as_ref() == Some(key))?;
    Some(
        Finding::new(
            Reason::VPAConflict,
            format!(
                "VerticalPodAutoscaler {} (updateMode {}) also sets this workload's requests; kerf does not fight it: set its updateMode to Off to keep it as a recommender, or remove it",
                vpa.name, vpa.update_mode
            ),
        )
        .detail("vpa", &vpa.name)
        .detail("updateMode", &vpa.update_mode),
    )
}

/// `HPACoupled`: a utilization HPA the change cannot be coordinated with.
fn hpa_coupled(c: &Ctx) -> Option<Finding> {
    super::hpa::coordinate(
        c.input.live,
        c.input.hpas,
        &c.proposal.only(c.resources),
        c.resources,
        c.policy.hpa_coordination,
    )
    .err()
}

/// `SingleReplicaUnsafe`: the change would leave the workload without a Ready pod.
fn single_replica_unsafe(c: &Ctx) -> Option<Finding> {
    super::disruption::check(
        c.input.live,
        c.input.pdbs,
        &c.proposal.only(c.resources),
        c.resources,
        c.strategy,
    )
}

/// `3d 4h`, `45m`, `20s`: the two largest units of a duration.
pub fn human(seconds: u64) -> String {
    crate::timestamp::human_duration(seconds)
}

/// `dataCoverage.covered` < `guardrails.learningPeriod` (unknown coverage counts as
/// too short: a recommendation that cannot say how much history it rests on waits).
fn learning_period(c: &Ctx) -> Option<Finding> {
    let period = parse_duration(&c.policy.guardrails.learning_period)?;
    let covered = c.recommendation.data_coverage.covered_seconds;
    if covered.is_some_and(|s| s >= 0 && s as u64 >= period) {
        return None;
    }
    let message = match covered {
        Some(s) => format!(
            "{} of usage history, the policy wants {} before acting",
            human(s.max(0) as u64),
            human(period)
        ),
        None => format!(
            "the recommendation does not say how much history it rests on; the policy wants {}",
            human(period)
        ),
    };
    let mut f = Finding::new(Reason::LearningPeriod, message)
        .detail("learningPeriod", &c.policy.guardrails.learning_period);
    if let Some(s) = covered {
        f = f.detail("covered", human(s.max(0) as u64));
    }
    Some(f)
}

/// `confidence` < `guardrails.minConfidence`.
fn low_confidence(c: &Ctx) -> Option<Finding> {
    let min = c.policy.guardrails.min_confidence as i64;
    let confidence = c.recommendation.confidence.unwrap_or(0);
    (confidence < min).then(|| {
        Finding::new(
            Reason::LowConfidence,
            format!("confidence {confidence} is below the policy's minimum {min}"),
        )
        .detail("confidence", confidence.to_string())
        .detail("minConfidence", min.to_string())
    })
}

/// The last change or rollback was less than `guardrails.cooldown` ago.
fn cooldown(c: &Ctx) -> Option<Finding> {
    let last = c.input.state.last_change_ms?;
    let cooldown = parse_duration(&c.policy.guardrails.cooldown)? as i64 * 1000;
    let until = last + cooldown;
    (c.situation.now_ms < until).then(|| {
        Finding::new(
            Reason::Cooldown,
            format!(
                "the last change was at {}; the cooldown of {} lasts until {}",
                format_ms(last),
                c.policy.guardrails.cooldown,
                format_ms(until)
            ),
        )
        .detail("cooldown", &c.policy.guardrails.cooldown)
        .detail("lastChange", format_ms(last))
        .detail("until", format_ms(until))
    })
}

/// In place only: a pod of the workload runs on a node with swap or a static CPU or
/// Memory Manager policy, where the kubelet cannot resize it.
fn unsupported_node(c: &Ctx) -> Option<Finding> {
    if c.strategy != Strategy::InPlace {
        return None;
    }
    c.input.pods.iter().find_map(|p| {
        let node = c
            .input
            .nodes
            .iter()
            .find(|n| Some(&n.name) == p.node.as_ref())?;
        let cause = if node.swap_bytes > 0 {
            "swap"
        } else if node.managers.cpu_static {
            "static CPU Manager policy"
        } else if node.managers.memory_static {
            "static Memory Manager policy"
        } else {
            return None;
        };
        Some(
            Finding::new(
                Reason::UnsupportedNode,
                format!(
                    "pod {} runs on node {} ({cause}), where pods cannot be resized in place",
                    p.pod.name, node.name
                ),
            )
            .detail("node", &node.name)
            .detail("pod", &p.pod.name)
            .detail("cause", cause),
        )
    })
}

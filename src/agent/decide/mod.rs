//! The agent's decisions for one workload, in the order of the design
//! (`../shared/design/AGENT.md`, "Decision order"): first match wins, each outcome is one
//! contract reason. Pure like the analysis engine: no IO, no clock (the caller passes
//! `now`), no async, no logging; the module fence test holds it to that.
//!
//! Steps: (1) hub unreachable → `HubUnreachable`; (2) paused → `Paused`, freeze →
//! `FreezeWindow`, for a workload with a change due (a resource its mode lets the agent
//! change, by more than the tolerance, or a release; the others go on to their own
//! outcome, which is never a change); (3) a workload that left `auto-patch` after kerf applied to it →
//! `released ModeChanged` ([`Decision::Release`]); effective mode per resource →
//! `ModeOff` / `ModeAudit`, or `ApprovedOnce` for an approved recommendation in `audit`;
//! (4) `RecommendationStale`;
//! (5) `NoSignificantChange`; (6) the workload guardrails ([`WORKLOAD_GUARDRAILS`]);
//! (7) the per-resource guardrails ([`RESOURCE_GUARDRAILS`]); (8) `deferred` outside a
//! maintenance window → `OutsideMaintenanceWindow`; then a [`Plan`] to apply.

mod admission;
pub mod disruption;
pub mod emission;
mod fit;
mod guardrails;
pub mod hpa;
pub mod inplace;
pub mod next_run;
mod pressure;
mod release;
pub mod runtime;
pub mod stall;
mod unchanged;
pub mod values;
pub mod watch;
pub mod windows;

#[cfg(test)]
mod admission_tests;
#[cfg(test)]
mod emission_tests;
#[cfg(test)]
mod fixture;
#[cfg(test)]
mod guardrail_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod windows_tests;

use std::collections::BTreeMap;

use crate::cluster::{Hpa, NamespaceAdmission, Node, Pdb, Pod, RequestedOn, Workload};
use crate::policy::{EffectiveMode, EffectivePolicy, Mode, Strategy};
use crate::wire::{EventResource, PauseScope, Reason, RecommendationItem, WorkloadConfig};

pub use guardrails::{human, ADMISSION_GUARDRAILS, RESOURCE_GUARDRAILS, WORKLOAD_GUARDRAILS};
use values::{propose, Proposal, ProposedValue};
use windows::{Maintenance, Span};

use super::state::{Approval, WorkloadState};

/// The cluster-wide freeze in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterFreeze {
    pub reason: Option<String>,
    /// When it ends on its own (Unix ms); `None` while on without an end.
    pub until_ms: Option<i64>,
}

/// What holds for the whole cluster at `now_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Situation {
    pub now_ms: i64,
    /// The hub answered this loop with both feeds; `false` is `HubUnreachable`.
    pub hub_reachable: bool,
    pub pause: Option<PauseScope>,
    pub freeze: Option<ClusterFreeze>,
    /// The agent's tolerance when a policy sets none.
    pub default_tolerance: f64,
}

/// One workload: the live object, its pods, the nodes, what the hub says, what the
/// agent remembers.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadInput<'a> {
    pub live: &'a Workload,
    pub pods: &'a [&'a Pod],
    pub nodes: &'a [Node],
    /// The HPAs that target the workload.
    pub hpas: &'a [&'a Hpa],
    /// The VerticalPodAutoscalers that target the workload.
    pub vpas: &'a [&'a crate::cluster::Vpa],
    /// The PodDisruptionBudgets that select its pods.
    pub pdbs: &'a [&'a Pdb],
    /// Its namespace's ResourceQuotas and LimitRanges.
    pub admission: &'a NamespaceAdmission,
    /// What the pods bound to each node request (millicores, bytes).
    pub node_requests: &'a dyn RequestedOn,
    /// CFS throttling ratio per container over the recent window, as the agent measured
    /// it from the kubelets (empty when unknown).
    pub throttling: &'a BTreeMap<String, f64>,
    pub config: Option<&'a WorkloadConfig>,
    pub recommendation: Option<&'a RecommendationItem>,
    pub state: &'a WorkloadState,
}

/// A skip or block (or a per-resource refusal inside an applied change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub reason: Reason,
    /// Empty: the whole workload.
    pub resources: Vec<EventResource>,
    pub message: String,
    pub details: BTreeMap<String, String>,
}

impl Finding {
    pub fn new(reason: Reason, message: impl Into<String>) -> Finding {
        Finding {
            reason,
            resources: Vec::new(),
            message: message.into(),
            details: BTreeMap::new(),
        }
    }

    pub fn on(mut self, resources: &[EventResource]) -> Finding {
        self.resources = resources.to_vec();
        self
    }

    pub fn detail(mut self, key: &str, value: impl Into<String>) -> Finding {
        self.details.insert(key.into(), value.into());
        self
    }
}

/// A change to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// `in-place` or `rollout` (a `deferred` change rolls out in its window).
    pub strategy: Strategy,
    /// `RecommendationApplied` or `ApprovedOnce`.
    pub reason: Reason,
    pub recommendation_id: String,
    pub approval: Option<Approval>,
    /// Only the containers that change, with only the resources that change.
    pub proposal: Proposal,
    pub resources: Vec<EventResource>,
    /// `apply.fallbackAfter` in ms.
    pub fallback_after_ms: i64,
    /// The maintenance window a deferred change rolls out in.
    pub window: Option<Span>,
    /// The HPA target moved with the requests (HPA coordination).
    pub hpa: Option<hpa::HpaChange>,
    /// The health watch's thresholds once the change is live.
    pub watch: crate::policy::EffectiveRollback,
}

/// The outcome for one workload.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing to decide or report (no recommendation, or nothing known).
    Idle,
    /// Report these (subject to emission) and change nothing. `deferred` is set when the
    /// change is queued for a maintenance window (phase `Deferred`, the next window).
    Hold {
        findings: Vec<Finding>,
        values: Vec<ProposedValue>,
        deferred: Option<Option<Span>>,
    },
    /// Apply `plan`; `findings` are per-resource skips or blocks inside the change.
    Apply {
        plan: Box<Plan>,
        findings: Vec<Finding>,
        values: Vec<ProposedValue>,
    },
    /// The workload left `auto-patch` after kerf applied to it: give up kerf's field
    /// ownership (`released ModeChanged`).
    Release {
        /// The resources that were in `auto-patch`.
        resources: Vec<EventResource>,
        previous: EffectiveMode,
        now: EffectiveMode,
    },
}

/// What the steps read, once resolved.
pub struct Ctx<'a> {
    pub situation: &'a Situation,
    pub input: &'a WorkloadInput<'a>,
    pub recommendation: &'a RecommendationItem,
    pub policy: &'a EffectivePolicy,
    pub proposal: &'a Proposal,
    /// The strategy the change would use (`in-place` or `rollout`).
    pub strategy: Strategy,
    /// The resources the change would touch.
    pub resources: &'a [EventResource],
}

const RESOURCES: [EventResource; 2] = [EventResource::Cpu, EventResource::Memory];

fn mode_of(policy: &EffectivePolicy, r: EventResource) -> Mode {
    match r {
        EventResource::Cpu => policy.mode.cpu,
        EventResource::Memory => policy.mode.memory,
    }
}

fn hold(findings: Vec<Finding>, values: Vec<ProposedValue>) -> Decision {
    Decision::Hold {
        findings,
        values,
        deferred: None,
    }
}

/// The decision for one workload at `s.now_ms`.
pub fn decide(s: &Situation, w: &WorkloadInput) -> Decision {
    if !s.hub_reachable {
        return unreachable(w.state);
    }
    let Some(config) = w.config else {
        return Decision::Idle;
    };
    let policy = &config.policy;
    let frozen = paused_or_frozen(s, policy);
    // A release of field ownership is due: it waits while paused or frozen.
    let release = release::release(w, config);
    if frozen.is_none() {
        if let Some(d) = release {
            return d;
        }
    }
    let Some(rec) = w.recommendation else {
        return Decision::Idle;
    };
    let current = w.state.current(&w.live.containers);
    let proposal = propose(&current, &rec.containers, &policy.excluded_containers);
    let values = proposal.values();
    let approval = rec.approval.as_ref();
    let actionable: Vec<EventResource> = RESOURCES
        .into_iter()
        .filter(|r| match mode_of(policy, *r) {
            Mode::AutoPatch => true,
            Mode::Audit => approval.is_some(),
            Mode::Off => false,
        })
        .collect();
    let tolerance = policy.guardrails.change_tolerance;
    if let Some(f) = frozen {
        // A pause or freeze holds the workloads that had a change due; the others get
        // their own outcome below (never a change), so one pause is not a row per
        // workload of the cluster (the hub's audit records the pause itself).
        let due = release.is_some()
            || actionable
                .iter()
                .any(|r| proposal.significant(*r, tolerance));
        if due {
            return hold(vec![f], values);
        }
    }
    if actionable.is_empty() {
        let mut findings = mode_findings(policy, &RESOURCES);
        findings.extend(approval_held(s, w, rec, policy, &proposal));
        return hold(findings, values);
    }
    if rec.recommendation_stale {
        let f = Finding::new(
            Reason::RecommendationStale,
            "the recommendation was made under another effective policy; waiting for the next hub run",
        )
        .detail("settingsIdentity", &rec.settings_identity)
        .detail("policyIdentity", &config.policy_identity);
        return hold(vec![f], values);
    }
    let significant = |r: &EventResource| proposal.significant(*r, tolerance);
    let others: Vec<EventResource> = RESOURCES
        .into_iter()
        .filter(|r| !actionable.contains(r) && significant(r))
        .collect();
    let mut findings = mode_findings(policy, &others);
    let changing: Vec<EventResource> = actionable.iter().copied().filter(significant).collect();
    if changing.is_empty() {
        let scope = if actionable.len() < RESOURCES.len() {
            actionable.clone()
        } else {
            Vec::new()
        };
        let f = unchanged::finding(
            &rec.containers,
            &actionable,
            &policy.excluded_containers,
            tolerance,
        )
        .on(&scope);
        findings.insert(0, f);
        return hold(findings, values);
    }
    let strategy = strategy_of(policy, w.live);
    let mut resources = changing;
    let ctx = Ctx {
        situation: s,
        input: w,
        recommendation: rec,
        policy,
        proposal: &proposal,
        strategy,
        resources: &resources,
    };
    if let Some(f) = WORKLOAD_GUARDRAILS.iter().find_map(|g| g(&ctx)) {
        findings.insert(0, f);
        return hold(findings, values);
    }
    // The first per-resource guardrail that refuses a resource is its reason.
    let refused: Vec<Finding> = resources
        .iter()
        .filter_map(|r| RESOURCE_GUARDRAILS.iter().find_map(|g| g(&ctx, *r)))
        .collect();
    resources.retain(|r| !refused.iter().any(|f| f.resources.contains(r)));
    findings.extend(refused);
    if resources.is_empty() {
        return hold(findings, values);
    }
    let window = match policy.apply.strategy {
        Strategy::Deferred => {
            match windows::maintenance(&policy.apply.maintenance_windows, s.now_ms) {
                Maintenance::Open(span) => Some(span),
                Maintenance::Closed { next } => {
                    findings.insert(0, outside_window(next));
                    return Decision::Hold {
                        findings,
                        values,
                        deferred: Some(next),
                    };
                }
            }
        }
        _ => None,
    };
    let changes = proposal.only(&resources);
    let hpa = match hpa::coordinate(
        w.live,
        w.hpas,
        &changes,
        &resources,
        policy.hpa_coordination,
    ) {
        Ok(h) => h,
        Err(f) => {
            findings.insert(0, f);
            return hold(findings, values);
        }
    };
    let via_approval = resources.iter().any(|r| mode_of(policy, *r) == Mode::Audit);
    let plan = Plan {
        strategy,
        reason: if via_approval {
            Reason::ApprovedOnce
        } else {
            Reason::RecommendationApplied
        },
        recommendation_id: rec.recommendation_id.clone(),
        approval: approval.filter(|_| via_approval).map(|a| Approval {
            id: a.id.clone(),
            approved_by: a.approved_by.clone(),
        }),
        proposal: changes,
        resources,
        fallback_after_ms: crate::policy::validate::parse_duration(&policy.apply.fallback_after)
            .map_or(600_000, |s| s as i64 * 1000),
        window,
        hpa,
        watch: policy.guardrails.rollback.clone(),
    };
    Decision::Apply {
        plan: Box::new(plan),
        findings,
        values,
    }
}

/// The annotation with which an Argo Rollout lets kerf resize its pods in place (`"true"`).
/// Argo owns those pods and their revision: by default kerf changes the Rollout's
/// template and lets Argo roll it out with its own strategy.
pub const ARGO_IN_PLACE: &str = "kerf.getkerf.dev/argo-in-place";

/// How a change to `live` is applied: the policy's strategy, except that an Argo
/// Rollout rolls out unless it opts in to in-place resizes ([`ARGO_IN_PLACE`]), and a
/// CronJob's template is changed for its next run (its running pods keep theirs).
fn strategy_of(policy: &EffectivePolicy, live: &Workload) -> Strategy {
    use crate::cluster::WorkloadKind;
    let argo_in_place = live.annotations.get(ARGO_IN_PLACE).map(String::as_str) == Some("true");
    let in_place = match live.key.kind {
        WorkloadKind::Rollout => argo_in_place,
        WorkloadKind::CronJob => false,
        _ => true,
    };
    match policy.apply.strategy {
        Strategy::InPlace if in_place => Strategy::InPlace,
        Strategy::InPlace | Strategy::Rollout | Strategy::Deferred => Strategy::Rollout,
    }
}

/// A change waiting for approval in `audit` that the API server or the scheduler would
/// refuse now ([`ADMISSION_GUARDRAILS`]): reported beside `ModeAudit`, so that the
/// workload's page says it before anyone approves.
fn approval_held(
    s: &Situation,
    w: &WorkloadInput,
    rec: &RecommendationItem,
    policy: &EffectivePolicy,
    proposal: &Proposal,
) -> Option<Finding> {
    let tolerance = policy.guardrails.change_tolerance;
    let resources: Vec<EventResource> = RESOURCES
        .into_iter()
        .filter(|r| mode_of(policy, *r) == Mode::Audit && proposal.significant(*r, tolerance))
        .collect();
    if resources.is_empty() || rec.recommendation_stale {
        return None;
    }
    let ctx = Ctx {
        situation: s,
        input: w,
        recommendation: rec,
        policy,
        proposal,
        strategy: strategy_of(policy, w.live),
        resources: &resources,
    };
    let mut f = ADMISSION_GUARDRAILS.iter().find_map(|g| g(&ctx))?;
    f.message = format!("if approved now, the change would be held: {}", f.message);
    Some(f)
}

/// Step 1: the hub cannot be reached. Reported for workloads the agent would change on
/// its own (last known mode `auto-patch` for some resource); nothing new is applied.
fn unreachable(state: &WorkloadState) -> Decision {
    let managed = state
        .mode
        .as_ref()
        .is_some_and(|m| m.cpu == Mode::AutoPatch || m.memory == Mode::AutoPatch);
    if !managed {
        return Decision::Idle;
    }
    hold(
        vec![Finding::new(
            Reason::HubUnreachable,
            "the hub cannot be reached: no fresh recommendation, nothing new is applied",
        )],
        Vec::new(),
    )
}

/// Step 2: a pause of automation, the cluster-wide freeze or a policy freeze window.
fn paused_or_frozen(s: &Situation, policy: &EffectivePolicy) -> Option<Finding> {
    if let Some(scope) = s.pause {
        return Some(
            Finding::new(
                Reason::Paused,
                format!("automation of the {} is paused in the hub", scope.as_str()),
            )
            .detail("pauseScope", scope.as_str()),
        );
    }
    if let Some(f) = &s.freeze {
        let mut finding = Finding::new(
            Reason::FreezeWindow,
            match &f.reason {
                Some(r) => format!("the cluster is frozen: {r}"),
                None => "the cluster is frozen".to_string(),
            },
        )
        .detail("scope", "cluster");
        if let Some(until) = f.until_ms {
            finding = finding.detail("until", crate::timestamp::format_ms(until));
        }
        return Some(finding);
    }
    windows::freeze(&policy.apply.freeze_windows, s.now_ms).map(|span| {
        Finding::new(
            Reason::FreezeWindow,
            format!(
                "inside a freeze window of the policy until {}",
                crate::timestamp::format_ms(span.end_ms)
            ),
        )
        .detail("scope", "policy")
        .detail("until", crate::timestamp::format_ms(span.end_ms))
    })
}

/// `ModeOff` / `ModeAudit` for `resources` (one whole-workload finding when both
/// resources share the mode).
fn mode_findings(policy: &EffectivePolicy, resources: &[EventResource]) -> Vec<Finding> {
    let finding = |mode: Mode, on: &[EventResource]| {
        let (reason, what) = match mode {
            Mode::Off => (Reason::ModeOff, "off"),
            _ => (Reason::ModeAudit, "audit"),
        };
        let whose = match on {
            [EventResource::Cpu] => "CPU",
            [EventResource::Memory] => "memory",
            _ => "the workload",
        };
        Finding::new(reason, format!("the effective mode of {whose} is {what}"))
    };
    let modes: Vec<(EventResource, Mode)> = resources
        .iter()
        .map(|r| (*r, mode_of(policy, *r)))
        .collect();
    if resources.len() == RESOURCES.len() && modes[0].1 == modes[1].1 {
        return vec![finding(modes[0].1, &[])];
    }
    modes
        .into_iter()
        .map(|(r, m)| finding(m, &[r]).on(&[r]))
        .collect()
}

fn outside_window(next: Option<Span>) -> Finding {
    match next {
        Some(span) => Finding::new(
            Reason::OutsideMaintenanceWindow,
            format!(
                "queued for the next maintenance window at {}",
                crate::timestamp::format_ms(span.start_ms)
            ),
        )
        .detail("nextWindow", crate::timestamp::format_ms(span.start_ms)),
        None => Finding::new(
            Reason::OutsideMaintenanceWindow,
            "queued, but the policy has no maintenance window that opens",
        ),
    }
}

//! What the agent remembers about one workload between loops and across restarts. It is
//! persisted in the status of the workload's RightsizingRecommendation
//! (`kerf.getkerf.dev/v1alpha1`, `status.agent`), never on local disk: the agent is
//! stateless in its pod. Plain data, no IO.
//!
//! - `reported`: the emission memory (emit only on change).
//! - `operation`: the change in flight, written **before** the cluster is touched
//!   (write-ahead), with the id its `applied` event will carry, so an agent killed
//!   mid-apply finishes the same change on restart and reports it once.
//! - `applied`: the last change that became live, and for in-place changes the values the
//!   pods must keep while the template still carries the old ones.
//! - `unsent`: events not yet acknowledged by the hub, re-sent after a restart (the hub
//!   stores each id once).
//! - `watch`: the health watch after a change (the values before and after, the
//!   deadline, the thresholds, what was counted so far), so a restarted agent keeps
//!   watching and still rolls back.
//!
//! The decisions (`decide`) read and write this data; it names nothing of them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cluster::{HpaMetric, ResourceField, Resources};
use crate::policy::{EffectiveMode, EffectiveRollback, Strategy};
use crate::wire::{AgentEvent, EventResource, Reason};

/// One proposed value, as remembered by the emission state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProposedValue {
    pub container: String,
    pub field: ResourceField,
    pub value: u64,
}

/// A finding as it was last reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reported {
    pub reason: Reason,
    /// Empty: the whole workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<EventResource>,
    /// The proposed values when it was reported (of `resources` only, when given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ProposedValue>,
    /// The effective-policy identity when it was reported.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub policy_identity: String,
}

/// An HPA's metrics before and after a change (the list is atomic: kerf applies it
/// whole, and a rollback applies `from` again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaChange {
    pub namespace: String,
    pub name: String,
    /// `cpu` or `memory`.
    pub resource: String,
    pub target_from: i32,
    pub target_to: i32,
    pub from: Vec<HpaMetric>,
    pub to: Vec<HpaMetric>,
    /// The KEDA `ScaledObject` that makes the HPA: its trigger of `resource` is changed
    /// (from `target_from` to `target_to`) and KEDA writes the HPA; kerf never writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaled_object: Option<String>,
}

impl HpaChange {
    /// The same change the other way round (a rollback).
    pub fn reversed(&self) -> HpaChange {
        HpaChange {
            target_from: self.target_to,
            target_to: self.target_from,
            from: self.to.clone(),
            to: self.from.clone(),
            ..self.clone()
        }
    }
}

/// Where a workload stands (`status.phase` of its RightsizingRecommendation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Known, nothing decided yet.
    #[default]
    Pending,
    /// Deliberately left alone (`skipped`).
    Skipped,
    /// A guardrail holds the change back (`blocked`).
    Blocked,
    /// Queued for the next maintenance window.
    Deferred,
    /// A change is in flight.
    Applying,
    /// The recommended values are live.
    Applied,
    /// The health watch restored the previous values.
    RolledBack,
    /// The last action failed.
    Failed,
}

/// One container's values before and after a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerValues {
    pub name: String,
    /// Where it is written (an app container, a sidecar or an init container).
    #[serde(default, skip_serializing_if = "crate::cluster::ContainerRole::is_app")]
    pub role: crate::cluster::ContainerRole,
    pub from: Resources,
    pub to: Resources,
}

/// The approval an `ApprovedOnce` change consumes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub id: String,
    pub approved_by: String,
}

/// How far a change in flight has come.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Step {
    /// Pods are being resized; `deferred_since_ms` is when a pod was first seen
    /// `Deferred` (for `apply.fallbackAfter`).
    InPlace {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deferred_since_ms: Option<i64>,
    },
    /// The template is being applied.
    Rollout,
    /// The template of an `OnDelete` StatefulSet is patched; its outdated pods are being
    /// evicted, once the controller has seen the template of `generation`. The rollout
    /// starts with the first eviction, and only then is the change `applied`
    /// (`announced`): a PodDisruptionBudget that refuses every eviction leaves the
    /// pods on the old values, and kerf must not report them as changed. A rollback is
    /// announced when its template is patched (rollbacks never wait).
    Evicting {
        generation: i64,
        /// Operations persisted before this field were announced at the patch.
        #[serde(default = "announced_before")]
        announced: bool,
    },
}

fn announced_before() -> bool {
    true
}

/// A change in flight (write-ahead: persisted before the first write to the cluster).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// The id of the `applied` event this change will be reported with.
    pub event_id: String,
    pub reason: Reason,
    pub strategy: Strategy,
    pub recommendation_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    pub containers: Vec<ContainerValues>,
    pub started_ms: i64,
    pub step: Step,
    pub fallback_after_ms: i64,
    /// `fallback` reason when an in-place change continues as a rollout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Reason>,
    /// API calls that failed transiently so far (the step fails after a few).
    #[serde(default)]
    pub attempts: u32,
    /// The maintenance window a deferred change rolls out in (`start/end`, RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// The HPA target moved with the requests (applied before the pods or template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpa: Option<HpaChange>,
    #[serde(default)]
    pub hpa_done: bool,
    /// The health watch's thresholds the change is watched with once live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<EffectiveRollback>,
    /// Set when this operation is a rollback: why (reported `rolled_back` when live).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<RollbackCause>,
    /// Not before this (a refused rollback waits before it is tried again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at_ms: Option<i64>,
    /// The workload's generation once kerf's template was applied (rollouts): the
    /// health watch judges the rollout once the controller has observed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_generation: Option<i64>,
}

/// Why the health watch rolls a change back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollbackCause {
    /// `OOMKills`, `Restarts` or `Throttling`.
    pub reason: Reason,
    pub message: String,
    pub details: BTreeMap<String, String>,
}

/// One container of one pod as the health watch last counted it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seen {
    pub pod_uid: String,
    pub container: String,
    pub restarts: i32,
    #[serde(default)]
    pub periods: u64,
    #[serde(default)]
    pub throttled: u64,
    /// `periods`/`throttled` hold a kubelet reading (the baseline of the deltas).
    #[serde(default)]
    pub counted: bool,
}

/// The health watch after a change became live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Watch {
    /// The `applied` event of the change watched.
    pub event_id: String,
    pub recommendation_id: String,
    pub strategy: Strategy,
    pub started_ms: i64,
    pub until_ms: i64,
    /// The change as applied (`from` = the values a rollback restores).
    pub containers: Vec<ContainerValues>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpa: Option<HpaChange>,
    pub thresholds: EffectiveRollback,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<Seen>,
    #[serde(default)]
    pub oom_kills: u32,
    #[serde(default)]
    pub restarts: u32,
    /// CFS periods and throttled periods counted since the change (changed containers).
    #[serde(default)]
    pub periods: u64,
    #[serde(default)]
    pub throttled: u64,
    /// Rollouts: the controller's progress when it last moved (`decide::stall`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<RolloutProgress>,
    /// Rollouts: the workload's generation with kerf's template; counts are read once
    /// the controller has observed it.
    #[serde(default)]
    pub generation: i64,
    /// This watch follows a rollback's rollout: it only waits for the previous values
    /// to roll out, and a stall is `failed RollbackError`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undoing: bool,
}

/// A rollout's progress as last seen to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutProgress {
    /// Pods of the new template, and available pods.
    pub updated: i32,
    pub available: i32,
    /// Every desired pod runs the new template and is available.
    pub done: bool,
    /// When these counts were first seen.
    pub since_ms: i64,
}

/// The last change that failed, so the same recommendation is not retried at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    pub recommendation_id: String,
    pub at_ms: i64,
}

impl Failure {
    /// `op` failed at `now`.
    pub fn of(op: &Operation, now: i64) -> Failure {
        Failure {
            recommendation_id: op.recommendation_id.clone(),
            at_ms: now,
        }
    }
}

/// The last change that became live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    pub event_id: String,
    pub strategy: Strategy,
    pub recommendation_id: String,
    pub at_ms: i64,
    pub containers: Vec<ContainerValues>,
    /// In place only: the template's values when the change was made. While the
    /// template still carries them, pods are kept at `containers[].to`; a template that
    /// moved (the user's own rollout) ends that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<BTreeMap<String, Resources>>,
    /// Pods created after the change (scale-up, eviction, drain, crash) that kerf
    /// resized to the applied values.
    #[serde(default)]
    pub later_pods_resized: u64,
}

impl Applied {
    /// The in-place values pods must keep, by container, while the template is as it
    /// was when they were applied (`None` once it moved, or for a rollout).
    pub fn in_place_values(
        &self,
        template: &[crate::cluster::Container],
    ) -> Option<BTreeMap<String, Resources>> {
        let at_apply = self.template.as_ref()?;
        let now: BTreeMap<String, Resources> = template
            .iter()
            .filter(|c| at_apply.contains_key(&c.name))
            .map(|c| (c.name.clone(), c.resources))
            .collect();
        (&now == at_apply).then(|| {
            self.containers
                .iter()
                .map(|c| (c.name.clone(), c.to))
                .collect()
        })
    }
}

/// The last rollback the health watch made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolledBack {
    pub reason: Reason,
    pub at_ms: i64,
    pub message: String,
}

/// Everything remembered about one workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadState {
    pub phase: Phase,
    /// When `phase` (or its reason) last changed.
    #[serde(default)]
    pub phase_since_ms: i64,
    /// The last effective mode the hub gave (decides `HubUnreachable` while it is away).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<EffectiveMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommendation_id: Option<String>,
    /// The last change or rollback (cooldown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_change_ms: Option<i64>,
    /// Start of the next maintenance window while `Deferred`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_window_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported: Vec<Reported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<Applied>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<Watch>,
    /// A release written ahead: the id its `released` event carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub releasing: Option<String>,
    /// The last rollback (the workload page and `status.rolledBack`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolled_back: Option<RolledBack>,
    /// The last decision's reason and message (status conditions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reason: Option<Reason>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsent: Vec<AgentEvent>,
}

impl WorkloadState {
    /// Sets the phase and the latest reason, noting when either changed.
    pub fn set_phase(&mut self, phase: Phase, reason: Reason, message: &str, now: i64) {
        if self.phase != phase || self.last_reason != Some(reason) {
            self.phase_since_ms = now;
        }
        self.phase = phase;
        self.last_reason = Some(reason);
        self.last_message = message.to_string();
    }

    /// The template's containers with the values an in-place change keeps on the pods.
    pub fn current(
        &self,
        template: &[crate::cluster::Container],
    ) -> Vec<crate::cluster::Container> {
        let kept = self
            .applied
            .as_ref()
            .and_then(|a| a.in_place_values(template));
        template
            .iter()
            .map(|c| {
                let mut c = c.clone();
                if let Some(r) = kept.as_ref().and_then(|k| k.get(&c.name)) {
                    c.resources = *r;
                }
                c
            })
            .collect()
    }
}

//! Whether a rollout kerf started, or the rollout of its rollback, still makes progress
//! (pure). A patched template is not a change made: the new pods may stay `Pending`
//! because no node fits them, a quota or a limit range may refuse them (`FailedCreate`),
//! or the controller may give up (`ProgressDeadlineExceeded`). The health watch follows
//! the controller's own counts (pods of the new template, available pods) and notes
//! when they last moved; a rollout that has not moved for [`STALL_AFTER_MS`], or whose
//! Deployment reports `ProgressDeadlineExceeded`, is stalled. The cause names the stall
//! and carries the evidence (`details`).
//!
//! In place there is nothing to follow here: the kubelet's verdicts on the resize
//! (`Deferred`, `Infeasible`) already end in a fallback or a refusal.

use std::collections::BTreeMap;

use super::guardrails::human;
use crate::agent::state::{RollbackCause, RolloutProgress, Watch};
use crate::cluster::{Pod, PodPhase, ReplicaSet, Workload, WorkloadKind};
use crate::policy::Strategy;
use crate::wire::Reason;

/// A rollout whose counts have not moved for this long is stalled (the Deployment
/// controller's own default `progressDeadlineSeconds`).
pub const STALL_AFTER_MS: i64 = 10 * 60_000;

/// The controller has observed kerf's template: its counts are about this rollout.
fn observed(w: &Watch, live: &Workload) -> bool {
    live.observed_generation.is_some_and(|g| g >= w.generation)
}

/// Notes the rollout's progress at `now_ms`; true when it moved (the record should be
/// written). Until the controller has observed kerf's template the rollout has not
/// started: it is noted as not done, since `now_ms`.
pub fn follow(w: &mut Watch, live: Option<&Workload>, now_ms: i64) -> bool {
    if w.strategy != Strategy::Rollout {
        return false;
    }
    let Some(live) = live else {
        return false;
    };
    let (updated, available, done) = if observed(w, live) {
        (
            live.rollout.updated,
            live.rollout.available,
            live.rolled_out(),
        )
    } else {
        match w.progress {
            Some(_) => return false,
            None => (0, 0, false),
        }
    };
    if w.progress
        .is_some_and(|p| (p.updated, p.available, p.done) == (updated, available, done))
    {
        return false;
    }
    w.progress = Some(RolloutProgress {
        updated,
        available,
        done,
        since_ms: now_ms,
    });
    true
}

/// The pods a StatefulSet's rollback has to replace itself: a StatefulSet controller
/// waits for a pod of a broken template to become Ready before it goes on, reverted
/// template or not (Kubernetes' "forced rollback"). Once the controller has observed the
/// rollback's template, each pod of another revision that is not Ready is one.
pub fn stuck_pods<'a>(w: &Watch, live: Option<&Workload>, pods: &[&'a Pod]) -> Vec<&'a Pod> {
    let Some(live) = live.filter(|l| w.undoing && l.key.kind == WorkloadKind::StatefulSet) else {
        return Vec::new();
    };
    let Some(revision) = live
        .update_revision
        .as_deref()
        .filter(|_| observed(w, live))
    else {
        return Vec::new();
    };
    pods.iter()
        .copied()
        .filter(|p| !p.deleting && !p.ready && p.revision.as_deref() != Some(revision))
        .collect()
}

/// True when the rollout is over, or there is none to follow.
pub fn settled(w: &Watch) -> bool {
    w.strategy != Strategy::Rollout || w.progress.is_none_or(|p| p.done)
}

/// True when `w`'s rollout is stalled at `now_ms` ([`stalled`] says how).
pub fn due(w: &Watch, live: Option<&Workload>, now_ms: i64) -> bool {
    let (Some(progress), Some(live)) = (w.progress.filter(|p| !p.done), live) else {
        return false;
    };
    deadline_exceeded(w, live).is_some() || now_ms - progress.since_ms >= STALL_AFTER_MS
}

/// The Deployment's `ProgressDeadlineExceeded` message, once it is about kerf's template
/// (a condition from before the controller observed it is not this rollout's).
fn deadline_exceeded<'a>(w: &Watch, live: &'a Workload) -> Option<&'a String> {
    live.rollout
        .deadline_exceeded
        .as_ref()
        .filter(|_| observed(w, live))
}

/// The stall of `w`'s rollout at `now_ms`, with its evidence: `pods` are the workload's,
/// `replica_sets` its Deployment's.
pub fn stalled(
    w: &Watch,
    live: Option<&Workload>,
    pods: &[&Pod],
    replica_sets: &[&ReplicaSet],
    now_ms: i64,
) -> Option<RollbackCause> {
    if !due(w, live, now_ms) {
        return None;
    }
    let (progress, live) = (w.progress?, live?);
    let still = now_ms - progress.since_ms;
    let deadline = deadline_exceeded(w, live);
    let mut details = BTreeMap::new();
    let desired = live.replicas;
    details.insert(
        "updated".to_string(),
        format!("{}/{desired}", progress.updated),
    );
    details.insert(
        "available".to_string(),
        format!("{}/{desired}", progress.available),
    );
    details.insert(
        "stalledFor".to_string(),
        human((still.max(0) / 1000) as u64),
    );
    let pending = pods
        .iter()
        .find(|p| !p.deleting && p.phase == PodPhase::Pending && p.unschedulable.is_some());
    let failed = replica_sets
        .iter()
        .filter(|r| r.failure.is_some())
        .max_by_key(|r| r.created_ms);
    let (stall, why) = if let Some(m) = deadline {
        details.insert("condition".to_string(), m.clone());
        (
            "ProgressDeadlineExceeded",
            format!("the Deployment controller gave up: {m}"),
        )
    } else if let Some(rs) = failed {
        let m = rs.failure.clone().unwrap_or_default();
        details.insert("replicaSet".to_string(), rs.name.clone());
        details.insert("failure".to_string(), m.clone());
        (
            "FailedCreate",
            format!("ReplicaSet {} cannot create its pods: {m}", rs.name),
        )
    } else if let Some(p) = pending {
        let m = p.unschedulable.clone().unwrap_or_default();
        details.insert("pod".to_string(), p.pod.name.clone());
        details.insert("scheduling".to_string(), m.clone());
        (
            "PodsPending",
            format!("pod {} stays Pending: {m}", p.pod.name),
        )
    } else {
        let what = match live.key.kind {
            WorkloadKind::StatefulSet => "the StatefulSet's rollout",
            WorkloadKind::DaemonSet => "the DaemonSet's rollout",
            WorkloadKind::Deployment => "the rollout",
            WorkloadKind::Rollout => "the Argo rollout",
            WorkloadKind::CronJob => "the next run",
        };
        ("NotAdvancing", format!("{what} does not advance"))
    };
    details.insert("stall".to_string(), stall.to_string());
    // The controller's and the scheduler's words end in a full stop; this goes on.
    let why = why.trim_end().trim_end_matches('.');
    let message = format!(
        "{why}; {} of {desired} pods run the new values and {} are available, unchanged for {}",
        progress.updated,
        progress.available,
        human((still.max(0) / 1000) as u64)
    );
    Some(RollbackCause {
        reason: Reason::RolloutStalled,
        message,
        details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::decide::fixture::fixture;
    use crate::cluster::ReplicaSet;

    const T0: i64 = 1_800_000_000_000;

    /// The watch of a rollout whose template is at `generation`.
    fn watch(generation: i64) -> Watch {
        let op = crate::agent::state::Operation {
            event_id: "e1".into(),
            reason: Reason::RecommendationApplied,
            strategy: Strategy::Rollout,
            recommendation_id: "r1".into(),
            approval: None,
            containers: Vec::new(),
            started_ms: T0,
            step: crate::agent::state::Step::Rollout,
            fallback_after_ms: 0,
            fallback: None,
            attempts: 0,
            window: None,
            hpa: None,
            hpa_done: false,
            watch: None,
            rollback: None,
            retry_at_ms: None,
            template_generation: Some(generation),
        };
        let mut w = crate::agent::decide::watch::start_undo(&op, T0).expect("a rollout");
        w.undoing = false;
        w
    }

    /// The fixture's Deployment (2 replicas) at `generation`, observed up to `observed`,
    /// with `updated` and `available` pods.
    fn live(generation: i64, observed: i64, updated: i32, available: i32) -> Workload {
        let mut l = fixture().live;
        l.generation = generation;
        l.observed_generation = Some(observed);
        l.rollout.updated = updated;
        l.rollout.available = available;
        l.rollout.total = 2 + (2 - updated).min(1);
        l
    }

    #[test]
    fn a_rollout_that_stops_moving_stalls_after_the_bound_and_one_that_moves_does_not() {
        let mut w = watch(2);
        // The controller has not seen kerf's template: not started, noted from now.
        assert!(follow(&mut w, Some(&live(2, 1, 2, 2)), T0));
        assert!(
            !follow(&mut w, Some(&live(2, 1, 2, 2)), T0 + 1_000),
            "a stale view is no progress"
        );
        assert!(!settled(&w));
        let l = live(2, 2, 1, 2);
        assert!(follow(&mut w, Some(&l), T0 + 60_000));
        assert_eq!(
            stalled(&w, Some(&l), &[], &[], T0 + 60_000 + STALL_AFTER_MS - 1),
            None
        );
        let cause = stalled(&w, Some(&l), &[], &[], T0 + 60_000 + STALL_AFTER_MS).expect("stalled");
        assert_eq!(cause.reason, Reason::RolloutStalled);
        assert_eq!(cause.details["stall"], "NotAdvancing");
        assert_eq!(cause.details["updated"], "1/2");
        assert_eq!(cause.details["stalledFor"], "10m");
        // It moved: the bound starts again; once done nothing stalls.
        let l = live(2, 2, 2, 2);
        assert!(follow(&mut w, Some(&l), T0 + 120_000));
        assert!(settled(&w));
        assert_eq!(
            stalled(&w, Some(&l), &[], &[], T0 + 10 * STALL_AFTER_MS),
            None
        );
    }

    #[test]
    fn the_evidence_names_the_stall() {
        let mut w = watch(2);
        let mut l = live(2, 2, 0, 2);
        follow(&mut w, Some(&l), T0);
        let late = T0 + STALL_AFTER_MS;
        let mut pod = fixture().pods[0].clone();
        pod.phase = crate::cluster::PodPhase::Pending;
        pod.unschedulable = Some("0/1 nodes are available: 1 Insufficient cpu.".into());
        let pending = stalled(&w, Some(&l), &[&pod], &[], late).expect("stalled");
        assert_eq!(pending.details["stall"], "PodsPending");
        assert_eq!(pending.details["pod"], "web-1");
        assert!(
            pending.message.contains("Insufficient cpu"),
            "{}",
            pending.message
        );
        let rs = ReplicaSet {
            namespace: "shop".into(),
            name: "web-2".into(),
            controller: None,
            created_ms: Some(T0),
            failure: Some("pods \"web-2-x\" is forbidden: exceeded quota: team".into()),
        };
        let refused = stalled(&w, Some(&l), &[&pod], &[&rs], late).expect("stalled");
        assert_eq!(refused.details["stall"], "FailedCreate");
        assert_eq!(refused.details["replicaSet"], "web-2");
        // The controller's own verdict does not wait for the bound, but only counts for
        // kerf's template.
        l.rollout.deadline_exceeded =
            Some("ReplicaSet \"web-2\" has timed out progressing.".into());
        let at_once = stalled(&w, Some(&l), &[], &[], T0 + 1_000).expect("at once");
        assert_eq!(at_once.details["stall"], "ProgressDeadlineExceeded");
        let stale = live(2, 1, 0, 2);
        let mut old = l.clone();
        old.observed_generation = stale.observed_generation;
        assert_eq!(stalled(&w, Some(&old), &[], &[], T0 + 1_000), None);
    }

    #[test]
    fn a_statefulset_rollback_replaces_the_pods_of_the_broken_template_once_observed() {
        let mut w = watch(3);
        w.undoing = true;
        let mut l = live(3, 3, 1, 1);
        l.key.kind = WorkloadKind::StatefulSet;
        l.update_revision = Some("r1".into());
        let mut broken = fixture().pods[1].clone();
        broken.revision = Some("r2".into());
        broken.ready = false;
        let fine = fixture().pods[0].clone();
        let stuck = stuck_pods(&w, Some(&l), &[&fine, &broken]);
        assert_eq!(stuck.len(), 1);
        assert_eq!(stuck[0].pod.name, "web-2");
        l.observed_generation = Some(2);
        assert!(
            stuck_pods(&w, Some(&l), &[&fine, &broken]).is_empty(),
            "not observed yet"
        );
        w.undoing = false;
        l.observed_generation = Some(3);
        assert!(
            stuck_pods(&w, Some(&l), &[&fine, &broken]).is_empty(),
            "only a rollback"
        );
    }
}

//! Changes in flight and after: advancing an operation one step and reporting what it
//! reached (`applied` and the start of its health watch, `rolled_back` for a rollback,
//! `fallback` — or `blocked SingleReplicaUnsafe` when the rollout it would fall back to
//! is unsafe —, `failed`, a PodDisruptionBudget hold), and keeping in-place values on
//! pods created after the change while the template still carries the old ones
//! (counted on the record, no new event).

use std::collections::BTreeMap;

use super::Actions;
use crate::agent::apply::{advance, Progress};
use crate::agent::decide::emission::select;
use crate::agent::decide::inplace::{changes_qos, to_resize};
use crate::agent::state::{Applied, Failure, Phase, RolledBack, Step};
use crate::cluster::{Cluster, Resources, Snapshot, Workload, WorkloadKey};
use crate::policy::{Mode, Strategy};
use crate::wire::WorkloadConfig;

/// A rollback the API refused is tried again after this.
pub const ROLLBACK_RETRY_MS: i64 = 60_000;

impl<C: Cluster> Actions<'_, C> {
    /// Advances the change in flight of `key` by as many steps as are due now.
    pub async fn advance(&mut self, key: &WorkloadKey, snap: &Snapshot, now: i64) {
        // A fallback continues as a rollout at once; nothing else loops.
        for _ in 0..2 {
            let Some(mut op) = self.memory.get(key).and_then(|t| t.state.operation.clone()) else {
                return;
            };
            let before = op.clone();
            let progress = advance(self.cluster, snap, key, &mut op, now).await;
            let t = self.memory.entry(key);
            if op != before {
                t.dirty = true;
            }
            match progress {
                Progress::Pending => {
                    t.state.operation = Some(op);
                    return;
                }
                Progress::Held(finding) => {
                    let sel = select(
                        &t.state.reported,
                        std::slice::from_ref(&finding),
                        &[],
                        "",
                        0.0,
                    );
                    t.state.reported = sel.next;
                    t.state.operation = Some(op);
                    if !sel.emit.is_empty() {
                        let e = crate::agent::event::finding(
                            now,
                            key,
                            &finding,
                            Some(&before.recommendation_id),
                        );
                        self.emit(key, e);
                    }
                    return;
                }
                Progress::Applied if op.rollback.is_some() => {
                    let cause = op.rollback.clone().expect("matched: a rollback");
                    t.state.applied = None;
                    t.patched.clear();
                    t.state.last_change_ms = Some(now);
                    t.state.reported.clear();
                    t.state.rolled_back = Some(RolledBack {
                        reason: op.reason,
                        at_ms: now,
                        message: cause.message.clone(),
                    });
                    let e = crate::agent::event::rolled_back(now, key, &op);
                    let message = e.message.clone().unwrap_or_default();
                    t.state
                        .set_phase(Phase::RolledBack, op.reason, &message, now);
                    t.state.operation =
                        matches!(op.step, Step::Evicting { .. }).then(|| op.clone());
                    // The previous values must roll out again: followed like a change.
                    t.state.watch =
                        crate::agent::decide::watch::start_undo(&op, now).map(|mut w| {
                            let live = snap.workload(key);
                            crate::agent::decide::stall::follow(&mut w, live.map(|x| &**x), now);
                            w
                        });
                    t.dirty = true;
                    self.emit(key, e);
                    return;
                }
                Progress::Applied => {
                    let template = snap.workload(key).map(|w| template_of(w, &op));
                    t.state.applied = Some(Applied {
                        event_id: op.event_id.clone(),
                        strategy: op.strategy,
                        recommendation_id: op.recommendation_id.clone(),
                        at_ms: now,
                        containers: op.containers.clone(),
                        template: template.filter(|_| op.strategy == Strategy::InPlace),
                        later_pods_resized: 0,
                    });
                    t.patched.clear();
                    t.state.last_change_ms = Some(now);
                    t.state.reported.clear();
                    let message = crate::agent::event::applied(now, key, &op)
                        .message
                        .unwrap_or_default();
                    t.state.set_phase(Phase::Applied, op.reason, &message, now);
                    t.state.operation =
                        matches!(op.step, Step::Evicting { .. }).then(|| op.clone());
                    // The watch counts from now: the pods as they are when the change is live.
                    t.state.watch = crate::agent::decide::watch::start(&op, now).map(|mut w| {
                        let pods: Vec<_> = snap.pods_of(key).collect();
                        crate::agent::decide::watch::observe(&mut w, &pods, &[]);
                        let live = snap.workload(key);
                        crate::agent::decide::stall::follow(&mut w, live.map(|x| &**x), now);
                        w
                    });
                    t.dirty = true;
                    let e = crate::agent::event::applied(now, key, &op);
                    self.emit(key, e);
                    return;
                }
                Progress::Done => {
                    t.state.operation = None;
                    t.dirty = true;
                    return;
                }
                Progress::Fallback {
                    reason,
                    message,
                    details,
                } => {
                    if op.rollback.is_none() {
                        let refused = snap.workload(key).and_then(|w| {
                            let pods: Vec<_> = snap.pods_of(key).collect();
                            let pdbs = crate::agent::decide::disruption::pdbs_of(snap, w, &pods);
                            crate::agent::decide::disruption::unsafe_rollout(w, &pdbs)
                        });
                        if let Some(f) = refused {
                            self.refuse_fallback(key, snap, op, f, reason, &message, now)
                                .await;
                            return;
                        }
                    }
                    let e = crate::agent::event::outcome(now, key, &op, reason, &message, details);
                    op.step = Step::Rollout;
                    op.strategy = Strategy::Rollout;
                    op.fallback = Some(reason);
                    op.attempts = 0;
                    t.state.operation = Some(op);
                    t.dirty = true;
                    self.emit(key, e);
                    // The operation now says rollout: a restart continues from here.
                    if !self.persist_one(key).await {
                        return;
                    }
                }
                Progress::Failed { reason, message } if op.rollback.is_some() => {
                    // A rollback is never dropped: reported once per error, tried again.
                    let f = crate::agent::decide::Finding::new(reason, message.clone())
                        .detail("error", &message);
                    let sel = select(
                        &t.state.reported,
                        std::slice::from_ref(&f),
                        &[],
                        &message,
                        0.0,
                    );
                    t.state.reported = sel.next;
                    op.attempts = 0;
                    op.retry_at_ms = Some(now + ROLLBACK_RETRY_MS);
                    op.step = match op.strategy {
                        Strategy::InPlace => Step::InPlace {
                            deferred_since_ms: None,
                        },
                        _ => Step::Rollout,
                    };
                    t.state.operation = Some(op.clone());
                    t.state.set_phase(Phase::Failed, reason, &message, now);
                    t.dirty = true;
                    if !sel.emit.is_empty() {
                        let mut details = BTreeMap::new();
                        details.insert("error".to_string(), message.clone());
                        let e =
                            crate::agent::event::outcome(now, key, &op, reason, &message, details);
                        self.emit(key, e);
                    }
                    return;
                }
                Progress::Failed { reason, message } => {
                    let mut details = BTreeMap::new();
                    details.insert("error".to_string(), message.clone());
                    let e = crate::agent::event::outcome(now, key, &op, reason, &message, details);
                    t.state.failure = Some(Failure::of(&op, now));
                    t.state.operation = None;
                    t.state.reported.clear();
                    t.state.set_phase(Phase::Failed, reason, &message, now);
                    t.dirty = true;
                    self.emit(key, e);
                    return;
                }
            }
        }
    }

    /// The in-place change `op` cannot continue as a rollout without leaving the
    /// workload without a Ready pod: pods already resized are given their values back
    /// (so nothing stays pending at the kubelet), and the change is reported as
    /// `blocked SingleReplicaUnsafe` with `details.fallbackReason`; the same
    /// recommendation is not tried again before [`super::decision::RETRY_FAILED_AFTER_MS`].
    #[allow(clippy::too_many_arguments)]
    async fn refuse_fallback(
        &mut self,
        key: &WorkloadKey,
        snap: &Snapshot,
        op: crate::agent::state::Operation,
        finding: crate::agent::decide::Finding,
        fallback: crate::wire::Reason,
        why: &str,
        now: i64,
    ) {
        let back: BTreeMap<String, Resources> = op
            .containers
            .iter()
            .map(|c| (c.name.clone(), c.from))
            .collect();
        let pods: Vec<_> = snap.pods_of(key).collect();
        for (pod, changes) in to_resize(&pods, &back) {
            if let Err(e) = self.cluster.resize_pod(&pod, &changes).await {
                tracing::warn!(workload = %key, pod = %pod.name, error = %e, "cannot give a pod its values back");
            }
        }
        if let Some(h) = op.hpa.as_ref().filter(|_| op.hpa_done) {
            if let Err(e) = crate::agent::apply::set_hpa(self.cluster, h, true).await {
                tracing::warn!(workload = %key, hpa = %h.name, error = %e, "cannot give the HPA its target back");
            }
        }
        let mut f = finding.detail("fallbackReason", fallback.as_str());
        f.message = format!("{why}; falling back to a rollout is refused: {}", f.message);
        let t = self.memory.entry(key);
        let sel = select(&t.state.reported, std::slice::from_ref(&f), &[], "", 0.0);
        t.state.reported = sel.next;
        t.state.operation = None;
        t.state.failure = Some(Failure::of(&op, now));
        t.state.set_phase(
            Phase::Blocked,
            crate::wire::Reason::SingleReplicaUnsafe,
            &f.message,
            now,
        );
        t.dirty = true;
        if !sel.emit.is_empty() {
            let e = crate::agent::event::finding(now, key, &f, Some(&op.recommendation_id));
            self.emit(key, e);
        }
    }

    /// Pods created since an in-place change, from the unchanged template, are resized
    /// to the applied values as soon as they run.
    pub async fn keep_in_place(
        &mut self,
        live: &Workload,
        snap: &Snapshot,
        now: i64,
        config: Option<&WorkloadConfig>,
    ) {
        let key = &live.key;
        let Some(t) = self.memory.get(key) else {
            return;
        };
        let Some(applied) = &t.state.applied else {
            return;
        };
        let Some(values) = applied.in_place_values(&live.containers) else {
            return;
        };
        // Mode off for a changed resource: kerf leaves the workload alone.
        let off = config.is_some_and(|c| c.mode.cpu == Mode::Off || c.mode.memory == Mode::Off);
        if off {
            return;
        }
        let pods: Vec<_> = snap.pods_of(key).collect();
        let due: Vec<_> = to_resize(&pods, &values)
            .into_iter()
            .filter(|(p, _)| {
                let pod = pods.iter().find(|x| &x.pod == p);
                pod.is_some_and(|x| !t.patched.contains(&x.uid) && !changes_qos(x, &values))
            })
            .collect();
        for (pod, changes) in due {
            let uid = pods
                .iter()
                .find(|x| x.pod == pod)
                .map(|x| x.uid.clone())
                .unwrap_or_default();
            match self.cluster.resize_pod(&pod, &changes).await {
                Ok(_) => {
                    tracing::info!(workload = %key, pod = %pod.name, "a later pod resized to the applied values");
                    if let Some(t) = self.memory.get_mut(key) {
                        t.patched.insert(uid);
                        if let Some(a) = &mut t.state.applied {
                            a.later_pods_resized += 1;
                        }
                        t.dirty = true;
                    }
                }
                Err(e) => {
                    tracing::warn!(workload = %key, pod = %pod.name, error = %e, at = now, "cannot resize a later pod; retrying next pass")
                }
            }
        }
    }
}

/// The template's values of the containers `op` changes (what an in-place change keeps
/// pods away from while the template still carries them).
fn template_of(w: &Workload, op: &crate::agent::state::Operation) -> BTreeMap<String, Resources> {
    w.containers
        .iter()
        .filter(|c| op.containers.iter().any(|x| x.name == c.name))
        .map(|c| (c.name.clone(), c.resources))
        .collect()
}

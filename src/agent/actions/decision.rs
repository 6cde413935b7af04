//! Deciding for one workload and acting on the decision: hold and report (on change),
//! release what kerf owned of a workload that left `auto-patch`, keep in-place values
//! on pods created since, or start a change, written ahead to the record before the
//! cluster is touched. A feed item that cannot be read is reported, once per error.

use super::Actions;
use crate::agent::decide::emission::select;
use crate::agent::decide::{decide, Decision, Finding, Plan, Situation, WorkloadInput};
use crate::agent::state::{Operation, Phase, Step};
use crate::cluster::{Cluster, Hpa, Snapshot, Workload, WorkloadKey};
use crate::policy::Strategy;
use crate::wire::{EventType, Reason, RecommendationItem, WorkloadConfig};

/// A change that failed is not tried again for the same recommendation before this.
pub const RETRY_FAILED_AFTER_MS: i64 = 15 * 60 * 1000;

impl<C: Cluster> Actions<'_, C> {
    /// Decides for one workload and acts; true when a change started.
    pub async fn decide_one(
        &mut self,
        s: &Situation,
        live: &Workload,
        snap: &Snapshot,
        config: Option<&WorkloadConfig>,
        rec: Option<&RecommendationItem>,
    ) -> bool {
        let key = live.key.clone();
        let pods: Vec<_> = snap.pods_of(&key).collect();
        let state = self
            .memory
            .get(&key)
            .map(|t| t.state.clone())
            .unwrap_or_default();
        if state.releasing.is_some() && s.hub_reachable && s.pause.is_none() && s.freeze.is_none() {
            // A release written ahead and not finished (a restart): finish it.
            if let Some(c) = config {
                let previous = state.mode.clone().unwrap_or_else(|| c.mode.clone());
                self.release(live, snap, c, previous, Vec::new(), s.now_ms)
                    .await;
                return false;
            }
        }
        let hpas: Vec<&Hpa> = snap
            .hpas
            .iter()
            .filter(|h| h.target.as_ref() == Some(&key))
            .collect();
        let vpas: Vec<&crate::cluster::Vpa> = snap
            .vpas
            .iter()
            .filter(|v| v.target.as_ref() == Some(&key))
            .collect();
        let pdbs = crate::agent::decide::disruption::pdbs_of(snap, live, &pods);
        let throttling = self
            .counters
            .throttling(
                self.cluster,
                self.clock,
                live,
                snap,
                &pods,
                config,
                rec,
                &state,
            )
            .await;
        let input = WorkloadInput {
            live,
            pods: &pods,
            nodes: &snap.nodes,
            hpas: &hpas,
            vpas: &vpas,
            pdbs: &pdbs,
            admission: snap.admission_of(&key.namespace),
            node_requests: snap,
            throttling: &throttling,
            config,
            recommendation: rec,
            state: &state,
        };
        let decision = decide(s, &input);
        let identity = config
            .map(|c| c.policy_identity.as_str())
            .unwrap_or_default();
        let tolerance = config.map_or(s.default_tolerance, |c| {
            c.policy.guardrails.change_tolerance
        });
        let rec_id = rec.map(|r| r.recommendation_id.clone());
        match decision {
            Decision::Release {
                resources,
                previous,
                now: _,
            } => {
                if let Some(c) = config {
                    self.release(live, snap, c, previous, resources, s.now_ms)
                        .await;
                }
                false
            }
            Decision::Idle => {
                if s.hub_reachable && s.pause.is_none() && s.freeze.is_none() {
                    self.keep_in_place(live, snap, s.now_ms, config).await;
                }
                false
            }
            Decision::Hold {
                findings,
                values,
                deferred,
            } => {
                // Paused or frozen: the mode the agent last acted under is kept, so a
                // workload that left auto-patch meanwhile is released after. A workload
                // first seen now has no such mode: its mode is noted, so that the hub
                // going away later holds it (`HubUnreachable`) like any other.
                let held = matches!(findings[0].reason, Reason::Paused | Reason::FreezeWindow)
                    && state.mode.is_some();
                let t =
                    self.memory
                        .track(live, rec_id.as_deref(), &values, config.filter(|_| !held));
                let sel = select(&t.state.reported, &findings, &values, identity, tolerance);
                let phase = match deferred {
                    Some(next) => {
                        t.state.next_window_ms = next.map(|w| w.start_ms);
                        Phase::Deferred
                    }
                    None => match findings[0].reason.event_type() {
                        EventType::Blocked => Phase::Blocked,
                        _ => Phase::Skipped,
                    },
                };
                let lead = &findings[0];
                t.state
                    .set_phase(phase, lead.reason, &lead.message, s.now_ms);
                if t.state.reported != sel.next {
                    t.state.reported = sel.next;
                    t.dirty = true;
                }
                for i in sel.emit {
                    let e = crate::agent::event::finding(
                        s.now_ms,
                        &key,
                        &findings[i],
                        rec_id.as_deref(),
                    );
                    self.emit(&key, e);
                }
                if !matches!(
                    lead.reason,
                    Reason::Paused | Reason::FreezeWindow | Reason::HubUnreachable
                ) {
                    self.keep_in_place(live, snap, s.now_ms, config).await;
                }
                false
            }
            Decision::Apply {
                plan,
                findings,
                values,
            } => {
                let failed_recently = state.failure.as_ref().is_some_and(|f| {
                    f.recommendation_id == plan.recommendation_id
                        && s.now_ms - f.at_ms < RETRY_FAILED_AFTER_MS
                });
                self.memory.track(live, rec_id.as_deref(), &values, config);
                if failed_recently {
                    return false;
                }
                self.begin(
                    live, *plan, findings, &values, identity, tolerance, s.now_ms, snap,
                )
                .await
            }
        }
    }

    /// Starts a change: the operation is written to the record before the cluster is
    /// touched, then advanced once.
    #[allow(clippy::too_many_arguments)]
    async fn begin(
        &mut self,
        live: &Workload,
        plan: Plan,
        findings: Vec<Finding>,
        values: &[crate::agent::decide::values::ProposedValue],
        identity: &str,
        tolerance: f64,
        now: i64,
        snap: &Snapshot,
    ) -> bool {
        let key = live.key.clone();
        let op = Operation {
            event_id: crate::agent::event::new_id(now),
            reason: plan.reason,
            strategy: plan.strategy,
            recommendation_id: plan.recommendation_id.clone(),
            approval: plan.approval.clone(),
            containers: plan
                .proposal
                .containers
                .iter()
                .map(|c| crate::agent::state::ContainerValues {
                    name: c.name.clone(),
                    role: c.role,
                    from: c.current,
                    to: c.target,
                })
                .collect(),
            started_ms: now,
            step: match plan.strategy {
                Strategy::InPlace => Step::InPlace {
                    deferred_since_ms: None,
                },
                _ => Step::Rollout,
            },
            fallback_after_ms: plan.fallback_after_ms,
            fallback: None,
            attempts: 0,
            window: plan.window.map(|w| {
                format!(
                    "{}/{}",
                    crate::timestamp::format_ms(w.start_ms),
                    crate::timestamp::format_ms(w.end_ms)
                )
            }),
            hpa: plan.hpa.clone(),
            hpa_done: false,
            watch: Some(plan.watch.clone()),
            rollback: None,
            retry_at_ms: None,
            template_generation: None,
        };
        let t = self.memory.entry(&key);
        // A change starts over: what was reported before is forgotten; per-resource
        // findings inside the change are reported now.
        let sel = select(&[], &findings, values, identity, tolerance);
        t.state.reported = sel.next;
        t.state.operation = Some(op);
        t.state.failure = None;
        t.state
            .set_phase(Phase::Applying, plan.reason, "applying", now);
        t.dirty = true;
        for i in sel.emit {
            let e = crate::agent::event::finding(
                now,
                &key,
                &findings[i],
                Some(&plan.recommendation_id),
            );
            self.emit(&key, e);
        }
        if !self.persist_one(&key).await {
            // Not written ahead: do not touch the cluster; try again next pass.
            if let Some(t) = self.memory.get_mut(&key) {
                t.state.operation = None;
            }
            return false;
        }
        self.advance(&key, snap, now).await;
        true
    }

    /// Reports a feed item that could not be read, once per error text.
    pub fn unreadable(&mut self, key: &WorkloadKey, what: &str, error: &str, now: i64) {
        let f = Finding::new(
            Reason::ApplyError,
            format!("the hub's {what} for this workload cannot be read: {error}"),
        )
        .detail("error", error);
        let t = self.memory.entry(key);
        let sel = select(&t.state.reported, std::slice::from_ref(&f), &[], error, 0.0);
        t.state.reported = sel.next;
        t.state
            .set_phase(Phase::Failed, Reason::ApplyError, &f.message, now);
        t.dirty = true;
        if !sel.emit.is_empty() {
            let e = crate::agent::event::finding(now, key, &f, None);
            self.emit(key, e);
        }
    }
}

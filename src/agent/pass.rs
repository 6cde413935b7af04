//! One pass of the agent over every workload it sees: read both feeds (or note the hub
//! away), look at the health watches (rollbacks start whatever the hub says), match hub
//! workloads to live ones by namespace, kind and name, advance the changes in flight,
//! decide for the others, report on change, start the changes the decisions allow
//! (written ahead to the record before the cluster is touched), release what kerf owned
//! of workloads that left `auto-patch`, keep in-place values on pods created since, and
//! write the records that changed.

use std::collections::HashMap;

use super::decide::emission::select;
use super::decide::{decide, ClusterFreeze, Decision, Finding, Plan, Situation, WorkloadInput};
use super::hub::{FeedItem, Hub};
use super::run::{Agent, PassReport};
use super::state::{Failure, Operation, Phase, Step, WorkloadState};
use crate::cluster::{Cluster, Hpa, Pdb, Pod, Snapshot, View, Workload, WorkloadKey};
use crate::policy::Strategy;
use crate::wire::{AgentEvent, ConfigFeed, EventType, Reason, RecommendationItem, WorkloadConfig};

/// A change that failed is not tried again for the same recommendation before this.
pub const RETRY_FAILED_AFTER_MS: i64 = 15 * 60 * 1000;

type Name = (String, String, String);

fn name_of(key: &WorkloadKey) -> Name {
    (
        key.namespace.clone(),
        key.kind.as_str().to_string(),
        key.name.clone(),
    )
}

/// What the hub said this pass, by workload.
#[derive(Default)]
struct Feeds<'a> {
    config: HashMap<Name, &'a WorkloadConfig>,
    items: HashMap<Name, &'a RecommendationItem>,
    /// What could not be read ("recommendation" or "config") and why.
    bad: HashMap<Name, (&'static str, &'a str)>,
}

impl<'a> Feeds<'a> {
    fn index(config: Option<&'a ConfigFeed>, items: &'a [FeedItem]) -> Feeds<'a> {
        let mut f = Feeds::default();
        for w in config.iter().flat_map(|c| &c.workloads) {
            f.config
                .insert((w.namespace.clone(), w.kind.clone(), w.name.clone()), w);
        }
        for u in config.iter().flat_map(|c| &c.unreadable) {
            let name = (u.namespace.clone(), u.kind.clone(), u.name.clone());
            f.bad.insert(name, ("config", u.error.as_str()));
        }
        for item in items {
            match item {
                FeedItem::Ok(i) => {
                    let w = &i.workload;
                    f.items
                        .insert((w.namespace.clone(), w.kind.clone(), w.name.clone()), i);
                }
                FeedItem::Bad {
                    workload: Some(name),
                    error,
                } => {
                    f.bad
                        .insert(name.clone(), ("recommendation", error.as_str()));
                }
                FeedItem::Bad { error, .. } => {
                    tracing::warn!(%error, "a recommendation feed item without a workload was ignored")
                }
            }
        }
        f
    }
}

fn situation(now_ms: i64, config: Option<&ConfigFeed>) -> Situation {
    let Some(c) = config else {
        return Situation {
            now_ms,
            hub_reachable: false,
            pause: None,
            freeze: None,
            default_tolerance: crate::policy::defaults::CHANGE_TOLERANCE,
        };
    };
    Situation {
        now_ms,
        hub_reachable: true,
        pause: c.flags.paused.then(|| {
            c.flags
                .pause_scope
                .unwrap_or(crate::wire::PauseScope::Cluster)
        }),
        freeze: c.flags.frozen.then(|| ClusterFreeze {
            reason: c.freeze.reason.clone(),
            until_ms: c
                .freeze
                .until
                .clone()
                .flatten()
                .and_then(|u| crate::timestamp::parse_ms(&u)),
        }),
        default_tolerance: c.agent.change_tolerance_default,
    }
}

impl<C: Cluster, H: Hub> Agent<C, H> {
    /// One pass over every workload.
    pub async fn pass(&mut self) -> PassReport {
        self.settle_acknowledged();
        let fetched = self.fetch().await;
        let now = self.clock.now_ms();
        let (config, items) = match fetched {
            Ok((c, i)) => {
                self.settings = c.agent.clone();
                self.outbox.set_capacity(c.agent.event_buffer_size as usize);
                (Some(c), i)
            }
            Err(e) => {
                tracing::warn!(error = %e, "the hub cannot be reached; nothing new is applied");
                (None, Vec::new())
            }
        };
        let snap = self.view.snapshot();
        let s = situation(now, config.as_ref());
        let feeds = Feeds::index(config.as_ref(), &items);
        let mut report = PassReport {
            hub_reachable: s.hub_reachable,
            workloads: snap.workloads.len(),
            ..PassReport::default()
        };
        let before = self.kube_events.len();
        let rolled = self.watch_all(&snap, now).await;
        for w in &snap.workloads {
            let name = name_of(&w.key);
            // Rolled back just now: the snapshot still shows the values before.
            if rolled.contains(&w.key) {
                continue;
            }
            if self
                .tracked
                .get(&w.key)
                .is_some_and(|t| t.state.operation.is_some())
            {
                self.advance(&w.key, &snap, now).await;
                continue;
            }
            if let Some((what, error)) = feeds.bad.get(&name) {
                self.unreadable(&w.key, what, error, now);
                continue;
            }
            let started = self
                .decide_one(
                    &s,
                    w,
                    &snap,
                    feeds.config.get(&name).copied(),
                    feeds.items.get(&name).copied(),
                )
                .await;
            report.started += usize::from(started);
        }
        report.events = self.kube_events.len() - before;
        if let Some(c) = config {
            self.last_config = Some(c);
        }
        report.records_written = self.persist().await;
        report
    }

    /// Advances every change in flight (between passes, as the watches see pods move).
    pub async fn advance_all(&mut self) {
        self.settle_acknowledged();
        let snap = self.view.snapshot();
        let now = self.clock.now_ms();
        self.watch_all(&snap, now).await;
        let busy: Vec<WorkloadKey> = self
            .tracked
            .iter()
            .filter(|(_, t)| t.state.operation.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        for key in busy {
            self.advance(&key, &snap, now).await;
        }
        self.persist().await;
    }

    /// Forgets the events the hub acknowledged (or the buffer dropped).
    fn settle_acknowledged(&mut self) {
        for id in self.outbox.take_settled() {
            if let Some(key) = self.unsent.remove(&id) {
                if let Some(t) = self.tracked.get_mut(&key) {
                    t.state.unsent.retain(|e| e.id != id);
                    t.dirty = true;
                }
            }
        }
    }

    /// Decides for one workload and acts; true when a change started.
    async fn decide_one(
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
            .tracked
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
        let pdbs = pdbs_of(snap, live, &pods);
        let throttling = self
            .throttling_for(live, snap, &pods, config, rec, &state)
            .await;
        let input = WorkloadInput {
            live,
            pods: &pods,
            nodes: &snap.nodes,
            hpas: &hpas,
            pdbs: &pdbs,
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
                // workload that left auto-patch meanwhile is released after.
                let held = matches!(findings[0].reason, Reason::Paused | Reason::FreezeWindow);
                let t = self.track(live, rec_id.as_deref(), &values, config.filter(|_| !held));
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
                set_phase(&mut t.state, phase, lead.reason, &lead.message, s.now_ms);
                if t.state.reported != sel.next {
                    t.state.reported = sel.next;
                    t.dirty = true;
                }
                for i in sel.emit {
                    let e = super::event::finding(s.now_ms, &key, &findings[i], rec_id.as_deref());
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
                self.track(live, rec_id.as_deref(), &values, config);
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

    /// The tracked entry of `key`, its spec kept in step with the recommendation.
    pub(super) fn track(
        &mut self,
        live: &Workload,
        rec_id: Option<&str>,
        values: &[super::decide::values::ProposedValue],
        config: Option<&WorkloadConfig>,
    ) -> &mut super::run::Tracked {
        let key = &live.key;
        let t = self.tracked.entry(key.clone()).or_default();
        if rec_id.is_some() && t.state.recommendation_id.as_deref() != rec_id {
            t.state.recommendation_id = rec_id.map(str::to_string);
            t.dirty = true;
        }
        if let Some(c) = config {
            if t.state.mode.as_ref() != Some(&c.mode) {
                t.state.mode = Some(c.mode.clone());
                t.dirty = true;
            }
        }
        let stale_spec = t.record.as_ref().is_none_or(|r| {
            r.spec.get("recommendationID").and_then(|v| v.as_str())
                != t.state.recommendation_id.as_deref()
        });
        if stale_spec {
            let mut fresh = super::record::new(key, t.state.recommendation_id.as_deref(), values);
            fresh.uid = t.record.as_ref().and_then(|r| r.uid.clone());
            fresh.owner = Some(crate::cluster::ObjectRef {
                api_version: "apps/v1".into(),
                kind: key.kind.as_str().into(),
                namespace: key.namespace.clone(),
                name: key.name.clone(),
                uid: Some(live.uid.clone()).filter(|u| !u.is_empty()),
            });
            t.record = Some(fresh);
            t.spec_dirty = true;
            t.dirty = true;
        }
        t
    }

    /// Starts a change: the operation is written to the record before the cluster is
    /// touched, then advanced once.
    #[allow(clippy::too_many_arguments)]
    async fn begin(
        &mut self,
        live: &Workload,
        plan: Plan,
        findings: Vec<Finding>,
        values: &[super::decide::values::ProposedValue],
        identity: &str,
        tolerance: f64,
        now: i64,
        snap: &Snapshot,
    ) -> bool {
        let key = live.key.clone();
        let op = Operation {
            event_id: super::event::new_id(),
            reason: plan.reason,
            strategy: plan.strategy,
            recommendation_id: plan.recommendation_id.clone(),
            approval: plan.approval.clone(),
            containers: plan
                .proposal
                .containers
                .iter()
                .map(|c| super::state::ContainerValues {
                    name: c.name.clone(),
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
        };
        let t = self.tracked.entry(key.clone()).or_default();
        // A change starts over: what was reported before is forgotten; per-resource
        // findings inside the change are reported now.
        let sel = select(&[], &findings, values, identity, tolerance);
        t.state.reported = sel.next;
        t.state.operation = Some(op);
        t.state.failure = None;
        set_phase(&mut t.state, Phase::Applying, plan.reason, "applying", now);
        t.dirty = true;
        for i in sel.emit {
            let e = super::event::finding(now, &key, &findings[i], Some(&plan.recommendation_id));
            self.emit(&key, e);
        }
        if !self.persist_one(&key).await {
            // Not written ahead: do not touch the cluster; try again next pass.
            if let Some(t) = self.tracked.get_mut(&key) {
                t.state.operation = None;
            }
            return false;
        }
        self.advance(&key, snap, now).await;
        true
    }

    /// Reports a feed item that could not be read, once per error text.
    fn unreadable(&mut self, key: &WorkloadKey, what: &str, error: &str, now: i64) {
        let f = Finding::new(
            Reason::ApplyError,
            format!("the hub's {what} for this workload cannot be read: {error}"),
        )
        .detail("error", error);
        let t = self.tracked.entry(key.clone()).or_default();
        let sel = select(&t.state.reported, std::slice::from_ref(&f), &[], error, 0.0);
        t.state.reported = sel.next;
        set_phase(
            &mut t.state,
            Phase::Failed,
            Reason::ApplyError,
            &f.message,
            now,
        );
        t.dirty = true;
        if !sel.emit.is_empty() {
            let e = super::event::finding(now, key, &f, None);
            self.emit(key, e);
        }
    }

    /// Keeps `e` in the record until the hub acknowledges it, stages it for the hub
    /// (handed to the outbox once the pass has written its records, so an agent killed
    /// in between neither delivers an event it will decide again nor loses one it
    /// wrote down), and queues its Kubernetes Event.
    pub(super) fn emit(&mut self, key: &WorkloadKey, e: AgentEvent) {
        /// Unacknowledged events kept per record (older ones stay only in the buffer).
        const KEEP: usize = 32;
        let t = self.tracked.entry(key.clone()).or_default();
        t.state.unsent.push(e.clone());
        if t.state.unsent.len() > KEEP {
            let old = t.state.unsent.remove(0);
            self.unsent.remove(&old.id);
        }
        t.dirty = true;
        self.unsent.insert(e.id.clone(), key.clone());
        self.staged.push(e.clone());
        self.kube_events.push((key.clone(), e));
    }
}

/// The PodDisruptionBudgets of `live`'s namespace that select its pods (or, with no
/// pod yet, whose selector its own selector satisfies).
pub(super) fn pdbs_of<'a>(snap: &'a Snapshot, live: &Workload, pods: &[&Pod]) -> Vec<&'a Pdb> {
    let selects = |sel: &std::collections::BTreeMap<String, String>,
                   labels: &std::collections::BTreeMap<String, String>| {
        !sel.is_empty() && sel.iter().all(|(k, v)| labels.get(k) == Some(v))
    };
    snap.pdbs
        .iter()
        .filter(|p| p.namespace == live.key.namespace)
        .filter(|p| {
            if pods.is_empty() {
                selects(&p.selector, &live.selector)
            } else {
                pods.iter().any(|pod| selects(&p.selector, &pod.labels))
            }
        })
        .collect()
}

/// Sets the phase and the latest reason, noting when either changed.
pub(super) fn set_phase(
    state: &mut WorkloadState,
    phase: Phase,
    reason: Reason,
    message: &str,
    now: i64,
) {
    if state.phase != phase || state.last_reason != Some(reason) {
        state.phase_since_ms = now;
    }
    state.phase = phase;
    state.last_reason = Some(reason);
    state.last_message = message.to_string();
}

/// `Failure` after a change failed.
pub(super) fn failure(op: &Operation, now: i64) -> Failure {
    Failure {
        recommendation_id: op.recommendation_id.clone(),
        at_ms: now,
    }
}

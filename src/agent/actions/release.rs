//! Releasing a workload to GitOps when it leaves `auto-patch` (`decide::release` says
//! when): kerf gives up its server-side-apply ownership of the template's resources and
//! of any HPA target it coordinated (the values stay; the GitOps tool's next apply
//! sets Git's without a conflict), stops keeping in-place values on new pods, and
//! reports `released ModeChanged` with the previous and new mode. The event id is
//! written ahead, so a restart mid-release finishes it and reports it once. A refusal
//! is `failed ReleaseError` (once per error) and is tried again on the next pass.

use super::Actions;
use crate::agent::decide::emission::select;
use crate::agent::decide::Finding;
use crate::agent::state::Phase;
use crate::cluster::{Cluster, ClusterError, Snapshot, Workload};
use crate::policy::{EffectiveMode, Mode, Strategy};
use crate::wire::{EventResource, Reason, WorkloadConfig};

/// `auto-patch`, `audit`, or `cpu auto-patch, memory audit`.
pub fn mode_text(m: &EffectiveMode) -> String {
    let text = |m: Mode| match m {
        Mode::Off => "off",
        Mode::Audit => "audit",
        Mode::AutoPatch => "auto-patch",
    };
    if m.cpu == m.memory {
        text(m.cpu).to_string()
    } else {
        format!("cpu {}, memory {}", text(m.cpu), text(m.memory))
    }
}

impl<C: Cluster> Actions<'_, C> {
    /// Releases `live` (it left `auto-patch`; `previous` was its mode before).
    pub async fn release(
        &mut self,
        live: &Workload,
        snap: &Snapshot,
        config: &WorkloadConfig,
        previous: EffectiveMode,
        resources: Vec<EventResource>,
        now: i64,
    ) {
        let key = live.key.clone();
        let t = self.memory.entry(&key);
        let id = match &t.state.releasing {
            Some(id) => id.clone(),
            None => {
                let id = crate::agent::event::new_id(now);
                t.state.releasing = Some(id.clone());
                t.dirty = true;
                if !self.persist_one(&key).await {
                    if let Some(t) = self.memory.get_mut(&key) {
                        t.state.releasing = None;
                    }
                    return;
                }
                id
            }
        };
        let manager = self.cluster.field_manager().to_string();
        let owns_template = live
            .resource_owners
            .iter()
            .any(|o| o.manager == manager && o.operation == "Apply");
        let mut result: Result<(), ClusterError> = Ok(());
        if owns_template {
            result = self
                .cluster
                .release_template_resources(&key)
                .await
                .map(|_| ());
        }
        let hpas: Vec<(String, String)> = snap
            .hpas
            .iter()
            .filter(|h| h.target.as_ref() == Some(&key))
            .filter(|h| h.metric_managers.contains(&manager))
            .map(|h| (h.namespace.clone(), h.name.clone()))
            .collect();
        for (ns, name) in hpas {
            if result.is_ok() {
                result = self.cluster.release_hpa(&ns, &name).await;
            }
        }
        let t = self.memory.entry(&key);
        let (was, now_mode) = (mode_text(&previous), mode_text(&config.mode));
        if let Err(e) = result {
            let message = format!("cannot release kerf's field ownership: {e}");
            let f = Finding::new(Reason::ReleaseError, message.clone())
                .detail("error", e.to_string())
                .detail("previousMode", &was)
                .detail("newMode", &now_mode);
            let sel = select(
                &t.state.reported,
                std::slice::from_ref(&f),
                &[],
                &e.to_string(),
                0.0,
            );
            t.state.reported = sel.next;
            t.state
                .set_phase(Phase::Failed, Reason::ReleaseError, &message, now);
            t.dirty = true;
            if !sel.emit.is_empty() {
                let e = crate::agent::event::finding(
                    now,
                    &key,
                    &f,
                    t.state.recommendation_id.as_deref(),
                );
                self.emit(&key, e);
            }
            return;
        }
        let strategy = t
            .state
            .applied
            .as_ref()
            .map_or(Strategy::Rollout, |a| a.strategy);
        let message = if owns_template {
            format!("the workload left auto-patch (now {now_mode}): kerf released its ownership of the resources fields, so the GitOps tool's next sync restores Git's values")
        } else {
            format!("the workload left auto-patch (now {now_mode}): kerf owned no template field (in place); its pods keep their values until replaced, new ones start at the template's")
        };
        let resources = if resources.is_empty() {
            [
                (EventResource::Cpu, previous.cpu),
                (EventResource::Memory, previous.memory),
            ]
            .into_iter()
            .filter(|(_, m)| *m == Mode::AutoPatch)
            .map(|(r, _)| r)
            .collect()
        } else {
            resources
        };
        let e = crate::agent::event::released(
            now,
            &key,
            id,
            strategy,
            resources,
            &message,
            (&was, &now_mode),
        );
        t.state.applied = None;
        t.state.watch = None;
        t.state.releasing = None;
        t.state.reported.clear();
        t.state.mode = Some(config.mode.clone());
        t.patched.clear();
        t.state
            .set_phase(Phase::Skipped, Reason::ModeChanged, &message, now);
        t.dirty = true;
        self.emit(&key, e);
    }
}

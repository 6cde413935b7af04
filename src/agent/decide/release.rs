//! Release to GitOps (pure): when a workload leaves `auto-patch` (no resource is in it
//! any more, where some was the last time the hub was heard) and kerf applied to it —
//! it owns template fields or an HPA's metrics by server-side apply, or keeps in-place
//! values on its pods — kerf gives its ownership up so Argo CD or Flux restores Git's
//! values (`released ModeChanged`). Never while paused or frozen: the caller checks
//! those first.

use super::{Decision, WorkloadInput};
use crate::cluster::FIELD_MANAGER;
use crate::policy::{EffectiveMode, Mode};
use crate::wire::{EventResource, WorkloadConfig};

fn auto(m: &EffectiveMode) -> Vec<EventResource> {
    [
        (EventResource::Cpu, m.cpu),
        (EventResource::Memory, m.memory),
    ]
    .into_iter()
    .filter(|(_, mode)| *mode == Mode::AutoPatch)
    .map(|(r, _)| r)
    .collect()
}

/// `Some(Release)` when the workload just left `auto-patch` with kerf's hands on it.
pub fn release(w: &WorkloadInput, config: &WorkloadConfig) -> Option<Decision> {
    let previous = w.state.mode.as_ref()?;
    let was = auto(previous);
    if was.is_empty() || !auto(&config.mode).is_empty() {
        return None;
    }
    let owns_template = w
        .live
        .resource_owners
        .iter()
        .any(|o| o.manager == FIELD_MANAGER && o.operation == "Apply");
    let owns_hpa = w
        .hpas
        .iter()
        .any(|h| h.metric_managers.iter().any(|m| m == FIELD_MANAGER));
    let keeps_pods = w
        .state
        .applied
        .as_ref()
        .is_some_and(|a| a.in_place_values(&w.live.containers).is_some());
    (owns_template || owns_hpa || keeps_pods).then(|| Decision::Release {
        resources: was,
        previous: previous.clone(),
        now: config.mode.clone(),
    })
}

//! Server-side apply of a pod template's container resources, with the API server's
//! field ownership rules: a field another manager owns and this apply would change is a
//! 409 `FieldManagerConflict` unless forced (force moves ownership); an equal value is
//! co-owned; a field this manager applied before and now leaves out loses its
//! ownership, and is removed when nobody else owns it. A release removes this manager's
//! `Apply` entry and keeps the values (as kerf does on a real API server).

use std::sync::Arc;

use super::State;
use crate::cluster::{
    ApiStatus, ApplyMode, Cause, ClusterError, ContainerResources, FieldOwner, ResourceField,
    Workload, WorkloadKey,
};

fn path(container: &str, field: ResourceField) -> String {
    let (group, resource) = field.path();
    format!(".spec.template.spec.containers[name=\"{container}\"].resources.{group}.{resource}")
}

impl State {
    pub(super) fn apply(
        &mut self,
        key: &WorkloadKey,
        manager: &str,
        changes: &[ContainerResources],
        mode: ApplyMode,
    ) -> Result<Workload, ClusterError> {
        let sim = self.workloads.get(key).ok_or_else(|| {
            ClusterError::api(
                404,
                "NotFound",
                format!(
                    "{}.apps \"{}\" not found",
                    key.kind.as_str().to_lowercase() + "s",
                    key.name
                ),
            )
        })?;
        let mut w = Workload::clone(&sim.workload);
        let mut wanted: Vec<(String, ResourceField, u64)> = Vec::new();
        for c in changes {
            if !w.containers.iter().any(|x| x.name == c.container) {
                return Err(ClusterError::api(
                    422,
                    "Invalid",
                    format!("{} \"{}\" is invalid: spec.template.spec.containers[name=\"{}\"].image: Required value", key.kind.as_str(), key.name, c.container),
                ));
            }
            for field in ResourceField::ALL {
                if let Some(v) = c.resources.get(field) {
                    wanted.push((c.container.clone(), field, v));
                }
            }
        }
        let value = |w: &Workload, c: &str, f: ResourceField| {
            w.containers
                .iter()
                .find(|x| x.name == c)
                .and_then(|x| x.resources.get(f))
        };
        let mut conflicts: Vec<(String, String)> = Vec::new();
        for (c, f, v) in &wanted {
            if value(&w, c, *f) == Some(*v) {
                continue;
            }
            for o in w
                .resource_owners
                .iter()
                .filter(|o| &o.container == c && o.field == *f && o.manager != manager)
            {
                conflicts.push((o.manager.clone(), path(c, *f)));
            }
        }
        if !conflicts.is_empty() && !mode.force {
            let lines: Vec<String> = conflicts
                .iter()
                .map(|(m, p)| format!("conflict with \"{m}\": {p}"))
                .collect();
            let message = if lines.len() == 1 {
                format!("Apply failed with 1 conflict: {}", lines[0])
            } else {
                format!(
                    "Apply failed with {} conflicts: {}",
                    lines.len(),
                    lines.join("\n")
                )
            };
            return Err(ClusterError::Api(ApiStatus {
                code: 409,
                reason: "Conflict".into(),
                message,
                causes: conflicts
                    .into_iter()
                    .map(|(m, p)| Cause {
                        reason: "FieldManagerConflict".into(),
                        message: format!("conflict with \"{m}\""),
                        field: p,
                    })
                    .collect(),
            }));
        }
        // Fields this manager applied before and leaves out now.
        let dropped: Vec<(String, ResourceField)> = w
            .resource_owners
            .iter()
            .filter(|o| o.manager == manager && o.operation == "Apply")
            .filter(|o| {
                !wanted
                    .iter()
                    .any(|(c, f, _)| *c == o.container && *f == o.field)
            })
            .map(|o| (o.container.clone(), o.field))
            .collect();
        w.resource_owners
            .retain(|o| !(o.manager == manager && o.operation == "Apply"));
        for (c, f) in dropped {
            if !w
                .resource_owners
                .iter()
                .any(|o| o.container == c && o.field == f)
            {
                if let Some(x) = w.containers.iter_mut().find(|x| x.name == c) {
                    x.resources.set(f, None);
                }
            }
        }
        for (c, f, v) in &wanted {
            if value(&w, c, *f) != Some(*v) {
                // A changed value (forced past any conflict) belongs to this manager alone.
                w.resource_owners
                    .retain(|o| !(&o.container == c && o.field == *f));
                if let Some(x) = w.containers.iter_mut().find(|x| &x.name == c) {
                    x.resources.set(*f, Some(*v));
                }
            }
            w.resource_owners.push(FieldOwner {
                manager: manager.into(),
                operation: "Apply".into(),
                container: c.clone(),
                field: *f,
            });
        }
        for (i, x) in w.containers.iter().enumerate() {
            let r = x.resources;
            for (resource, request, limit) in [
                ("cpu", r.cpu_request, r.cpu_limit),
                ("memory", r.memory_request, r.memory_limit),
            ] {
                if let (Some(q), Some(l)) = (request, limit) {
                    if q > l {
                        return Err(ClusterError::api(
                            422,
                            "Invalid",
                            format!("{} \"{}\" is invalid: spec.template.spec.containers[{i}].resources.requests: Invalid value: \"{q}\": must be less than or equal to {resource} limit of {l}", key.kind.as_str(), key.name),
                        ));
                    }
                }
            }
        }
        let template_changed = w.containers != sim.workload.containers;
        if template_changed {
            w.generation += 1;
        }
        if !mode.dry_run {
            if let Some(sim) = self.workloads.get_mut(key) {
                sim.workload = Arc::new(w.clone());
            }
            if template_changed {
                self.note_change(key, &w.containers);
            }
            self.step();
        }
        Ok(w)
    }

    pub(super) fn release(
        &mut self,
        key: &WorkloadKey,
        manager: &str,
    ) -> Result<Workload, ClusterError> {
        let sim = self
            .workloads
            .get_mut(key)
            .ok_or_else(|| ClusterError::api(404, "NotFound", format!("{key} not found")))?;
        Arc::make_mut(&mut sim.workload)
            .resource_owners
            .retain(|o| !(o.manager == manager && o.operation == "Apply"));
        Ok(Workload::clone(&sim.workload))
    }
}

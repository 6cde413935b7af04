//! The in-process cluster's writes, refused the way the API server refuses them.

use std::sync::Arc;

use super::State;
use crate::cluster::QosClass;
use crate::cluster::{
    total_requests, ApiStatus, Cause, ClusterError, ClusterEvent, ContainerResources, ObjectRef,
    Pod, PodRef, Record, RecordedEvent, ResourceField,
};

fn not_found(kind: &str, name: &str) -> ClusterError {
    ClusterError::api(404, "NotFound", format!("{kind} \"{name}\" not found"))
}

fn invalid(kind: &str, name: &str, field: &str, detail: &str) -> ClusterError {
    ClusterError::Api(ApiStatus {
        code: 422,
        reason: "Invalid".into(),
        message: format!("{kind} \"{name}\" is invalid: {field}: {detail}"),
        causes: vec![Cause {
            reason: "FieldValueForbidden".into(),
            field: field.into(),
            message: detail.into(),
        }],
    })
}

impl State {
    pub(super) fn resize(
        &mut self,
        r: &PodRef,
        changes: &[ContainerResources],
    ) -> Result<Pod, ClusterError> {
        let p = self.pods.get(r).ok_or_else(|| not_found("pods", &r.name))?;
        let mut next = p.pod.containers.clone();
        for change in changes {
            let Some(index) = next.iter().position(|c| c.name == change.container) else {
                return Err(invalid(
                    "Pod",
                    &r.name,
                    "spec.containers",
                    &format!("container {:?} not found", change.container),
                ));
            };
            let c = &mut next[index];
            for field in ResourceField::ALL {
                if let Some(v) = change.resources.get(field) {
                    c.resources.set(field, Some(v));
                }
            }
            for field in &change.remove {
                let was_set = c.resources.get(*field).is_some();
                if was_set && matches!(field, ResourceField::CpuLimit | ResourceField::MemoryLimit)
                {
                    let path = format!(
                        "spec.containers[{index}].resources.limits[{}]",
                        field.path().1
                    );
                    return Err(invalid(
                        "Pod",
                        &r.name,
                        &path,
                        "resource limits cannot be removed",
                    ));
                }
                c.resources.set(*field, None);
            }
        }
        let before: Vec<_> = p.pod.containers.iter().map(|c| c.resources).collect();
        let after: Vec<_> = next.iter().map(|c| c.resources).collect();
        if QosClass::of(&before) != QosClass::of(&after) {
            return Err(invalid(
                "Pod",
                &r.name,
                "spec",
                "Pod QOS Class may not change as a result of resizing",
            ));
        }
        if let Some(node) = p
            .pod
            .node
            .as_ref()
            .and_then(|n| self.nodes.iter().find(|x| &x.name == n))
        {
            let (cpu, memory) = total_requests(&after);
            for (name, wanted, capacity) in [
                ("cpu", cpu, node.allocatable_cpu),
                ("memory", memory, node.allocatable_memory),
            ] {
                if wanted > capacity {
                    return Err(ClusterError::Api(ApiStatus {
                        code: 403,
                        reason: "Forbidden".into(),
                        message: format!(
                            "pods \"{}\" is forbidden: node didn't have enough allocatable resources: {name}, requested: {wanted}, allocatable: {capacity}",
                            r.name
                        ),
                        causes: vec![Cause {
                            reason: "NodeCapacity".into(),
                            field: String::new(),
                            message: String::new(),
                        }],
                    }));
                }
            }
        }
        let p = self
            .pods
            .get_mut(r)
            .ok_or_else(|| not_found("pods", &r.name))?;
        if after != before {
            let pod = Arc::make_mut(&mut p.pod);
            pod.containers = next;
            pod.generation += 1;
        }
        let (owner, containers, out) = (
            p.pod.owner.clone(),
            p.pod.containers.clone(),
            Pod::clone(&p.pod),
        );
        if let (Some(owner), true) = (owner, after != before) {
            self.note_change(&owner, &containers);
        }
        Ok(out)
    }

    pub(super) fn evict(&mut self, r: &PodRef) -> Result<(), ClusterError> {
        let p = self.pods.get(r).ok_or_else(|| not_found("pods", &r.name))?;
        let labels = p.pod.labels.clone();
        let blocking = self.pdbs.iter().find(|b| {
            b.namespace == r.namespace
                && b.selector.iter().all(|(k, v)| labels.get(k) == Some(v))
                && b.disruptions_allowed < 1
        });
        if let Some(b) = blocking {
            let needs = b
                .min_available
                .as_deref()
                .and_then(|m| m.parse::<i32>().ok())
                .unwrap_or(0);
            return Err(ClusterError::Api(ApiStatus {
                code: 429,
                reason: "TooManyRequests".into(),
                message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
                causes: vec![Cause {
                    reason: "DisruptionBudget".into(),
                    field: String::new(),
                    message: format!(
                        "The disruption budget {} needs {needs} healthy pods and has {} currently",
                        b.name, b.current_healthy
                    ),
                }],
            }));
        }
        self.pods.remove(r);
        self.step();
        Ok(())
    }

    pub(super) fn apply_record(&mut self, r: &Record) -> Result<Record, ClusterError> {
        let key = (r.namespace.clone(), r.name.clone());
        if !self.records.contains_key(&key) {
            self.serial += 1;
        }
        let uid = self
            .records
            .get(&key)
            .and_then(|x| x.uid.clone())
            .unwrap_or_else(|| {
                crate::sim::shape::Rng::new(
                    self.seed,
                    &format!("record/{}/{}", r.namespace, self.serial),
                )
                .uuid()
            });
        let status = self
            .records
            .get(&key)
            .map(|x| x.status.clone())
            .unwrap_or(serde_json::Value::Null);
        let stored = Record {
            uid: Some(uid),
            status,
            ..r.clone()
        };
        self.records.insert(key, stored.clone());
        Ok(stored)
    }

    pub(super) fn apply_record_status(&mut self, r: &Record) -> Result<(), ClusterError> {
        let stored = self
            .records
            .get_mut(&(r.namespace.clone(), r.name.clone()))
            .ok_or_else(|| not_found("rightsizingrecommendations.kerf.getkerf.dev", &r.name))?;
        stored.status = r.status.clone();
        Ok(())
    }

    pub(super) fn record_event(&mut self, event: &ClusterEvent) -> Result<(), ClusterError> {
        let r: &ObjectRef = &event.regarding;
        if event.reason.is_empty() {
            return Err(invalid("Event", &r.name, "reason", "Required value"));
        }
        if event.note.len() > 1024 {
            return Err(invalid(
                "Event",
                &r.name,
                "note",
                "Too long: may not be more than 1024 bytes",
            ));
        }
        self.events.push(RecordedEvent {
            event: event.clone(),
            reporting_controller: "getkerf.dev/kerf".into(),
        });
        Ok(())
    }
}

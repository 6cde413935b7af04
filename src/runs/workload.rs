//! Workloads as runs see them: the stable id, and the grouping of a collection's
//! containers by workload (the unit a recommendation is made for).

use std::collections::HashMap;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::analysis::{ContainerObservation, Signal};
use crate::datasource::{Collection, WorkloadInfo};
use crate::store::WorkloadSeen;
use crate::workload::{ContainerRole, WorkloadKey};

/// The stable id of a workload: the same cluster, namespace, kind and name always give
/// the same id, across runs, restarts and rebuilt databases. The UID is an attribute.
pub fn workload_id(cluster: &str, namespace: &str, kind: &str, name: &str) -> String {
    let mut h = Sha256::new();
    for part in [cluster, namespace, kind, name] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    format!("wl-{}", &hex::encode(h.finalize())[..24])
}

/// One workload and its containers, ready to analyze.
#[derive(Debug, Clone)]
pub struct WorkloadGroup {
    pub info: WorkloadInfo,
    pub seen: WorkloadSeen,
    pub containers: Vec<ContainerObservation>,
}

/// Splits a collection into workloads (sorted by namespace, kind, name). Containers are
/// moved, not copied, so the collection's memory is handed over. Containers of a
/// workload the inventory did not list get a workload of their own (UID from the
/// target), so nothing observed is dropped silently.
pub fn group(cluster: &str, collection: Collection) -> Vec<WorkloadGroup> {
    let mut by_key: HashMap<WorkloadKey, usize> = HashMap::new();
    let mut groups: Vec<WorkloadGroup> = Vec::with_capacity(collection.workloads.len());
    for info in collection.workloads {
        let key = WorkloadKey::new(&info.namespace, info.kind.clone(), &info.name);
        if by_key.contains_key(&key) {
            continue;
        }
        by_key.insert(key, groups.len());
        groups.push(new_group(cluster, info));
    }
    for c in collection.input.containers {
        let t = &c.target;
        let key = WorkloadKey::new(&t.namespace, t.kind.clone(), &t.name);
        let index = match by_key.get(&key) {
            Some(i) => *i,
            None => {
                let info = WorkloadInfo {
                    namespace: key.namespace.clone(),
                    kind: key.kind.clone(),
                    name: key.name.clone(),
                    uid: c.target.workload_uid.clone(),
                    replicas: None,
                    containers: Vec::new(),
                    roles: Default::default(),
                    labels: Default::default(),
                    hpa: None,
                    unreadable: None,
                };
                by_key.insert(key, groups.len());
                groups.push(new_group(cluster, info));
                groups.len() - 1
            }
        };
        groups[index].containers.push(c);
    }
    for g in &mut groups {
        g.containers
            .sort_by(|a, b| a.target.container.cmp(&b.target.container));
        g.seen.current = current_settings(&g.containers, &g.info.roles).to_string();
    }
    groups.sort_by(|a, b| {
        (&a.info.namespace, &a.info.kind, &a.info.name).cmp(&(
            &b.info.namespace,
            &b.info.kind,
            &b.info.name,
        ))
    });
    groups
}

fn new_group(cluster: &str, info: WorkloadInfo) -> WorkloadGroup {
    let seen = WorkloadSeen {
        id: workload_id(cluster, &info.namespace, &info.kind, &info.name),
        cluster: cluster.to_string(),
        namespace: info.namespace.clone(),
        kind: info.kind.clone(),
        name: info.name.clone(),
        uid: info.uid.clone(),
        replicas: info.replicas.map(i64::from),
        labels: serde_json::to_string(&info.labels).unwrap_or_else(|_| "{}".into()),
        current: "[]".into(),
    };
    WorkloadGroup {
        info,
        seen,
        containers: Vec::new(),
    }
}

fn signal(s: &Signal) -> Value {
    match (s.available, s.unset) {
        (false, _) => json!({ "known": false }),
        (true, true) => json!({ "known": true, "unset": true }),
        (true, false) => json!({ "known": true, "value": s.value }),
    }
}

/// Requests and limits in force per container (CPU millicores, memory bytes), with the
/// role of each sidecar and init container (`roles`; app containers have none).
fn current_settings(
    containers: &[ContainerObservation],
    roles: &std::collections::BTreeMap<String, ContainerRole>,
) -> Value {
    let items: Vec<Value> = containers
        .iter()
        .map(|c| {
            let mut item = json!({
                "name": c.target.container,
                "cpu": { "request": signal(&c.cpu.current_request), "limit": signal(&c.cpu.current_limit) },
                "memory": { "request": signal(&c.memory.current_request), "limit": signal(&c.memory.current_limit) },
            });
            if let Some(role) = roles.get(&c.target.container) {
                item["role"] = json!(role);
            }
            item
        })
        .collect();
    Value::Array(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_ids_are_stable_and_tell_workloads_apart() {
        let a = workload_id("prod", "shop", "Deployment", "api");
        assert_eq!(a, workload_id("prod", "shop", "Deployment", "api"));
        assert_ne!(a, workload_id("stage", "shop", "Deployment", "api"));
        assert_ne!(a, workload_id("prod", "shop", "StatefulSet", "api"));
        // The separator keeps ("ab","c") and ("a","bc") apart.
        assert_ne!(
            workload_id("p", "ab", "c", "d"),
            workload_id("p", "a", "bc", "d")
        );
        assert!(a.starts_with("wl-") && a.len() == 27);
    }
}

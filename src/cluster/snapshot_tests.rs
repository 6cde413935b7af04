//! `Snapshot::pods_of` answers from its owner index as a scan would.

use std::sync::Arc;

use super::*;

fn pod(name: &str, owner: Option<&WorkloadKey>) -> Pod {
    Pod {
        pod: PodRef::new("shop", name),
        uid: name.into(),
        owner: owner.cloned(),
        controller: None,
        node: Some("n1".into()),
        phase: PodPhase::Running,
        ready: true,
        qos: None,
        generation: 1,
        observed_generation: Some(1),
        labels: Default::default(),
        revision: None,
        containers: Vec::new(),
        statuses: Vec::new(),
        resize: ResizeState::Settled,
        created_ms: None,
        deleting: false,
        unschedulable: None,
    }
}

fn names<'a>(pods: impl Iterator<Item = &'a Pod>) -> Vec<&'a str> {
    pods.map(|p| p.pod.name.as_str()).collect()
}

#[test]
fn each_workload_gets_its_own_pods_in_order_and_pods_added_later_are_seen() {
    let web = WorkloadKey::new("shop", WorkloadKind::Deployment, "web");
    let api = WorkloadKey::new("shop", WorkloadKind::Deployment, "api");
    let db = WorkloadKey::new("shop", WorkloadKind::StatefulSet, "web");
    let mut snap = Snapshot {
        pods: vec![
            pod("web-1", Some(&web)),
            pod("api-1", Some(&api)),
            pod("orphan", None),
            pod("web-2", Some(&web)),
        ]
        .into_iter()
        .map(Arc::new)
        .collect(),
        ..Snapshot::default()
    };
    assert_eq!(names(snap.pods_of(&web)), ["web-1", "web-2"]);
    assert_eq!(names(snap.pods_of(&api)), ["api-1"]);
    // Same namespace and name, another kind: not the Deployment's.
    assert!(snap.pods_of(&db).next().is_none());
    // Built, then added to: the answer still holds.
    snap.pods.push(Arc::new(pod("web-3", Some(&web))));
    assert_eq!(names(snap.pods_of(&web)), ["web-1", "web-2", "web-3"]);
    // A cache: it does not make two snapshots differ.
    let fresh = Snapshot {
        pods: snap.pods.clone(),
        ..Snapshot::default()
    };
    assert_eq!(fresh, snap);
}

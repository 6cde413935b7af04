//! Conformance of what the agent adds to the cluster interface: its own records
//! (RightsizingRecommendations with a status subresource) and Events about them, the
//! watched view, the server version, and the eviction of an `OnDelete` StatefulSet's
//! outdated pod after its template is applied.

use std::collections::BTreeMap;
use std::time::Duration;

use kerf::cluster::{
    ApplyMode, Cluster, ClusterEvent, ContainerResources, EventType, Record, View, WorkloadKind,
};
use serde_json::json;

use super::faces::{wait_for, Face, Real, Sim};
use super::{burstable, deploy, plain_node, ready_pods};

async fn records_round_trip<F: Face>(face: &F) {
    let key = face.deploy(&deploy("web", 1, burstable(250, 128))).await;
    let ns = vec![face.ns().to_string()];
    let record = Record {
        namespace: face.ns().into(),
        name: Record::name_for(&key),
        uid: None,
        labels: BTreeMap::from([(
            kerf::cluster::record::NAME_LABEL.to_string(),
            "web".to_string(),
        )]),
        owner: None,
        spec: json!({
            "workloadRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "web" },
            "recommendationID": "rec-1",
        }),
        status: serde_json::Value::Null,
    };
    let stored = face
        .agent()
        .apply_record(&record)
        .await
        .expect("apply record");
    assert_eq!(stored.name, "deployment-web", "[{}]", face.name());
    assert!(
        stored.uid.is_some(),
        "[{}] the record has a uid",
        face.name()
    );
    let status = json!({ "phase": "Skipped", "reason": "ModeAudit",
                         "agent": { "reported": [{ "reason": "ModeAudit" }] } });
    face.agent()
        .apply_record_status(&Record {
            status: status.clone(),
            ..stored.clone()
        })
        .await
        .expect("apply status");
    // A second spec apply keeps the status (status is a subresource).
    face.agent().apply_record(&record).await.expect("re-apply");
    let listed = face.agent().records(&ns).await.expect("list records");
    assert_eq!(listed.len(), 1, "[{}] {listed:?}", face.name());
    assert_eq!(listed[0].status, status, "[{}]", face.name());
    assert_eq!(listed[0].spec["recommendationID"], "rec-1");
    // Events about the record: the agent creates them, an observer reads them back.
    let event = ClusterEvent {
        regarding: stored.object_ref(),
        event_type: EventType::Warning,
        reason: "ResizeInfeasible".into(),
        action: "Fallback".into(),
        note: "falls back to a rollout".into(),
    };
    face.agent()
        .record_event(&event)
        .await
        .expect("record event");
    let events = face
        .observer()
        .events(&stored.object_ref())
        .await
        .expect("events");
    assert!(
        events
            .iter()
            .any(|e| e.event.reason == "ResizeInfeasible"
                && e.event.event_type == EventType::Warning),
        "[{}] {events:?}",
        face.name()
    );
    // A status write for a record that does not exist is a 404.
    let gone = Record {
        name: "deployment-gone".into(),
        ..stored
    };
    let err = face
        .agent()
        .apply_record_status(&gone)
        .await
        .expect_err("404");
    assert!(err.is_not_found(), "[{}] {err}", face.name());
    let version = face.agent().server_version().await.expect("version");
    assert!(version.starts_with("v1.36"), "[{}] {version}", face.name());
}
both_faces!(records_round_trip, plain_node());

async fn the_view_follows_the_cluster<F: Face>(face: &F) {
    let ns = vec![face.ns().to_string()];
    let view = face.agent().watch(&ns).await.expect("watch");
    let key = face.deploy(&deploy("web", 2, burstable(250, 128))).await;
    let pods = wait_for(face, "two Ready pods in the view", async || {
        view.changed(Duration::from_millis(200)).await;
        let snap = view.snapshot();
        let pods: Vec<_> = snap.pods_of(&key).filter(|p| p.ready).cloned().collect();
        (pods.len() == 2 && snap.workloads.iter().any(|w| w.key == key)).then_some(pods)
    })
    .await;
    assert!(!view.snapshot().nodes.is_empty(), "[{}] nodes", face.name());
    face.agent()
        .resize_pod(
            &pods[0].pod,
            &[ContainerResources::set("app", burstable(300, 128))],
        )
        .await
        .expect("resize");
    wait_for(face, "the resize in the view", async || {
        view.changed(Duration::from_millis(200)).await;
        let snap = view.snapshot();
        snap.pods
            .iter()
            .find(|p| p.pod == pods[0].pod)
            .and_then(|p| p.status("app")?.resources)
            .filter(|r| r.cpu_request == Some(300))
    })
    .await;
}
both_faces!(the_view_follows_the_cluster, plain_node());

async fn on_delete_statefulset_pods_update_when_evicted<F: Face>(face: &F) {
    let mut d = deploy("db", 1, burstable(250, 128));
    d.kind = WorkloadKind::StatefulSet;
    d.on_delete = true;
    let key = face.deploy(&d).await;
    let before = ready_pods(face, &key, 1).await.remove(0);
    let applied = face
        .agent()
        .apply_template_resources(
            &key,
            &[ContainerResources::set("app", burstable(200, 128))],
            ApplyMode {
                force: true,
                dry_run: false,
            },
        )
        .await
        .expect("apply");
    let ns = vec![face.ns().to_string()];
    let update = wait_for(face, "the StatefulSet's update revision", async || {
        let w = face.agent().workload(&key).await.expect("read")?;
        w.update_revision
            .filter(|r| Some(r) != before.revision.as_ref())
    })
    .await;
    assert_eq!(applied.containers[0].resources.cpu_request, Some(200));
    // OnDelete: the pod keeps its old template until it goes.
    let snap = face.agent().snapshot(&ns).await.expect("snapshot");
    let still = snap.pods_of(&key).next().expect("pod").clone();
    assert_eq!(still.revision, before.revision, "[{}]", face.name());
    face.agent().evict(&still.pod).await.expect("evict");
    let replaced = wait_for(face, "the pod back at the update revision", async || {
        let snap = face.agent().snapshot(&ns).await.expect("snapshot");
        let found = snap
            .pods_of(&key)
            .find(|p| p.ready && p.revision.as_ref() == Some(&update))
            .cloned();
        found
    })
    .await;
    assert_eq!(replaced.pod.name, "db-0", "[{}]", face.name());
    assert_eq!(
        replaced.containers[0].resources.cpu_request,
        Some(200),
        "[{}]",
        face.name()
    );
}
both_faces!(on_delete_statefulset_pods_update_when_evicted, plain_node());

//! A Deployment through the real control plane with the sim kubelet: the
//! controller-manager makes the ReplicaSet, the scheduler binds, the sim makes the pods
//! Ready, and a resize through the `resize` subresource ends in the pod's status.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{
    Cluster, ContainerResources, PodRef, ResizeState, Resources, WorkloadKey, WorkloadKind,
};
use kerf::sim::api_kubelet::ApiKubelet;
use kube::api::{Api, ListParams, PostParams};

use crate::support::eventually;
use crate::support::kube::objects::{deployment, node, MIB};
use crate::support::kube::{control_plane, namespace};

#[tokio::test]
async fn a_deployment_runs_and_a_pod_is_resized_in_place_or_refused_as_infeasible() {
    let plane = control_plane();
    let admin = plane.admin().await;
    let ns = namespace(&admin, "deploy").await;
    let _kubelet = ApiKubelet::start(admin.clone(), vec![node(&ns.name, 4000, 8192)], 11)
        .await
        .expect("sim kubelet");
    let body: Deployment = deployment(&ns.name, "web", 3, 500, 256);
    Api::<Deployment>::namespaced(admin.clone(), &ns.name)
        .create(&PostParams::default(), &body)
        .await
        .expect("create deployment");

    let agent = KubeCluster::new(plane.agent().await);
    let key = WorkloadKey::new(&ns.name, WorkloadKind::Deployment, "web");
    let ready = eventually("3 pods Ready", Duration::from_secs(60), || async {
        let snap = agent
            .snapshot(std::slice::from_ref(&ns.name))
            .await
            .expect("snapshot");
        let pods: Vec<_> = snap.pods_of(&key).filter(|p| p.ready).cloned().collect();
        (pods.len() == 3).then_some(pods)
    })
    .await;
    let sets = Api::<ReplicaSet>::namespaced(admin.clone(), &ns.name)
        .list(&ListParams::default())
        .await
        .expect("replicasets");
    assert_eq!(
        sets.items.len(),
        1,
        "the controller-manager made one ReplicaSet"
    );
    for pod in &ready {
        assert!(
            pod.node.as_deref() == Some(&format!("{}-node", ns.name)[..]),
            "the scheduler bound {pod:?}"
        );
        let status = pod.status("app").expect("container status");
        assert_eq!(status.resources.map(|r| r.cpu_request), Some(Some(500)));
    }

    let target = PodRef::new(&ns.name, &ready[0].pod.name);
    let bigger = Resources {
        cpu_request: Some(750),
        memory_request: Some(384 * MIB),
        ..Resources::default()
    };
    let stored = agent
        .resize_pod(&target, &[ContainerResources::set("app", bigger)])
        .await
        .expect("resize accepted by the API server");
    assert_eq!(stored.containers[0].resources.cpu_request, Some(750));
    let resized = eventually(
        "resize applied in status",
        Duration::from_secs(30),
        || async {
            let p = agent.pod(&target).await.expect("pod").expect("exists");
            let actual = p.status("app").and_then(|s| s.resources);
            (actual.map(|r| (r.cpu_request, r.memory_request))
                == Some((Some(750), Some(384 * MIB)))
                && p.resize == ResizeState::Settled)
                .then_some(p)
        },
    )
    .await;
    assert_eq!(
        resized.status("app").map(|s| s.restart_count),
        Some(0),
        "NotRequired: no restart"
    );
    assert_eq!(resized.observed_generation, Some(resized.generation));

    let huge = Resources {
        cpu_request: Some(6000),
        ..Resources::default()
    };
    let refused = agent
        .resize_pod(&target, &[ContainerResources::set("app", huge)])
        .await
        .expect_err("larger than the node");
    // v1.36 refuses it in the API server (the kubelet's Infeasible is for what the API
    // cannot see: static CPU/Memory Manager policies, swap; see the conformance suite).
    assert!(refused.is_node_capacity(), "{refused:?}");
    let after = agent.pod(&target).await.expect("pod").expect("exists");
    assert_eq!(
        after.containers[0].resources.cpu_request,
        Some(750),
        "nothing changed"
    );
}

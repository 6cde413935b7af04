//! The conformance suite: each scenario runs unchanged against the real API server
//! with the sim kubelet and against the in-process sim, through the agent's `Cluster`
//! interface, and asserts the same outcomes. If the sim drifts from Kubernetes, a
//! scenario fails on one face.

mod faces;

use kerf::cluster::{
    ApplyMode, Cluster, ClusterEvent, ContainerResources, EventType, NodeManagers, ObjectRef, Pod,
    PodRef, ResizeState, ResourceField, Resources, RestartPolicy, WorkloadKey,
};
use kerf::sim::kubelet::Usage;
use kerf::sim::shape::{Cpu, Memory};

use crate::support::kube::objects::{node, MIB};
use faces::{wait_for, Deploy, Face, Real, Sim, CREATOR};

/// Runs `$scenario` on both faces, each with a node of `$cpu` millicores.
macro_rules! both_faces {
    ($scenario:ident, $node:expr) => {
        mod $scenario {
            use super::*;

            #[tokio::test]
            async fn on_the_real_api_server() {
                super::$scenario(&Real::new(stringify!($scenario), $node).await).await;
            }

            #[tokio::test]
            async fn on_the_in_process_sim() {
                super::$scenario(&Sim::new(stringify!($scenario), $node)).await;
            }
        }
    };
}

fn plain_node() -> kerf::cluster::Node {
    node("n", 4000, 8192)
}

fn burstable(cpu: u64, memory_mib: u64) -> Resources {
    Resources {
        cpu_request: Some(cpu),
        memory_request: Some(memory_mib * MIB),
        ..Resources::default()
    }
}

fn deploy(name: &'static str, replicas: i32, resources: Resources) -> Deploy {
    Deploy {
        kind: kerf::cluster::WorkloadKind::Deployment,
        on_delete: false,
        name,
        replicas,
        resources,
        memory_policy: RestartPolicy::NotRequired,
        usage: Usage {
            cpu: Cpu::Steady(50.0),
            memory: Memory::Flat(64.0 * MIB as f64),
            scale: 1.0,
        },
    }
}

async fn ready_pods<F: Face>(face: &F, key: &WorkloadKey, n: usize) -> Vec<Pod> {
    let ns = vec![face.ns().to_string()];
    wait_for(face, &format!("{n} Ready pods of {key}"), async || {
        let snap = face.agent().snapshot(&ns).await.expect("snapshot");
        let pods: Vec<Pod> = snap
            .pods_of(key)
            .filter(|p| p.ready && !p.deleting)
            .cloned()
            .collect();
        (pods.len() == n).then_some(pods)
    })
    .await
}

async fn resize_state<F: Face>(
    face: &F,
    pod: &PodRef,
    what: &str,
    pick: impl Fn(&Pod) -> bool,
) -> Pod {
    wait_for(face, what, async || {
        let p = face
            .agent()
            .pod(pod)
            .await
            .expect("read pod")
            .expect("pod exists");
        pick(&p).then_some(p)
    })
    .await
}

async fn accepted<F: Face>(face: &F) {
    let key = face.deploy(&deploy("web", 1, burstable(500, 256))).await;
    let pod = ready_pods(face, &key, 1).await.remove(0).pod;
    let new = burstable(1000, 384);
    face.agent()
        .resize_pod(&pod, &[ContainerResources::set("app", new)])
        .await
        .expect("resize");
    let done = resize_state(face, &pod, "the new values in status", |p| {
        p.resize == ResizeState::Settled && p.status("app").and_then(|s| s.resources) == Some(new)
    })
    .await;
    assert_eq!(
        done.status("app").map(|s| s.restart_count),
        Some(0),
        "[{}]",
        face.name()
    );
    assert_eq!(
        done.observed_generation,
        Some(done.generation),
        "[{}]",
        face.name()
    );

    // The decision is recorded as an Event and reads back.
    let about = ObjectRef {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: face.ns().into(),
        name: "web".into(),
        uid: None,
    };
    let event = ClusterEvent {
        regarding: about.clone(),
        event_type: EventType::Normal,
        reason: "RecommendationApplied".into(),
        action: "Resize".into(),
        note: "app: cpu request 500m -> 1".into(),
    };
    face.agent()
        .record_event(&event)
        .await
        .expect("record event");
    // The agent may only create Events (packaging/k8s/agent-rbac.yaml); an admin reads.
    let events = face.observer().events(&about).await.expect("read events");
    let ours: Vec<_> = events
        .iter()
        .filter(|e| e.reporting_controller == "getkerf.dev/kerf")
        .map(|e| {
            (
                e.event.reason.as_str(),
                e.event.event_type,
                e.event.note.as_str(),
            )
        })
        .collect();
    assert_eq!(
        ours,
        [(
            "RecommendationApplied",
            EventType::Normal,
            "app: cpu request 500m -> 1"
        )],
        "[{}]",
        face.name()
    );
}
both_faces!(accepted, plain_node());

async fn deferred<F: Face>(face: &F) {
    let key = face.deploy(&deploy("pair", 2, burstable(1500, 256))).await;
    let pods = ready_pods(face, &key, 2).await;
    // 3000m fits the 4000m node but not beside the other pod's 1500m.
    face.agent()
        .resize_pod(
            &pods[0].pod,
            &[ContainerResources::set("app", burstable(3000, 256))],
        )
        .await
        .expect("the API server accepts it; the kubelet defers it");
    let p = resize_state(face, &pods[0].pod, "resize Deferred", |p| {
        matches!(p.resize, ResizeState::Deferred { .. })
    })
    .await;
    assert_eq!(
        p.status("app")
            .and_then(|s| s.resources.and_then(|r| r.cpu_request)),
        Some(1500),
        "[{}] unchanged while deferred",
        face.name()
    );
}
both_faces!(deferred, plain_node());

async fn infeasible<F: Face>(face: &F) {
    // Guaranteed pods on a node with the static CPU Manager cannot be resized in place.
    let guaranteed = Resources {
        cpu_request: Some(500),
        cpu_limit: Some(500),
        memory_request: Some(256 * MIB),
        memory_limit: Some(256 * MIB),
    };
    let key = face.deploy(&deploy("pinned", 1, guaranteed)).await;
    let pod = ready_pods(face, &key, 1).await.remove(0).pod;
    let more = Resources {
        cpu_request: Some(600),
        cpu_limit: Some(600),
        ..Resources::default()
    };
    face.agent()
        .resize_pod(&pod, &[ContainerResources::set("app", more)])
        .await
        .expect("accepted by the API server");
    let p = resize_state(face, &pod, "resize Infeasible", |p| {
        matches!(p.resize, ResizeState::Infeasible { .. })
    })
    .await;
    assert_eq!(
        p.status("app").and_then(|s| s.resources),
        Some(guaranteed),
        "[{}]",
        face.name()
    );

    // Larger than the node: the API server itself refuses it (403 NodeCapacity).
    let huge = Resources {
        cpu_request: Some(6000),
        cpu_limit: Some(6000),
        ..Resources::default()
    };
    let err = face
        .agent()
        .resize_pod(&pod, &[ContainerResources::set("app", huge)])
        .await
        .expect_err("larger than the node");
    assert!(err.is_node_capacity(), "[{}] {err:?}", face.name());
}
both_faces!(infeasible, {
    let mut n = plain_node();
    n.managers = NodeManagers {
        cpu_static: true,
        memory_static: false,
    };
    n.labels.insert(
        kerf::cluster::kube::CPU_MANAGER_LABEL.into(),
        "static".into(),
    );
    n
});

async fn qos_change_refused<F: Face>(face: &F) {
    let guaranteed = Resources {
        cpu_request: Some(500),
        cpu_limit: Some(500),
        memory_request: Some(256 * MIB),
        memory_limit: Some(256 * MIB),
    };
    let key = face.deploy(&deploy("steady", 1, guaranteed)).await;
    let pod = ready_pods(face, &key, 1).await.remove(0).pod;
    let lower_request = Resources {
        cpu_request: Some(250),
        ..Resources::default()
    };
    let err = face
        .agent()
        .resize_pod(&pod, &[ContainerResources::set("app", lower_request)])
        .await
        .expect_err("QoS would change");
    assert!(err.is_invalid(), "[{}] {err:?}", face.name());
    let message = &err.status().expect("api status").message;
    assert!(
        message.contains("Pod QOS Class may not change as a result of resizing"),
        "[{}] {message}",
        face.name()
    );
}
both_faces!(qos_change_refused, plain_node());

async fn limit_removal_refused<F: Face>(face: &F) {
    let limited = Resources {
        cpu_limit: Some(1000),
        ..burstable(500, 256)
    };
    let key = face.deploy(&deploy("capped", 1, limited)).await;
    let pod = ready_pods(face, &key, 1).await.remove(0).pod;
    let change = ContainerResources {
        container: "app".into(),
        role: Default::default(),
        resources: Resources::default(),
        remove: vec![ResourceField::CpuLimit],
    };
    let err = face
        .agent()
        .resize_pod(&pod, &[change])
        .await
        .expect_err("limits cannot be removed");
    assert!(err.is_invalid(), "[{}] {err:?}", face.name());
    let message = &err.status().expect("api status").message;
    assert!(
        message.contains("resource limits cannot be removed"),
        "[{}] {message}",
        face.name()
    );
}
both_faces!(limit_removal_refused, plain_node());

async fn ssa_conflict<F: Face>(face: &F) {
    let key = face.deploy(&deploy("owned", 1, burstable(500, 256))).await;
    let ours = ContainerResources::set(
        "app",
        Resources {
            cpu_request: Some(700),
            ..Resources::default()
        },
    );
    // The creator owns the values it set: changing them without force is a conflict.
    let err = face
        .agent()
        .apply_template_resources(&key, std::slice::from_ref(&ours), ApplyMode::default())
        .await
        .expect_err("creator owns it");
    let conflicts = err.field_conflicts();
    assert_eq!(conflicts.len(), 1, "[{}] {err:?}", face.name());
    let field = ".spec.template.spec.containers[name=\"app\"].resources.requests.cpu";
    assert_eq!(conflicts[0].0, field, "[{}]", face.name());
    assert!(
        conflicts[0].1.contains(CREATOR),
        "[{}] {}",
        face.name(),
        conflicts[0].1
    );

    let forced = ApplyMode {
        force: true,
        dry_run: false,
    };
    let w = face
        .agent()
        .apply_template_resources(&key, std::slice::from_ref(&ours), forced)
        .await
        .expect("forced apply");
    assert_eq!(
        w.containers[0].resources.cpu_request,
        Some(700),
        "[{}]",
        face.name()
    );
    let owners: Vec<_> = w
        .resource_owners
        .iter()
        .filter(|o| o.field == ResourceField::CpuRequest)
        .map(|o| o.manager.as_str())
        .collect();
    assert_eq!(owners, ["kerf"], "[{}] force moves ownership", face.name());

    // Another manager changing kerf's field conflicts with kerf; the same value does not.
    let argo = face.as_manager("argocd-controller");
    let theirs = ContainerResources::set(
        "app",
        Resources {
            cpu_request: Some(900),
            ..Resources::default()
        },
    );
    let err = argo
        .apply_template_resources(&key, &[theirs], ApplyMode::default())
        .await
        .expect_err("kerf owns it");
    let conflicts = err.field_conflicts();
    assert_eq!(conflicts.len(), 1, "[{}] {err:?}", face.name());
    assert!(
        conflicts[0].1.contains("\"kerf\""),
        "[{}] {}",
        face.name(),
        conflicts[0].1
    );
    argo.apply_template_resources(&key, &[ours], ApplyMode::default())
        .await
        .expect("an equal value is co-owned");
}
both_faces!(ssa_conflict, plain_node());

async fn eviction_refused_by_pdb<F: Face>(face: &F) {
    let key = face.deploy(&deploy("quorum", 2, burstable(200, 128))).await;
    let pods = ready_pods(face, &key, 2).await;
    face.pdb("quorum", "quorum", 2).await;
    let ns = vec![face.ns().to_string()];
    wait_for(face, "the PDB counts 2 healthy pods", async || {
        let snap = face.agent().snapshot(&ns).await.expect("snapshot");
        snap.pdbs
            .iter()
            .any(|p| p.current_healthy == 2)
            .then_some(())
    })
    .await;
    let err = face
        .agent()
        .evict(&pods[0].pod)
        .await
        .expect_err("the PDB allows no disruption");
    assert!(err.is_disruption_budget(), "[{}] {err:?}", face.name());
    let status = err.status().expect("api status");
    assert!(
        status.causes.iter().any(|c| c.reason == "DisruptionBudget"),
        "[{}] {status:?}",
        face.name()
    );
    assert!(
        face.agent()
            .pod(&pods[0].pod)
            .await
            .expect("read")
            .is_some(),
        "[{}] the pod stays",
        face.name()
    );
}
both_faces!(eviction_refused_by_pdb, plain_node());

async fn oom_after_too_small_limit<F: Face>(face: &F) {
    let mut d = deploy(
        "hungry",
        1,
        Resources {
            memory_limit: Some(512 * MIB),
            ..burstable(200, 512)
        },
    );
    d.usage.memory = Memory::Flat(300.0 * MIB as f64);
    let key = face.deploy(&d).await;
    let before = ready_pods(face, &key, 1).await.remove(0);
    assert_eq!(
        before.status("app").map(|s| s.restart_count),
        Some(0),
        "[{}] fits in 512Mi",
        face.name()
    );
    let small = Resources {
        memory_request: Some(128 * MIB),
        memory_limit: Some(128 * MIB),
        ..Resources::default()
    };
    let forced = ApplyMode {
        force: true,
        dry_run: false,
    };
    face.agent()
        .apply_template_resources(&key, &[ContainerResources::set("app", small)], forced)
        .await
        .expect("apply");
    let ns = vec![face.ns().to_string()];
    let killed = wait_for(face, "a new pod OOM-killed under 128Mi", async || {
        let snap = face.agent().snapshot(&ns).await.expect("snapshot");
        let found = snap
            .pods_of(&key)
            .find(|p| {
                p.revision != before.revision
                    && p.status("app").is_some_and(|s| {
                        s.restart_count >= 1
                            && s.last_termination
                                .as_ref()
                                .is_some_and(|t| t.reason == "OOMKilled")
                    })
            })
            .cloned();
        found
    })
    .await;
    assert_eq!(
        killed.containers[0].resources.memory_limit,
        Some(128 * MIB),
        "[{}]",
        face.name()
    );
}
both_faces!(oom_after_too_small_limit, plain_node());

// After `both_faces!`, which they use.
mod guardrails;
mod records;
mod usage;

//! Conformance of what the agent's collector reads from a kubelet, on both faces: the
//! CPU usage and working set of each container and of each pod's own cgroup, through
//! `Cluster::usage` (on the real API server: the node's kubelet endpoint over HTTPS, as
//! the agent's identity, RBAC `nodes/metrics`), each sample at the kubelet's own time.

use kerf::cluster::{Node, UsageMetric, UsageSample};

use super::*;

/// A scrape time no kubelet would write: a sample carrying it was not stamped by the
/// kubelet.
const NOT_THE_KUBELETS: i64 = 1;

async fn samples_of<F: Face>(face: &F, node: &Node, pod: &PodRef) -> Vec<UsageSample> {
    face.agent()
        .usage(node, NOT_THE_KUBELETS)
        .await
        .expect("the kubelet's usage")
        .into_iter()
        .filter(|s| &s.pod == pod)
        .collect()
}

fn find(samples: &[UsageSample], metric: UsageMetric, container: &str) -> Option<UsageSample> {
    samples
        .iter()
        .find(|s| s.metric == metric && s.container == container)
        .cloned()
}

async fn usage_samples_carry_the_kubelets_timestamps<F: Face>(face: &F) {
    let key = face.deploy(&deploy("used", 1, burstable(200, 256))).await;
    let pod = ready_pods(face, &key, 1).await.remove(0);
    let ns = vec![face.ns().to_string()];
    let node = face
        .agent()
        .snapshot(&ns)
        .await
        .expect("snapshot")
        .nodes
        .into_iter()
        .find(|n| Some(&n.name) == pod.node.as_ref())
        .expect("the pod's node");
    let (cpu, memory) = (UsageMetric::CpuSeconds, UsageMetric::MemoryWorkingSet);
    let first = wait_for(face, "the container's and the pod's usage", async || {
        let s = samples_of(face, &node, &pod.pod).await;
        let working = find(&s, memory, "app").is_some_and(|m| m.value > 0.0);
        let all = [(cpu, "app"), (cpu, ""), (memory, "app"), (memory, "")]
            .iter()
            .all(|(m, c)| find(&s, *m, c).is_some());
        (working && all).then_some(s)
    })
    .await;
    let name = face.name();
    for s in &first {
        assert!(
            s.timestamp_ms > 1_700_000_000_000,
            "[{name}] the kubelet's own time, not the scrape's: {s:?}"
        );
        assert!(
            s.container == "app" || s.container.is_empty(),
            "[{name}] no pause container: {s:?}"
        );
        assert!(!s.id.is_empty(), "[{name}] {s:?}");
    }
    let app = find(&first, cpu, "app").expect("the container's CPU");
    let own = find(&first, cpu, "").expect("the pod's CPU");
    assert_ne!(
        app.id, own.id,
        "[{name}] the pod's cgroup is its own series"
    );
    assert!(
        app.id.starts_with(&own.id),
        "[{name}] {} in {}",
        app.id,
        own.id
    );
    let mib = find(&first, memory, "app").expect("working set").value / MIB as f64;
    assert!(
        (16.0..=256.0).contains(&mib),
        "[{name}] about 64 MiB: {mib}"
    );

    // Time moves on in the kubelet: the same series, later, its counter not lower.
    let later = wait_for(face, "a later sample of the container", async || {
        find(&samples_of(face, &node, &pod.pod).await, cpu, "app")
            .filter(|s| s.timestamp_ms > app.timestamp_ms)
    })
    .await;
    assert_eq!(later.id, app.id, "[{name}]");
    assert!(
        later.value >= app.value,
        "[{name}] a counter: {later:?} after {app:?}"
    );
}
both_faces!(usage_samples_carry_the_kubelets_timestamps, plain_node());

//! Conformance of what the agent's guardrails rely on, on both faces: a resize under
//! `resizePolicy: RestartContainer` restarts the container (once, not as an OOM kill)
//! and one under `NotRequired` does not; a release keeps the values and lets another
//! manager apply without a conflict; an HPA's metrics applied by kerf are kerf's until
//! released; the kubelet's CFS counters show a container throttled under its limit.

use super::*;

async fn restart_container<F: Face>(face: &F) {
    let mut d = deploy("restarts", 1, burstable(500, 256));
    d.memory_policy = RestartPolicy::RestartContainer;
    let key = face.deploy(&d).await;
    let pod = ready_pods(face, &key, 1).await.remove(0);
    // CPU (NotRequired): resized without a restart.
    let cpu = burstable(400, 256);
    face.agent()
        .resize_pod(&pod.pod, &[ContainerResources::set("app", cpu)])
        .await
        .expect("cpu resize");
    let p = resize_state(face, &pod.pod, "the CPU resize actuated", |p| {
        p.status("app").and_then(|s| s.resources) == Some(cpu)
    })
    .await;
    assert_eq!(
        p.status("app").map(|s| s.restart_count),
        Some(0),
        "[{}]",
        face.name()
    );
    // Memory (RestartContainer): resized with one restart of the container, same pod.
    let memory = burstable(400, 384);
    face.agent()
        .resize_pod(&pod.pod, &[ContainerResources::set("app", memory)])
        .await
        .expect("memory resize");
    let p = resize_state(face, &pod.pod, "the memory resize actuated", |p| {
        p.status("app").and_then(|s| s.resources) == Some(memory)
    })
    .await;
    let s = p.status("app").expect("status");
    assert_eq!(p.uid, pod.uid, "[{}] the same pod", face.name());
    assert_eq!(s.restart_count, 1, "[{}] restarted once", face.name());
    let t = s.last_termination.as_ref().expect("a termination");
    assert_ne!(t.reason, "OOMKilled", "[{}]", face.name());
    assert_eq!(t.exit_code, 0, "[{}]", face.name());
}
both_faces!(restart_container, plain_node());

async fn release_keeps_the_values<F: Face>(face: &F) {
    let key = face.deploy(&deploy("owned", 1, burstable(500, 256))).await;
    ready_pods(face, &key, 1).await;
    let kerfs = burstable(250, 200);
    let forced = ApplyMode {
        force: true,
        dry_run: false,
    };
    face.agent()
        .apply_template_resources(&key, &[ContainerResources::set("app", kerfs)], forced)
        .await
        .expect("kerf's apply");
    let released = face
        .agent()
        .release_template_resources(&key)
        .await
        .expect("release");
    assert_eq!(
        released.containers[0].resources,
        kerfs,
        "[{}] values kept",
        face.name()
    );
    let w = face
        .observer()
        .workload(&key)
        .await
        .expect("read")
        .expect("exists");
    assert!(
        !w.resource_owners.iter().any(|o| o.manager == "kerf"),
        "[{}] {:?}",
        face.name(),
        w.resource_owners
    );
    assert_eq!(w.containers[0].resources, kerfs);
    // Another manager's apply of its own values: no conflict, no force.
    let git = burstable(500, 256);
    let applied = face
        .as_manager("argocd-controller")
        .apply_template_resources(
            &key,
            &[ContainerResources::set("app", git)],
            ApplyMode::default(),
        )
        .await
        .expect("no conflict after the release");
    assert_eq!(applied.containers[0].resources, git, "[{}]", face.name());
}
both_faces!(release_keeps_the_values, plain_node());

async fn hpa_metrics_are_owned_and_released<F: Face>(face: &F) {
    let key = face.deploy(&deploy("scaled", 1, burstable(500, 256))).await;
    face.hpa("scaled", 40).await;
    let ns = vec![face.ns().to_string()];
    let hpa = wait_for(face, "the HPA in the snapshot", async || {
        face.agent()
            .snapshot(&ns)
            .await
            .expect("snapshot")
            .hpas
            .into_iter()
            .find(|h| h.target.as_ref() == Some(&key))
    })
    .await;
    assert!(hpa.metric_managers.is_empty(), "[{}] {hpa:?}", face.name());
    let mut metric = hpa.metrics[0].clone();
    metric.target_utilization = Some(80);
    let applied = face
        .agent()
        .apply_hpa_metrics(face.ns(), "scaled", &[metric])
        .await
        .expect("apply the HPA's metrics");
    assert_eq!(
        applied.metrics[0].target_utilization,
        Some(80),
        "[{}]",
        face.name()
    );
    assert_eq!(applied.metric_managers, ["kerf"], "[{}]", face.name());
    face.agent()
        .release_hpa(face.ns(), "scaled")
        .await
        .expect("release the HPA");
    let after = face
        .observer()
        .snapshot(&ns)
        .await
        .expect("snapshot")
        .hpas
        .into_iter()
        .find(|h| h.name == "scaled")
        .expect("hpa");
    assert!(
        after.metric_managers.is_empty(),
        "[{}] {after:?}",
        face.name()
    );
    assert_eq!(
        after.metrics[0].target_utilization,
        Some(80),
        "[{}] value kept",
        face.name()
    );
}
both_faces!(hpa_metrics_are_owned_and_released, plain_node());

async fn cpu_counters_show_throttling<F: Face>(face: &F) {
    let mut d = deploy(
        "throttled",
        1,
        Resources {
            cpu_limit: Some(200),
            ..burstable(200, 256)
        },
    );
    d.usage.cpu = Cpu::Steady(800.0);
    let key = face.deploy(&d).await;
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
    let c = wait_for(face, "throttled periods counted", async || {
        face.agent()
            .cpu_counters(&node)
            .await
            .expect("counters")
            .into_iter()
            .find(|c| c.pod == pod.pod && c.periods >= 100)
    })
    .await;
    let ratio = c.throttled_periods as f64 / c.periods as f64;
    assert!(ratio > 0.6, "[{}] wants 4x its limit: {c:?}", face.name());
}
both_faces!(cpu_counters_show_throttling, plain_node());

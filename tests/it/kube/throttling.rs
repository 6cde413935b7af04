//! The sim kubelet's cAdvisor endpoint: a container that wants more CPU than its limit
//! shows throttled CFS periods; one under its limit shows none. And the path kerf's
//! agent reads them by: the node's kubelet endpoint (its InternalIP and
//! `daemonEndpoints` port) over HTTPS, as the agent's identity, authorized by the real
//! API server (TokenReview, SubjectAccessReview of `nodes/metrics` against the shipped
//! ClusterRole); a user without that right is refused, and a kubelet refusing or out of
//! reach is named as the kubelet, not the API server.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Cluster, ClusterError};
use kerf::sim::api_kubelet::ApiKubelet;
use kerf::sim::kubelet::USAGE_ANNOTATION;
use kube::api::{Api, PostParams};

use crate::support::eventually;
use crate::support::kube::objects::{deployment, node};
use crate::support::kube::{control_plane, namespace};

/// An address nothing listens on (a port bound, then released).
async fn dead_endpoint() -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    drop(l);
    addr.to_string()
}

/// The value of `metric` for `pod_prefix`'s `app` container, if present (the line ends
/// in the kubelet's timestamp after the value).
fn value(text: &str, metric: &str, pod_prefix: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")))
        .filter(|l| l.contains("container=\"app\""))
        .find(|l| l.contains(&format!("pod=\"{pod_prefix}-")))
        .and_then(|l| l.rsplit_once('}'))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn cpu_above_the_limit_shows_in_the_cadvisor_throttling_counters() {
    let plane = control_plane();
    let admin = plane.admin().await;
    let ns = namespace(&admin, "throttle").await;
    let kubelet = ApiKubelet::start_serving(
        admin.clone(),
        vec![node(&ns.name, 4000, 8192)],
        3,
        plane.kubelet_serving(),
    )
    .await
    .expect("sim kubelet");
    let api = Api::<Deployment>::namespaced(admin.clone(), &ns.name);
    for (name, wants) in [("busy", 800.0), ("calm", 50.0)] {
        let mut d = deployment(&ns.name, name, 1, 100, 64);
        let template = d
            .spec
            .as_mut()
            .and_then(|s| s.template.spec.as_mut())
            .expect("pod spec");
        template.containers[0]
            .resources
            .as_mut()
            .expect("resources")
            .limits = Some(
            [(
                "cpu".to_string(),
                k8s_openapi::apimachinery::pkg::api::resource::Quantity("200m".into()),
            )]
            .into(),
        );
        let usage = serde_json::json!({ "app": { "cpu": { "steady": wants }, "memory": { "flat": 32.0 * 1048576.0 } } });
        d.spec
            .as_mut()
            .expect("spec")
            .template
            .metadata
            .get_or_insert_default()
            .annotations = Some([(USAGE_ANNOTATION.to_string(), usage.to_string())].into());
        api.create(&PostParams::default(), &d)
            .await
            .expect("create");
    }
    let http = crate::support::client();
    let text = eventually(
        "throttled periods for busy",
        Duration::from_secs(60),
        || async {
            let text = http
                .get(kubelet.metrics_url())
                .send()
                .await
                .ok()?
                .text()
                .await
                .ok()?;
            let throttled = value(&text, "container_cpu_cfs_throttled_periods_total", "busy")?;
            let calm = value(&text, "container_cpu_cfs_periods_total", "calm")?;
            (throttled > 0.0 && calm > 0.0).then_some(text)
        },
    )
    .await;
    let periods = value(&text, "container_cpu_cfs_periods_total", "busy").expect("busy periods");
    let throttled =
        value(&text, "container_cpu_cfs_throttled_periods_total", "busy").expect("busy throttled");
    assert!(
        throttled / periods > 0.5,
        "wants 4x its limit: {throttled}/{periods}"
    );
    assert_eq!(
        value(&text, "container_cpu_cfs_throttled_periods_total", "calm"),
        Some(0.0)
    );
    // The agent's path: the node as the agent's watches see it, its kubelet read as the
    // agent (RBAC nodes/metrics), TLS checked against the cluster's CA.
    let agent = plane.agent_cluster().await;
    let snap = agent
        .snapshot(std::slice::from_ref(&ns.name))
        .await
        .expect("snapshot");
    let n = snap
        .nodes
        .iter()
        .find(|n| n.name == format!("{}-node", ns.name))
        .expect("the test's node");
    assert!(
        n.daemon_endpoint
            .as_deref()
            .is_some_and(|k| k.starts_with("127.0.0.1:") && !k.ends_with(":10250")),
        "the node names its kubelet endpoint: {:?}",
        n.daemon_endpoint
    );
    let counters = eventually(
        "the agent reads the throttling counters",
        Duration::from_secs(30),
        || async {
            let c = agent.cpu_counters(n).await.ok()?;
            let busy = c
                .iter()
                .find(|c| c.pod.name.starts_with("busy-") && c.throttled_periods > 0)?;
            Some((busy.clone(), c))
        },
    )
    .await;
    let (busy, all) = counters;
    assert!(
        busy.throttled_periods as f64 / busy.periods as f64 > 0.5,
        "{busy:?}"
    );
    let calm = all
        .iter()
        .find(|c| c.pod.name.starts_with("calm-"))
        .expect("calm counted");
    assert_eq!(calm.throttled_periods, 0);
    // Someone without nodes/metrics is refused by the kubelet (403 from its
    // SubjectAccessReview), and a client built without a config cannot look.
    let jane = KubeCluster::connect(
        plane
            .config_for("jane", &plane.pki.tokens.unprivileged.token)
            .await,
        Default::default(),
    )
    .expect("jane");
    let refused = jane
        .cpu_counters(n)
        .await
        .expect_err("jane may not read the kubelet");
    assert_eq!(refused.code(), Some(403), "{refused}");
    let said = refused.to_string();
    assert!(
        said.contains(&format!("the kubelet of node {}", n.name)) && !said.contains("API server"),
        "{said}"
    );
    // A kubelet that cannot be reached is named as such, not as the API server.
    let mut dead = n.clone();
    dead.daemon_endpoint = Some(dead_endpoint().await);
    let unreachable = agent
        .cpu_counters(&dead)
        .await
        .expect_err("nothing listens there");
    let said = unreachable.to_string();
    assert!(
        said.starts_with(&format!("cannot read the kubelet of node {}", n.name))
            && !said.contains("API server"),
        "{said}"
    );
    let blind = KubeCluster::new(plane.admin().await).cpu_counters(n).await;
    assert!(
        matches!(blind, Err(ClusterError::Unexpected { .. })),
        "{blind:?}"
    );
}

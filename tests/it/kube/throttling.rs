//! The sim kubelet's cAdvisor endpoint: a container that wants more CPU than its limit
//! shows throttled CFS periods; one under its limit shows none.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kerf::sim::api_kubelet::ApiKubelet;
use kerf::sim::kubelet::USAGE_ANNOTATION;
use kube::api::{Api, PostParams};

use super::objects::{deployment, node, poll};
use crate::support::kube::{control_plane, namespace};

/// The value of `metric` for `pod_prefix`'s `app` container, if present.
fn value(text: &str, metric: &str, pod_prefix: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")))
        .find(|l| l.contains(&format!("pod=\"{pod_prefix}-")))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn cpu_above_the_limit_shows_in_the_cadvisor_throttling_counters() {
    let plane = control_plane();
    let admin = plane.admin().await;
    let ns = namespace(&admin, "throttle").await;
    let kubelet = ApiKubelet::start(admin.clone(), vec![node(&ns.name, 4000, 8192)], 3)
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
    let text = poll(
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
}

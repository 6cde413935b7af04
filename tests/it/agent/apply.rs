//! Done means 1: against the real API server with the sim kubelet, an `auto-patch`
//! Deployment gets its recommendation applied in place (pods' status shows the new
//! values, no pod restarted, one `applied` event in the hub), by rollout (a new
//! ReplicaSet, `kerf` owning exactly the resources fields), and an infeasible resize
//! falls back to a rollout (onto a node with room) with its `fallback` event; a resize
//! Deferred past `fallbackAfter` falls back too.

use k8s_openapi::api::apps::v1::Deployment;
use kerf::agent::state::Phase;
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Cluster, Pod, Record, WorkloadKey};
use kube::api::Api;
use serde_json::{json, Value};

use super::world::{deployment, drive, pods, ready, res, World};

fn applied_phase(a: &super::world::TestAgent, key: &WorkloadKey) -> bool {
    a.state(key)
        .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
}

#[tokio::test]
async fn auto_patch_applies_in_place_without_restarting_a_pod() {
    let w = World::new("agent-in-place", 4000, 8192).await;
    let key = w
        .create(&deployment("web", 2, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 2).await;
    w.policy("auto", json!({})).await;
    let rec = w.recommend(&key, res(250, 500, 200, 400)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied in place", |a| applied_phase(a, &key)).await;
    // The kubelet reports the new values; the same pods, never restarted.
    let after = ready(&w, &key, 2).await;
    let uids = |p: &[Pod]| p.iter().map(|p| p.uid.clone()).collect::<Vec<_>>();
    assert_eq!(uids(&after), uids(&before), "no pod was replaced");
    for p in &after {
        let s = p.status("app").expect("status");
        assert_eq!(s.resources, Some(res(250, 500, 200, 400)), "{}", p.pod.name);
        assert_eq!(s.restart_count, 0, "{} restarted", p.pod.name);
    }
    w.deliver(&agent).await;
    let events = w.audit().await;
    let applied: Vec<&Value> = events.iter().filter(|e| e["type"] == "applied").collect();
    assert_eq!(applied.len(), 1, "{events:#?}");
    let e = applied[0];
    assert_eq!(e["reason"], "RecommendationApplied");
    assert_eq!(e["strategy"], "in-place");
    assert_eq!(e["recommendationID"], rec.as_str());
    assert_eq!(
        e["containers"],
        json!([{ "name": "app",
                 "from": { "requests": { "cpu": "500m", "memory": "256Mi" }, "limits": { "cpu": "1", "memory": "512Mi" } },
                 "to": { "requests": { "cpu": "250m", "memory": "200Mi" }, "limits": { "cpu": "500m", "memory": "400Mi" } } }])
    );
    // The record says so, and the decision is a Kubernetes Event about it.
    let admin = KubeCluster::new(w.admin.clone());
    let records = admin
        .records(std::slice::from_ref(&w.ns.name))
        .await
        .expect("records");
    let r: &Record = records
        .iter()
        .find(|r| r.name == "deployment-web")
        .expect("record");
    assert_eq!(r.status["phase"], "Applied");
    assert_eq!(r.status["applied"]["strategy"], "in-place");
    let conditions = r.status["conditions"].as_array().expect("conditions");
    assert!(conditions.iter().any(|c| c["type"] == "Applied"
        && c["status"] == "True"
        && c["reason"] == "RecommendationApplied"));
    let kube_events = admin.events(&r.object_ref()).await.expect("events");
    assert!(kube_events
        .iter()
        .any(|e| e.event.reason == "RecommendationApplied"
            && e.event.event_type == kerf::cluster::EventType::Normal));
    // The next pass finds nothing left to change and says so once (a change starts the
    // reporting over); the one after that says nothing.
    agent.pass().await;
    agent.pass().await;
    w.deliver(&agent).await;
    let later = w.audit().await;
    assert_eq!(later.len(), events.len() + 1, "{later:#?}");
    assert_eq!(
        (
            later[events.len()]["type"].as_str(),
            later[events.len()]["reason"].as_str()
        ),
        (Some("skipped"), Some("NoSignificantChange"))
    );
}

#[tokio::test]
async fn rollout_makes_a_new_replicaset_and_kerf_owns_exactly_the_resources() {
    let w = World::new("agent-rollout", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 1, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 1).await;
    w.policy("rollout", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    w.recommend(&key, res(300, 600, 192, 384)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied by rollout", |a| applied_phase(a, &key)).await;
    // New pods from a new ReplicaSet carry the values.
    crate::support::eventually(
        "new ReplicaSet's pod",
        crate::support::secs(60),
        async || {
            let p = pods(&w, &key).await;
            let replaced = p.len() == 1
                && p[0].ready
                && p[0].revision != before[0].revision
                && p[0].containers[0].resources == res(300, 600, 192, 384);
            if replaced {
                Ok(())
            } else {
                Err(p)
            }
        },
    )
    .await;
    // managedFields: kerf's Apply entry holds the container's resources and nothing else.
    let d = Api::<Deployment>::namespaced(w.admin.clone(), &w.ns.name)
        .get("api")
        .await
        .expect("deployment");
    let entries = d.metadata.managed_fields.unwrap_or_default();
    let kerf: Vec<_> = entries
        .iter()
        .filter(|e| e.manager.as_deref() == Some("kerf"))
        .collect();
    assert_eq!(kerf.len(), 1, "{entries:?}");
    assert_eq!(kerf[0].operation.as_deref(), Some("Apply"));
    let fields = kerf[0].fields_v1.as_ref().expect("fieldsV1").0.clone();
    let mut leaves = Vec::new();
    leaf_paths(&fields, String::new(), &mut leaves);
    leaves.sort();
    assert_eq!(leaves, resources_of("containers", "app"));
    w.deliver(&agent).await;
    let applied: Vec<Value> = w
        .audit()
        .await
        .into_iter()
        .filter(|e| e["type"] == "applied")
        .collect();
    assert_eq!(applied.len(), 1);
    assert_eq!(applied[0]["strategy"], "rollout");
}

/// The `fieldsV1` leaves of the container `name` of the template's `list`
/// (`containers`, `initContainers`) when a manager owns exactly its resources, sorted.
pub fn resources_of(list: &str, name: &str) -> Vec<String> {
    resources_under("f:spec.f:template.f:spec", list, name)
}

/// As [`resources_of`], for a pod spec at `spec` (a CronJob's is under its job template).
pub fn resources_under(spec: &str, list: &str, name: &str) -> Vec<String> {
    let at = format!(r#"{spec}.f:{list}.k:{{"name":"{name}"}}"#);
    [
        ".",
        "f:name",
        "f:resources.f:limits.f:cpu",
        "f:resources.f:limits.f:memory",
        "f:resources.f:requests.f:cpu",
        "f:resources.f:requests.f:memory",
    ]
    .iter()
    .map(|l| format!("{at}.{l}"))
    .collect()
}

/// The leaf paths of a `fieldsV1` tree, dot-joined.
pub fn leaf_paths(v: &Value, at: String, out: &mut Vec<String>) {
    match v.as_object() {
        Some(m) if !m.is_empty() => {
            for (k, child) in m {
                let next = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                leaf_paths(child, next, out);
            }
        }
        _ => out.push(at),
    }
}

#[tokio::test]
async fn an_infeasible_resize_falls_back_to_a_rollout() {
    // 1000m node: a 1500m request can never fit there; the API server refuses the
    // resize (NodeCapacity), which is the kubelet's Infeasible said early.
    let w = World::new("agent-infeasible", 1000, 4096).await;
    let key = w
        .create(&deployment("big", 1, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &key, 1).await;
    // A larger node joins the pool: the rollout's new pod has somewhere to go (with
    // none, the change would not be started: `NoFittingNode`).
    let mut larger = crate::support::kube::objects::node(&w.ns.name, 4000, 8192);
    larger.name = format!("{}-large", w.ns.name);
    let plane = crate::support::kube::control_plane();
    let _larger = kerf::sim::api_kubelet::ApiKubelet::start_serving(
        w.admin.clone(),
        vec![larger],
        11,
        plane.kubelet_serving(),
    )
    .await
    .expect("the larger node's kubelet");
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(1500, 2000, 256, 512)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied after the fallback", |a| {
        applied_phase(a, &key)
    })
    .await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let kinds: Vec<(&str, &str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or(""),
                e["reason"].as_str().unwrap_or(""),
                e["strategy"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("fallback", "ResizeInfeasible", "rollout"),
            ("applied", "RecommendationApplied", "rollout")
        ],
        "{events:#?}"
    );
    assert_eq!(events[0]["details"]["resizeStatus"], "Infeasible");
    // The template carries the values now.
    let d = Api::<Deployment>::namespaced(w.admin.clone(), &w.ns.name)
        .get("big")
        .await
        .expect("deployment");
    let c = &d
        .spec
        .expect("spec")
        .template
        .spec
        .expect("pod spec")
        .containers[0];
    let requests = c
        .resources
        .as_ref()
        .and_then(|r| r.requests.clone())
        .expect("requests");
    assert_eq!(requests["cpu"].0, "1500m");
}

#[tokio::test]
async fn a_resize_deferred_past_fallback_after_rolls_out() {
    // Two 400m pods on a 1000m node: the first grows to 550m, the second cannot
    // (Deferred) until kerf gives up after fallbackAfter and rolls out.
    let w = World::new("agent-deferred", 1000, 8192).await;
    let key = w
        .create(&deployment("pair", 2, res(400, 800, 128, 256)))
        .await;
    ready(&w, &key, 2).await;
    w.policy("auto", json!({ "apply": { "fallbackAfter": "5m" } }))
        .await;
    w.recommend(&key, res(550, 800, 128, 256)).await;
    let mut agent = w.agent().await;
    let deferred = |a: &super::world::TestAgent| {
        a.state(&key)
            .and_then(|s| s.operation.as_ref())
            .is_some_and(|o| {
                matches!(
                    o.step,
                    kerf::agent::state::Step::InPlace {
                        deferred_since_ms: Some(_)
                    }
                )
            })
    };
    drive(&mut agent, "a pod Deferred", deferred).await;
    w.hub.clock.advance(6 * 60 * 1000);
    drive(&mut agent, "applied after the timeout", |a| {
        applied_phase(a, &key)
    })
    .await;
    w.deliver(&agent).await;
    let reasons = w.reasons().await;
    assert_eq!(
        reasons,
        [
            ("fallback".to_string(), "ResizeDeferredTimeout".to_string()),
            ("applied".to_string(), "RecommendationApplied".to_string())
        ]
    );
}

//! RightsizingPolicy as code, against the real API server: the agent reads the
//! cluster's objects, writes its verdict to each (status condition and an Event) and
//! reports them to the hub, where they govern the cluster's workloads ahead of the
//! hub's policies. Created, edited and deleted, the effective policy follows and the
//! workload's current skip is reported again once per edit; an invalid generation
//! changes nothing.
//!
//! The objects are cluster-scoped and the control plane is shared: each test names its
//! objects after its namespace and selects only that namespace, so other tests' agents
//! (which see them too) find nothing of theirs selected.

use std::time::Duration;

use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Cluster, EventType, ObjectRef};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{json, Value};

use super::guardrails::fingerprint;
use super::world::{deployment, pods, ready, res, TestAgent, World};

fn api(w: &World) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("kerf.getkerf.dev", "v1alpha1", "RightsizingPolicy"),
        "rightsizingpolicies",
    );
    Api::all_with(w.admin.clone(), &ar)
}

/// Applies the object `name` with `spec` as a GitOps tool would (server-side apply).
async fn apply(w: &World, name: &str, spec: Value) -> DynamicObject {
    let body = json!({
        "apiVersion": "kerf.getkerf.dev/v1alpha1",
        "kind": "RightsizingPolicy",
        "metadata": { "name": name },
        "spec": spec,
    });
    api(w)
        .patch(
            name,
            &PatchParams::apply("argocd").force(),
            &Patch::Apply(&body),
        )
        .await
        .expect("apply the RightsizingPolicy")
}

async fn object(w: &World, name: &str) -> DynamicObject {
    api(w).get(name).await.expect("read the RightsizingPolicy")
}

/// The Events about the object `name`, as `kubectl describe` shows them.
async fn events(w: &World, name: &str) -> Vec<(EventType, String, String)> {
    let regarding = ObjectRef {
        api_version: "kerf.getkerf.dev/v1alpha1".into(),
        kind: "RightsizingPolicy".into(),
        namespace: String::new(),
        name: name.into(),
        uid: None,
    };
    KubeCluster::new(w.admin.clone())
        .events(&regarding)
        .await
        .expect("events")
        .into_iter()
        .map(|e| (e.event.event_type, e.event.reason, e.event.note))
        .collect()
}

/// The workload's effective policy in the hub.
async fn effective(w: &World, key: &kerf::cluster::WorkloadKey) -> Value {
    let path = format!("/v1/workloads/{}/policy", w.workload_id(key));
    let (s, v) = w.hub.as_token(&w.hub.admin).call("GET", &path, None).await;
    assert_eq!(s, 200, "{v}");
    v
}

/// Passes until the hub's effective policy of `key` satisfies `done`, then three more.
async fn settle(
    w: &World,
    agent: &mut TestAgent,
    key: &kerf::cluster::WorkloadKey,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    crate::support::wait::eventually_every(
        what,
        Duration::from_secs(60),
        Duration::from_millis(200),
        async || {
            agent.pass().await;
            let e = effective(w, key).await;
            if done(&e) {
                Ok(())
            } else {
                Err(e.to_string())
            }
        },
    )
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    w.deliver(agent).await;
    effective(w, key).await
}

/// The workload's stored skips, `(reason, count)` in order of first appearance.
async fn skips(w: &World) -> Vec<String> {
    w.audit()
        .await
        .iter()
        .filter(|e| e["type"] == "skipped" && e["workload"]["name"] == "api")
        .map(|e| e["reason"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn cooldown_origin(e: &Value) -> &Value {
    &e["origins"]["guardrails.cooldown"]
}

#[tokio::test]
async fn a_policy_created_edited_and_deleted_in_the_cluster_governs_its_workloads() {
    let w = World::now("rsp-life", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 1, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &key, 1).await;
    let before = pods(&w, &key).await;
    w.policy(
        "hub",
        json!({ "mode": { "cpu": "audit", "memory": "audit" } }),
    )
    .await;
    w.recommend(&key, res(300, 1000, 256, 512)).await;
    let mut agent = w.agent().await;
    let hub_only = settle(&w, &mut agent, &key, "the hub's policy", |e| {
        e["origins"]["mode.cpu"]["source"] == "policy"
    })
    .await;
    assert_eq!(skips(&w).await, ["ModeAudit"]);

    // Created in Git: the cluster's policy governs what it sets.
    let name = format!("{}-git", w.ns.name);
    let selector = json!({ "namespaces": [w.ns.name] });
    apply(
        &w,
        &name,
        json!({ "selector": selector, "guardrails": { "cooldown": "2h" } }),
    )
    .await;
    let e = settle(&w, &mut agent, &key, "the cluster's policy in force", |e| {
        cooldown_origin(e)["generation"] == 1
    })
    .await;
    assert_eq!(
        *cooldown_origin(&e),
        json!({"source": "cluster-policy", "id": cooldown_origin(&e)["id"], "cluster": w.cluster, "name": name, "generation": 1})
    );
    assert_eq!(e["effective"]["guardrails"]["cooldown"], "2h");
    assert_eq!(
        e["effective"]["mode"]["cpu"], "audit",
        "what Git leaves unset: the hub's"
    );
    assert_eq!(e["policies"][0]["source"], "cluster", "{e}");
    assert_eq!(e["policies"][1]["source"], "hub", "{e}");
    assert_ne!(e["identity"], hub_only["identity"]);
    // The effective policy changed: the current skip is reported again, once.
    assert_eq!(skips(&w).await, ["ModeAudit", "ModeAudit"]);
    let o = object(&w, &name).await;
    assert_eq!(o.data["status"]["acceptedGeneration"], 1);
    assert_eq!(o.data["status"]["conditions"][0]["type"], "Accepted");
    assert_eq!(o.data["status"]["conditions"][0]["status"], "True");

    // Edited: the next generation is in force, and the skip is reported once more.
    apply(
        &w,
        &name,
        json!({ "selector": selector, "guardrails": { "cooldown": "3h" } }),
    )
    .await;
    let e = settle(&w, &mut agent, &key, "generation 2 in force", |e| {
        cooldown_origin(e)["generation"] == 2
    })
    .await;
    assert_eq!(e["effective"]["guardrails"]["cooldown"], "3h");
    assert_eq!(skips(&w).await, ["ModeAudit"; 3]);

    // An invalid edit changes nothing: generation 2 stays in force, nothing is reported,
    // and the object says why (its condition and a Warning Event).
    apply(
        &w,
        &name,
        json!({ "selector": selector, "guardrails": { "cooldown": "soon" } }),
    )
    .await;
    crate::support::eventually(
        "the verdict on generation 3",
        Duration::from_secs(60),
        async || {
            agent.pass().await;
            object(&w, &name).await.data["status"]["observedGeneration"] == 3
        },
    )
    .await;
    let settled = settle(&w, &mut agent, &key, "generation 2 still in force", |e| {
        cooldown_origin(e)["generation"] == 2
    })
    .await;
    assert_eq!(settled["identity"], e["identity"], "nothing changed");
    let o = object(&w, &name).await;
    let condition = &o.data["status"]["conditions"][0];
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "InvalidSpec");
    assert_eq!(o.data["status"]["acceptedGeneration"], 2);
    let message = condition["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("spec.guardrails.cooldown:")
            && message.ends_with("generation 2 stays in force"),
        "{message}"
    );
    let warned: Vec<_> = events(&w, &name)
        .await
        .into_iter()
        .filter(|(t, reason, _)| *t == EventType::Warning && reason == "InvalidPolicy")
        .collect();
    assert!(!warned.is_empty(), "a Warning Event says what is wrong");
    assert_eq!(warned[0].2, message);
    assert_eq!(skips(&w).await.len(), 3, "an invalid edit reports nothing");
    let (s, listed) = w
        .hub
        .as_token(&w.hub.admin)
        .call(
            "GET",
            &format!("/v1/cluster-policies?cluster={}", w.cluster),
            None,
        )
        .await;
    assert_eq!(s, 200, "{listed}");
    let row = &listed["items"][0];
    assert_eq!(
        (
            row["generation"].as_i64(),
            row["acceptedGeneration"].as_i64()
        ),
        (Some(3), Some(2))
    );
    assert_eq!(row["errors"][0]["path"], "spec.guardrails.cooldown");

    // Deleted: the hub's policies alone again, back to the identity before, and the
    // skip is reported once more.
    api(&w)
        .delete(&name, &DeleteParams::default())
        .await
        .expect("delete the RightsizingPolicy");
    let e = settle(&w, &mut agent, &key, "the hub's policy alone again", |e| {
        cooldown_origin(e)["source"] != "cluster-policy"
    })
    .await;
    assert_eq!(e["identity"], hub_only["identity"]);
    assert_eq!(skips(&w).await, ["ModeAudit"; 4]);
    let (s, audit) = w
        .hub
        .as_token(&w.hub.admin)
        .call(
            "GET",
            "/v1/audit/config?targetType=cluster-policy&limit=50",
            None,
        )
        .await;
    assert_eq!(s, 200, "{audit}");
    let mut actions: Vec<&str> = audit["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|c| c["target"]["name"] == format!("{}/{name}", w.cluster).as_str())
        .filter_map(|c| c["action"].as_str())
        .collect();
    actions.reverse();
    assert_eq!(
        actions,
        [
            "ClusterPolicyCreated",
            "ClusterPolicyUpdated",
            "ClusterPolicyRejected",
            "ClusterPolicyDeleted"
        ]
    );
    assert_eq!(
        fingerprint(&pods(&w, &key).await),
        fingerprint(&before),
        "audit mode throughout: nothing was changed"
    );
}

#[tokio::test]
async fn a_new_invalid_policy_changes_nothing_and_says_what_is_wrong() {
    let w = World::now("rsp-bad", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 1, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &key, 1).await;
    // The shipped defaults: no hub policy at all.
    w.recommend(&key, res(500, 1000, 256, 512)).await;
    let mut agent = w.agent().await;
    let before = settle(&w, &mut agent, &key, "the defaults", |e| {
        e["origins"]["mode.cpu"]["source"] == "default"
    })
    .await;
    let name = format!("{}-typo", w.ns.name);
    apply(
        &w,
        &name,
        json!({
            "selector": { "namespaces": [w.ns.name] },
            "mode": { "cpu": "off" },
            "apply": { "maintenanceWindows": [{ "cron": "0 2 * * 1-5", "duration": "2h", "timezone": "Mars/Olympus" }] },
        }),
    )
    .await;
    crate::support::eventually("the verdict", Duration::from_secs(60), async || {
        agent.pass().await;
        object(&w, &name).await.data["status"]["observedGeneration"] == 1
    })
    .await;
    let after = settle(&w, &mut agent, &key, "the hub heard of it", |_| true).await;
    let o = object(&w, &name).await;
    let condition = &o.data["status"]["conditions"][0];
    assert_eq!(
        (&condition["status"], &condition["reason"]),
        (&json!("False"), &json!("InvalidSpec"))
    );
    assert!(
        o.data["status"].get("acceptedGeneration").is_none(),
        "{}",
        o.data["status"]
    );
    let message = condition["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("spec.apply.maintenanceWindows[0].timezone"),
        "{message}"
    );
    assert!(
        message.ends_with("the policy changes nothing until it is valid"),
        "{message}"
    );
    assert!(events(&w, &name)
        .await
        .iter()
        .any(|(t, r, note)| *t == EventType::Warning && r == "InvalidPolicy" && note == message));
    assert_eq!(
        after["identity"], before["identity"],
        "mode.cpu off is not in force"
    );
    assert_eq!(after["effective"]["mode"]["cpu"], "audit");
    assert_eq!(after["origins"]["mode.cpu"]["source"], "default");
    assert_eq!(after["policies"], json!([]), "nothing selects it");
    let (s, listed) = w
        .hub
        .as_token(&w.hub.admin)
        .call(
            "GET",
            &format!("/v1/cluster-policies?cluster={}", w.cluster),
            None,
        )
        .await;
    assert_eq!(s, 200, "{listed}");
    assert_eq!(listed["items"][0]["name"], name.as_str());
    assert_eq!(listed["items"][0]["spec"], Value::Null);
    assert_eq!(listed["items"][0]["acceptedGeneration"], Value::Null);
    api(&w)
        .delete(&name, &DeleteParams::default())
        .await
        .expect("delete the RightsizingPolicy");
}

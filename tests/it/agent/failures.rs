//! Done means 2 for the `failed` reasons: the real API server refuses the agent's change
//! (a ValidatingAdmissionPolicy, as a cluster's own policy engine would), and the agent
//! reports `failed ApplyError` (the template's server-side apply) and `failed
//! ResizeError` (a pod's resize) with the API's message, read back from `GET /v1/audit`.
//! A refusal is not retried: only transport errors, 409, 429 and 5xx are.

use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::apps::v1::Deployment;
use kerf::agent::state::Phase;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

use super::world::{deployment, drive, ready, res, World};

/// What the policy answers, so the test can find the API's message in the events.
const REFUSAL: &str = "kerf-test: changes to this workload are refused here";

/// A ValidatingAdmissionPolicy, bound to the world's namespace only, that refuses every
/// update of Deployment `deployment` and every resize of the pods labelled
/// `app=pods_of`. Deleted on drop.
struct Refusal {
    admin: kube::Client,
    name: String,
}

impl Refusal {
    async fn install(w: &World, deployment: &str, pods_of: &str) -> Refusal {
        let name = format!("kerf-refuse-{}", w.ns.name);
        let expression = format!(
            "!(request.resource.resource == 'deployments' && object.metadata.name == '{deployment}') && \
             !(request.subResource == 'resize' && has(object.metadata.labels) && \
               'app' in object.metadata.labels && object.metadata.labels['app'] == '{pods_of}')"
        );
        let policy: ValidatingAdmissionPolicy = serde_json::from_value(json!({
            "metadata": { "name": name },
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": { "resourceRules": [
                    { "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"],
                      "resources": ["deployments"] },
                    { "apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"],
                      "resources": ["pods/resize"] },
                ]},
                "validations": [{ "expression": expression, "message": REFUSAL }],
            }
        }))
        .expect("policy");
        let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
            "metadata": { "name": name },
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": { "namespaceSelector": { "matchLabels": {
                    "kubernetes.io/metadata.name": w.ns.name } } },
            }
        }))
        .expect("binding");
        let pp = PostParams::default();
        Api::<ValidatingAdmissionPolicy>::all(w.admin.clone())
            .create(&pp, &policy)
            .await
            .expect("create policy");
        Api::<ValidatingAdmissionPolicyBinding>::all(w.admin.clone())
            .create(&pp, &binding)
            .await
            .expect("create binding");
        let r = Refusal {
            admin: w.admin.clone(),
            name,
        };
        r.wait_until_in_force(w, deployment).await;
        r
    }

    /// Policies take effect asynchronously: probe with an admin's metadata-only patch
    /// (no new pod template, so nothing rolls out) until it is refused.
    async fn wait_until_in_force(&self, w: &World, deployment: &str) {
        let api = Api::<Deployment>::namespaced(w.admin.clone(), &w.ns.name);
        let mut n = 0;
        let what = "the admission policy to take effect";
        crate::support::eventually(what, Duration::from_secs(60), async || {
            n += 1;
            let patch =
                json!({ "metadata": { "annotations": { "kerf-test/probe": n.to_string() } } });
            match api
                .patch(deployment, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Err(kube::Error::Api(e)) if e.message.contains(REFUSAL) => Ok(()),
                other => Err(other.map(drop).map_err(|e| e.to_string())),
            }
        })
        .await;
    }
}

impl Drop for Refusal {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // Cluster-scoped: removed whatever the test's outcome (it binds only to the
        // test's namespace, so a leftover would change nothing else).
        let cleanup = async move {
            let dp = DeleteParams::default();
            let _ = Api::<ValidatingAdmissionPolicyBinding>::all(admin.clone())
                .delete(&name, &dp)
                .await;
            let _ = Api::<ValidatingAdmissionPolicy>::all(admin)
                .delete(&name, &dp)
                .await;
        };
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            tokio::task::block_in_place(|| handle.block_on(cleanup));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_changes_are_reported_failed_with_the_apis_message() {
    let w = World::new("agent-failed", 4000, 8192).await;
    let rollout = w
        .create(&deployment("stuck-rollout", 1, res(500, 1000, 256, 512)))
        .await;
    let resize = w
        .create(&deployment("stuck-resize", 1, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &rollout, 1).await;
    ready(&w, &resize, 1).await;
    w.policy("auto", json!({})).await;
    w.policy(
        "by-rollout",
        json!({ "priority": 20, "selector": { "names": ["stuck-rollout"] },
                "apply": { "strategy": "rollout" } }),
    )
    .await;
    let _refusal = Refusal::install(&w, "stuck-rollout", "stuck-resize").await;
    let rec_rollout = w.recommend(&rollout, res(250, 500, 200, 400)).await;
    let rec_resize = w.recommend(&resize, res(250, 500, 200, 400)).await;

    let mut agent = w.agent().await;
    let failed = |a: &super::world::TestAgent, k| {
        a.state(k)
            .is_some_and(|s| s.phase == Phase::Failed && s.operation.is_none())
    };
    drive(&mut agent, "both changes failed", |a| {
        failed(a, &rollout) && failed(a, &resize)
    })
    .await;
    w.deliver(&agent).await;

    let events = w.audit().await;
    let failed_of = |name: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["workload"]["name"] == name && e["type"] == "failed")
            .collect()
    };
    let apply = failed_of("stuck-rollout");
    assert_eq!(apply.len(), 1, "{events:#?}");
    assert_eq!(apply[0]["reason"], "ApplyError");
    assert_eq!(apply[0]["recommendationID"], rec_rollout.as_str());
    let message = apply[0]["message"].as_str().expect("message");
    assert!(message.contains(REFUSAL), "the API's message: {message}");

    let resize_failed = failed_of("stuck-resize");
    assert_eq!(resize_failed.len(), 1, "{events:#?}");
    assert_eq!(resize_failed[0]["reason"], "ResizeError");
    assert_eq!(resize_failed[0]["recommendationID"], rec_resize.as_str());
    let message = resize_failed[0]["message"].as_str().expect("message");
    assert!(message.contains(REFUSAL), "the API's message: {message}");
    // Nothing was applied to either: the pods run the old values.
    assert!(
        !events.iter().any(|e| e["type"] == "applied"),
        "{events:#?}"
    );
    for key in [&rollout, &resize] {
        let pods = ready(&w, key, 1).await;
        assert_eq!(pods[0].containers[0].resources, res(500, 1000, 256, 512));
    }
    // Reported once: more passes say nothing new about the same recommendation.
    agent.pass().await;
    agent.pass().await;
    w.deliver(&agent).await;
    let again = w.audit().await;
    let count = |name: &str| {
        again
            .iter()
            .filter(|e| e["workload"]["name"] == name && e["type"] == "failed")
            .count()
    };
    assert_eq!((count("stuck-rollout"), count("stuck-resize")), (1, 1));
}

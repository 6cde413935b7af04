//! A CronJob (issue 31, done means 1), against the real API server with the sim kubelet.
//! The test makes each run as the CronJob controller (or `kubectl create job --from`)
//! would: a Job owned by the CronJob, carrying its job template, whose pods the Job
//! controller makes. kerf changes the CronJob's `spec.jobTemplate` by server-side apply
//! (field manager `kerf`, owning exactly the container's resources fields); the run in
//! progress keeps its pods and values, and the next run's pods carry the new ones.

use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::api::{Api, PostParams};
use serde_json::{json, Value};

use super::apply::{leaf_paths, resources_under};
use super::world::{drive, pods, res, World};
use crate::support::kube::objects::POOL_LABEL;

fn job_template(w: &World) -> Value {
    json!({ "spec": {
        "backoffLimit": 0,
        "template": {
            "metadata": { "labels": { "app": "nightly" } },
            "spec": {
                "restartPolicy": "Never",
                "nodeSelector": { POOL_LABEL: w.ns.name },
                "containers": [{
                    "name": "app", "image": "registry.example/report:1",
                    "resources": { "requests": { "cpu": "500m", "memory": "256Mi" },
                                   "limits": { "cpu": "1", "memory": "512Mi" } },
                }],
            },
        },
    }})
}

/// The CronJob, on a schedule that does not fire while the test runs (its runs are made
/// by [`run`]).
async fn nightly(w: &World) -> Api<CronJob> {
    let api: Api<CronJob> = Api::namespaced(w.admin.clone(), &w.ns.name);
    let body = json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": { "name": "nightly", "namespace": w.ns.name },
        "spec": { "schedule": "0 3 29 2 *", "jobTemplate": job_template(w) },
    });
    let made: CronJob = serde_json::from_value(body).expect("cronjob");
    api.create(&PostParams::default(), &made)
        .await
        .expect("create the CronJob");
    api
}

/// A run: a Job owned by the CronJob with its job template as it is now.
async fn run(w: &World, cronjobs: &Api<CronJob>, name: &str) {
    let c = cronjobs.get("nightly").await.expect("the CronJob");
    let spec = c.spec.expect("spec").job_template.spec.expect("job spec");
    let job = Job {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            namespace: Some(w.ns.name.clone()),
            annotations: Some(
                [("cronjob.kubernetes.io/instantiate".into(), "manual".into())].into(),
            ),
            owner_references: Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    api_version: "batch/v1".into(),
                    kind: "CronJob".into(),
                    name: "nightly".into(),
                    uid: c.metadata.uid.clone().expect("uid"),
                    controller: Some(true),
                    block_owner_deletion: Some(true),
                },
            ]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    };
    Api::<Job>::namespaced(w.admin.clone(), &w.ns.name)
        .create(&PostParams::default(), &job)
        .await
        .expect("create the run");
}

/// The values of `app` in `pod` as (cpu request, memory limit).
fn report_values(p: &kerf::cluster::Pod) -> (Option<u64>, Option<u64>) {
    let c = p
        .containers
        .iter()
        .find(|c| c.name == "app")
        .expect("the app container");
    (c.resources.cpu_request, c.resources.memory_limit)
}

#[tokio::test]
async fn a_cronjob_gets_its_job_template_changed_and_its_next_run_carries_it() {
    let w = World::new("agent-cronjob", 4000, 8192).await;
    let cronjobs = nightly(&w).await;
    let key = w.key(kerf::cluster::WorkloadKind::CronJob, "nightly");
    // A run in progress before the change.
    run(&w, &cronjobs, "nightly-first").await;
    w.pods_running(1).await;
    // The policy says in place; a CronJob's change is for its next run.
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(250, 500, 200, 400)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "the CronJob's job template applied", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == kerf::agent::state::Phase::Applied && s.operation.is_none())
    })
    .await;
    let cronjob = cronjobs.get("nightly").await.expect("the CronJob");
    let template =
        serde_json::to_value(&cronjob.spec.as_ref().expect("spec").job_template).expect("json");
    let app = &template["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        app["image"], "registry.example/report:1",
        "the rest is kept"
    );
    assert_eq!(
        app["resources"],
        json!({ "requests": { "cpu": "250m", "memory": "200Mi" },
                "limits": { "cpu": "500m", "memory": "400Mi" } })
    );
    assert_eq!(
        cronjob.spec.as_ref().expect("spec").schedule,
        "0 3 29 2 *",
        "the schedule is untouched"
    );
    let entries = cronjob.metadata.managed_fields.clone().unwrap_or_default();
    let kerf = entries
        .iter()
        .find(|e| e.manager.as_deref() == Some("kerf"))
        .expect("kerf's entry");
    assert_eq!(kerf.operation.as_deref(), Some("Apply"));
    let mut leaves = Vec::new();
    leaf_paths(
        &kerf.fields_v1.as_ref().expect("fieldsV1").0,
        String::new(),
        &mut leaves,
    );
    leaves.sort();
    let expected = resources_under(
        "f:spec.f:jobTemplate.f:spec.f:template.f:spec",
        "containers",
        "app",
    );
    assert_eq!(leaves, expected, "kerf owns exactly the resources fields");
    // The run in progress keeps its pod and its values: nothing was disrupted.
    let before = pods(&w, &key).await;
    assert_eq!(before.len(), 1, "{before:#?}");
    assert_eq!(
        report_values(&before[0]),
        (Some(500), Some(512 * 1024 * 1024))
    );
    // The next run, made from the job template as it is now, carries the new values.
    run(&w, &cronjobs, "nightly-second").await;
    let next =
        crate::support::eventually("the next run's pod", crate::support::secs(60), async || {
            let all = pods(&w, &key).await;
            all.into_iter()
                .find(|p| p.pod.name.starts_with("nightly-second"))
                .ok_or("not yet")
        })
        .await;
    assert_eq!(report_values(&next), (Some(250), Some(400 * 1024 * 1024)));
    assert_eq!(
        next.owner.as_ref().map(|o| o.to_string()),
        Some(key.to_string()),
        "a run's pod belongs to its CronJob"
    );
    w.deliver(&agent).await;
    let audit = w.audit().await;
    let applied = audit
        .iter()
        .find(|e| e["type"] == "applied")
        .unwrap_or_else(|| panic!("an applied event: {audit:#?}"));
    assert_eq!(applied["strategy"], "rollout");
    assert_eq!(applied["workload"]["kind"], "CronJob");
    assert_eq!(applied["workload"]["name"], "nightly");
}

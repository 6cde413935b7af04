//! The apply YAML the workload page copies (`GET /v1/workloads/{id}` → `apply.yaml`) is
//! what `kubectl apply --server-side --dry-run=server` sends: each kind `kerf demo` has
//! (Deployment, StatefulSet, DaemonSet) is created in the real API server with the
//! settings in force, then the copied document is applied to it as a server-side dry run
//! by the field manager the command names. The API server validates the merged object
//! and answers it with the recommended resources; nothing is stored.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{Container, PodSpec};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

use crate::support::kube::objects::POOL_LABEL;
use crate::support::kube::{control_plane, namespace};
use crate::support::{client, Demo};

/// The settings in force of one container, as a Kubernetes resources block.
fn resources_in_force(current: &Value) -> Value {
    let mut out = json!({ "requests": {}, "limits": {} });
    for (res, quantity) in [("cpu", "m"), ("memory", "")] {
        for (setting, group) in [("request", "requests"), ("limit", "limits")] {
            let s = &current[res][setting];
            if s["known"] == true && s["unset"] != true {
                let v = s["value"].as_f64().expect("value");
                out[group][res] = json!(format!("{}{quantity}", v.round() as u64));
            }
        }
    }
    out
}

/// The workload as its cluster runs it: its containers with their settings in force
/// (a sidecar in `initContainers`, restarting always), no replicas and no node to run on
/// (the API server validates; nothing needs to run).
fn object(kind: &str, ns: &str, name: &str, current: &Value) -> Value {
    let (mut init, mut containers) = (Vec::new(), Vec::new());
    for c in current.as_array().expect("current containers") {
        let mut made = json!({ "name": c["name"], "image": "registry.example/app:1", "resources": resources_in_force(c) });
        match c["role"].as_str() {
            Some("sidecar") => {
                made["restartPolicy"] = json!("Always");
                init.push(made);
            }
            Some(_) => init.push(made),
            None => containers.push(made),
        }
    }
    let template = json!({
        "metadata": { "labels": { "app": name } },
        "spec": { "nodeSelector": { POOL_LABEL: format!("{ns}-none") }, "containers": containers, "initContainers": init },
    });
    let mut spec = json!({ "selector": { "matchLabels": { "app": name } }, "template": template });
    match kind {
        "Deployment" => spec["replicas"] = json!(0),
        "StatefulSet" => {
            spec["replicas"] = json!(0);
            spec["serviceName"] = json!(name);
        }
        _ => {}
    }
    json!({ "apiVersion": "apps/v1", "kind": kind, "metadata": { "name": name, "namespace": ns }, "spec": spec })
}

/// Creates `obj` and applies `doc` to it as a server-side dry run; the pod spec the API
/// server answers, and the one it still stores.
async fn dry_run(
    admin: &Client,
    ns: &str,
    kind: &str,
    obj: Value,
    doc: &Value,
) -> (PodSpec, PodSpec) {
    let name = obj["metadata"]["name"].as_str().expect("name").to_string();
    let params = PatchParams::apply("kerf-manual").force().dry_run();
    macro_rules! run {
        ($t:ty) => {{
            let api = Api::<$t>::namespaced(admin.clone(), ns);
            let made: $t = serde_json::from_value(obj).expect("object");
            api.create(&PostParams::default(), &made)
                .await
                .expect("create");
            let answered = api
                .patch(&name, &params, &Patch::Apply(doc))
                .await
                .unwrap_or_else(|e| {
                    panic!("the API server refused the copied {kind}: {e}\n{doc:#}")
                });
            let stored = api.get(&name).await.expect("get");
            let spec = |o: $t| o.spec.and_then(|s| s.template.spec).expect("pod spec");
            (spec(answered), spec(stored))
        }};
    }
    match kind {
        "Deployment" => run!(Deployment),
        "StatefulSet" => run!(StatefulSet),
        "DaemonSet" => run!(DaemonSet),
        other => panic!("no {other} in the demo"),
    }
}

/// The container `name`, an app container or one of `initContainers`.
fn container<'a>(spec: &'a PodSpec, name: &str) -> &'a Container {
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .find(|c| c.name == name)
        .expect("the container")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_copied_apply_yaml_passes_a_server_side_dry_run_for_every_kind_the_demo_has() {
    let demo = Demo::start(None);
    let (http, base, token) = (client(), demo.kerf.url(""), demo.token.clone());
    let all = demo.api().analysed().await;
    let plane = control_plane();
    let admin = plane.admin().await;
    let ns = namespace(&admin, "apply-dry-run").await;
    let mut tried = Vec::new();
    let mut sidecars = 0;
    for kind in ["Deployment", "StatefulSet", "DaemonSet"] {
        let w = all
            .iter()
            .find(|w| w["kind"] == kind && w["hasRecommendation"] == true)
            .unwrap_or_else(|| panic!("a {kind} with a recommendation in the demo"));
        let id = w["id"].as_str().expect("id");
        let detail: Value = http
            .get(format!("{base}/v1/workloads/{id}"))
            .bearer_auth(&token)
            .send()
            .await
            .expect("detail")
            .json()
            .await
            .expect("json");
        let yaml = detail["apply"]["yaml"].as_str().expect("apply yaml");
        let command = detail["apply"]["command"].as_str().expect("command");
        assert!(command.contains("--field-manager=kerf-manual") && command.contains(yaml));
        let mut doc: Value = yaml_serde::from_str(yaml).expect("the copied YAML parses");
        // The same document, in this test's namespace (the demo's are not in this cluster).
        doc["metadata"]["namespace"] = json!(ns.name);
        let name = w["name"].as_str().expect("name");
        let obj = object(kind, &ns.name, name, &detail["current"]);
        let (answered, stored) = dry_run(&admin, &ns.name, kind, obj, &doc).await;
        let pod = &doc["spec"]["template"]["spec"];
        let listed = |list: &str| pod[list].as_array().cloned().unwrap_or_default();
        let changed = [listed("initContainers"), listed("containers")].concat();
        assert!(!changed.is_empty(), "{doc:#}");
        if detail["current"]
            .as_array()
            .expect("current")
            .iter()
            .any(|c| c["role"] == "sidecar")
        {
            sidecars += 1;
        }
        for c in &changed {
            let cname = c["name"].as_str().expect("container name");
            let got = container(&answered, cname)
                .resources
                .clone()
                .expect("resources");
            for group in ["requests", "limits"] {
                let want = c["resources"][group]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                let have = if group == "requests" {
                    &got.requests
                } else {
                    &got.limits
                };
                for (res, q) in want {
                    let value = have.as_ref().and_then(|m| m.get(&res)).map(|q| q.0.clone());
                    assert_eq!(value.as_deref(), q.as_str(), "{kind} {cname} {group}.{res}");
                }
            }
            // A dry run stores nothing: the cluster still runs the settings in force.
            let kept = container(&stored, cname)
                .resources
                .clone()
                .expect("resources");
            assert_ne!(kept, got, "{kind} {cname}: the dry run changed nothing");
        }
        tried.push(format!(
            "{kind} {}/{name}",
            w["namespace"].as_str().unwrap_or("")
        ));
    }
    assert_eq!(tried.len(), 3, "{tried:?}");
    assert!(
        sidecars >= 1,
        "the demo's Deployment runs a native sidecar: {tried:?}"
    );
}

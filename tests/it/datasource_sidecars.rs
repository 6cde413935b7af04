//! Native sidecars and init containers through a real Prometheus (issue 31, done means
//! 2): kube-state-metrics exports their requests and limits as
//! `kube_pod_init_container_resource_*` and tells a sidecar by `restart_policy="Always"`
//! on `kube_pod_init_container_info`. The hub reads a sidecar's settings as set (so the
//! engine never proposes "initialize unset setting" for it), names its role, and counts
//! the pod's effective request with it. A sidecar's OOM kill, of which kube-state-metrics
//! exports the reason and the restarts but no time, is inferred from its restarts.

use std::collections::BTreeMap;

use kerf::analysis::{analyze, default_policy, Input, Resource, INPUT_SCHEMA_VERSION};
use kerf::datasource::prometheus::ClientAuth;
use kerf::datasource::Source;
use kerf::workload::ContainerRole;

use crate::support::prometheus::{OpenMetrics, Prometheus};
use crate::support::series::{
    cadvisor, each, ksm_deployment, ksm_pod, pod, scope, source, END, MIB, MIN, START, WINDOW,
};

/// `mesh/shop`: one pod whose app runs beside an `istio-proxy` sidecar (400m, 512 MiB
/// requested; it uses 50m and 100 MiB), after an `istio-init` init container that ran
/// for its first minute.
fn meshed() -> OpenMetrics {
    let mut om = OpenMetrics::new();
    let from = START + 10 * MIN;
    let p = pod("mesh", "shop", "shop-r1", "aaaaa", from, END);
    ksm_deployment(&mut om, "mesh", "shop", "shop", 1.0, &["shop-r1"]);
    ksm_pod(&mut om, &p, "shop", 0.5, 256.0 * MIB);
    cadvisor(&mut om, &p, "/app", from, END, 0.2, 200.0 * MIB, None);
    let base = [
        ("cluster", "mesh"),
        ("namespace", "shop"),
        ("pod", p.name.as_str()),
        ("uid", p.uid.as_str()),
    ];
    for (container, policy) in [("istio-init", None), ("istio-proxy", Some("Always"))] {
        let mut info = base.to_vec();
        info.push(("container", container));
        if let Some(policy) = policy {
            info.push(("restart_policy", policy));
        }
        for t in each(from, END + 1) {
            om.sample("kube_pod_init_container_info", &info, 1.0, t);
        }
    }
    let settings = [
        ("istio-proxy", "requests", "cpu", 0.4),
        ("istio-proxy", "requests", "memory", 512.0 * MIB),
        ("istio-proxy", "limits", "memory", 1024.0 * MIB),
        ("istio-init", "requests", "cpu", 0.1),
        ("istio-init", "requests", "memory", 64.0 * MIB),
    ];
    for (container, group, resource, value) in settings {
        let mut l = base.to_vec();
        l.extend([("container", container), ("resource", resource)]);
        let name = format!("kube_pod_init_container_resource_{group}");
        for t in each(from, END + 1) {
            om.sample(&name, &l, value, t);
        }
    }
    // cAdvisor names a sidecar's and an init container's cgroups like any container's.
    for (container, to, cores, memory) in [
        ("istio-proxy", END, 0.05, 100.0 * MIB),
        ("istio-init", from + MIN, 0.1, 30.0 * MIB),
    ] {
        let l = [
            ("cluster", "mesh"),
            ("namespace", "shop"),
            ("pod", p.name.as_str()),
            ("container", container),
            ("id", container),
        ];
        let mut counter = 0.0;
        for t in each(from, to + 1) {
            om.sample("container_cpu_usage_seconds_total", &l, counter, t);
            om.sample("container_memory_working_set_bytes", &l, memory, t);
            counter += cores * 30.0;
        }
    }
    om
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sidecars_settings_are_read_as_set_and_its_role_is_named() {
    let prom = Prometheus::with_data(&meshed(), false);
    let collected = source(&prom.url, ClientAuth::None)
        .collect(&scope("mesh"), WINDOW)
        .await
        .expect("collect");
    let shop = collected
        .workloads
        .iter()
        .find(|w| w.name == "shop")
        .expect("the workload");
    assert_eq!(
        shop.roles,
        BTreeMap::from([
            ("istio-init".to_string(), ContainerRole::Init),
            ("istio-proxy".to_string(), ContainerRole::Sidecar),
        ]),
        "the app is an app container; the others are named by their info series"
    );
    let container = |name: &str| {
        collected
            .input
            .containers
            .iter()
            .find(|c| c.target.name == "shop" && c.target.container == name)
            .unwrap_or_else(|| panic!("container {name}"))
    };
    let proxy = container("istio-proxy");
    assert!(proxy.cpu.current_request.available && !proxy.cpu.current_request.unset);
    assert_eq!(proxy.cpu.current_request.value, 400.0, "millicores");
    assert_eq!(proxy.memory.current_request.value, 512.0 * MIB);
    assert_eq!(proxy.memory.current_limit.value, 1024.0 * MIB);
    assert!(
        proxy.cpu.current_limit.available && proxy.cpu.current_limit.unset,
        "a limit it does not set is known unset"
    );
    let init = container("istio-init");
    assert_eq!(init.cpu.current_request.value, 100.0);
    // The engine sizes the sidecar from its use, against the request it has: a change
    // bounded by the material-change rules, never "initialize unset setting".
    let input = Input {
        schema_version: INPUT_SCHEMA_VERSION.into(),
        evaluation_time: WINDOW.end_ms,
        window_start: WINDOW.start_ms,
        containers: vec![proxy.clone()],
    };
    let out = analyze(&input, &default_policy()).expect("analyze");
    let cpu = out
        .results
        .iter()
        .find(|r| r.resource == Resource::Cpu)
        .expect("the sidecar's CPU result");
    let request = cpu
        .recommendations
        .iter()
        .find(|r| r.setting == kerf::analysis::Setting::Requests)
        .expect("a CPU request recommendation: 400m requested, 50m used");
    assert!(!request.current_unset);
    assert_eq!(request.current_value, 400.0);
    assert!(request.suggested_value < 400.0);
    let trace = serde_json::to_value(&cpu.decision_trace).expect("trace");
    let rules: Vec<&str> = trace["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .find(|s| s["setting"] == "requests")
        .expect("the request's trace")["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["rule"].as_str())
        .collect();
    assert!(rules.contains(&"material change"), "{rules:?}");
    assert!(!rules.contains(&"initialize unset setting"), "{rules:?}");
}

/// `meshed()`, with the app OOM-killed at 3 h (kube-state-metrics exports its
/// termination time) and the `istio-proxy` sidecar at 4 h (it exports none of an init
/// container's: only its last termination reason and its restarts).
fn meshed_with_kills() -> (OpenMetrics, i64, i64) {
    let mut om = meshed();
    let p = pod("mesh", "shop", "shop-r1", "aaaaa", START + 10 * MIN, END);
    let (app_kill, proxy_kill) = (START + 180 * MIN, START + 240 * MIN + 10_000);
    let (name, uid) = (p.name.as_str(), p.uid.as_str());
    let base = |container: &'static str| {
        vec![
            ("cluster", "mesh"),
            ("namespace", "shop"),
            ("pod", name),
            ("uid", uid),
            ("container", container),
        ]
    };
    let mut reason = base("app");
    reason.push(("reason", "OOMKilled"));
    for t in each(app_kill, END + 1) {
        om.sample(
            "kube_pod_container_status_last_terminated_reason",
            &reason,
            1.0,
            t,
        );
        om.sample(
            "kube_pod_container_status_last_terminated_timestamp",
            &base("app"),
            (app_kill / 1000) as f64,
            t,
        );
    }
    let mut reason = base("istio-proxy");
    reason.push(("reason", "OOMKilled"));
    for t in each(proxy_kill, END + 1) {
        om.sample(
            "kube_pod_init_container_status_last_terminated_reason",
            &reason,
            1.0,
            t,
        );
    }
    for t in each(START + 10 * MIN, END + 1) {
        let app = if t >= app_kill { 1.0 } else { 0.0 };
        let proxy = if t >= proxy_kill { 1.0 } else { 0.0 };
        om.sample(
            "kube_pod_container_status_restarts_total",
            &base("app"),
            app,
            t,
        );
        om.sample(
            "kube_pod_init_container_status_restarts_total",
            &base("istio-proxy"),
            proxy,
            t,
        );
    }
    (om, app_kill, proxy_kill)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sidecars_oom_kill_is_read_from_its_restarts_beside_the_apps_timed_one() {
    let (om, app_kill, proxy_kill) = meshed_with_kills();
    let prom = Prometheus::with_data(&om, false);
    let collected = source(&prom.url, ClientAuth::None)
        .collect(&scope("mesh"), WINDOW)
        .await
        .expect("collect");
    let kills = |name: &str| {
        collected
            .input
            .containers
            .iter()
            .find(|c| c.target.name == "shop" && c.target.container == name)
            .unwrap_or_else(|| panic!("container {name}"))
            .oom_kills
            .clone()
    };
    let app = kills("app");
    assert_eq!(app.len(), 1, "{app:?}");
    assert_eq!(app[0].timestamp, app_kill, "its exported termination time");
    let proxy = kills("istio-proxy");
    assert_eq!(proxy.len(), 1, "{proxy:?}");
    assert!(proxy[0].id.ends_with("inferred"), "{}", proxy[0].id);
    assert!(
        proxy[0].timestamp >= proxy_kill && proxy[0].timestamp <= proxy_kill + 60_000,
        "within a step after the kill: {} vs {proxy_kill}",
        proxy[0].timestamp
    );
    assert_eq!(
        proxy[0].memory_limit_bytes,
        1024.0 * MIB,
        "the sidecar's own limit when it was killed"
    );
    assert!(kills("istio-init").is_empty());
}

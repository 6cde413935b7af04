//! Collection against a real Prometheus filled by `promtool` backfill: counter resets,
//! container restarts (new series), a rollout with its previous release as fallback (its
//! start the new ReplicaSet's creation, from kube_replicaset_created), an
//! OOM kill, two clusters behind one backend, missing kube-state-metrics, and basic auth.

use kerf::analysis::{analyze, default_policy, Reason, Resource, Setting};
use kerf::datasource::plan::plan_groups;
use kerf::datasource::prometheus::{ClientAuth, ClientConfig, PrometheusSource};
use kerf::datasource::{ClusterScope, DatasourceError, Source, Window};

use crate::support::prometheus::{OpenMetrics, Prometheus, BASIC_AUTH_PASSWORD, BASIC_AUTH_USER};

pub(crate) const END: i64 = 1_760_000_000_000 - 1_760_000_000_000 % 60_000;
pub(crate) const START: i64 = END - 6 * 3_600_000;
const MIN: i64 = 60_000;
const MIB: f64 = 1024.0 * 1024.0;

struct Pod<'a> {
    cluster: &'a str,
    ns: &'a str,
    name: String,
    uid: String,
    rs: &'a str,
    from: i64,
    to: i64,
}

/// Samples every 30 s in [from, to).
fn each(from: i64, to: i64) -> impl Iterator<Item = i64> {
    (0..)
        .map(move |i| from + i * 30_000)
        .take_while(move |t| *t < to)
}

fn ksm_pod(om: &mut OpenMetrics, p: &Pod, deployment: &str, cpu_req: f64, mem_limit: f64) {
    let base = [
        ("cluster", p.cluster),
        ("namespace", p.ns),
        ("pod", p.name.as_str()),
        ("uid", p.uid.as_str()),
    ];
    let mut owner = base.to_vec();
    owner.extend([
        ("owner_kind", "ReplicaSet"),
        ("owner_name", p.rs),
        ("owner_is_controller", "true"),
    ]);
    for t in each(p.from, p.to + 1) {
        om.sample("kube_pod_owner", &owner, 1.0, t);
    }
    for t in each(p.from, p.to + 1) {
        om.sample("kube_pod_created", &base, (p.from / 1000) as f64, t);
    }
    for (metric, resource, value) in [
        ("kube_pod_container_resource_requests", "cpu", cpu_req),
        ("kube_pod_container_resource_requests", "memory", mem_limit),
        ("kube_pod_container_resource_limits", "memory", mem_limit),
    ] {
        let mut l = base.to_vec();
        l.extend([("container", "app"), ("resource", resource)]);
        for t in each(p.from, p.to + 1) {
            om.sample(metric, &l, value, t);
        }
    }
    // Pod labels as KSM sanitizes them; the template hash differs per release.
    let mut labels = base.to_vec();
    labels.extend([
        ("label_app", deployment),
        ("label_version", p.rs),
        ("label_pod_template_hash", p.rs),
    ]);
    for t in each(p.from, p.to + 1) {
        om.sample("kube_pod_labels", &labels, 1.0, t);
    }
}

fn ksm_deployment(
    om: &mut OpenMetrics,
    cluster: &str,
    ns: &str,
    name: &str,
    replicas: f64,
    rs: &[&str],
) {
    let l = [
        ("cluster", cluster),
        ("namespace", ns),
        ("deployment", name),
    ];
    for t in each(START - 60 * MIN, END + 1) {
        om.sample(
            "kube_deployment_created",
            &l,
            ((START - 24 * 60 * MIN) / 1000) as f64,
            t,
        );
    }
    for t in each(START - 60 * MIN, END + 1) {
        om.sample("kube_deployment_spec_replicas", &l, replicas, t);
    }
    for r in rs {
        let l = [
            ("cluster", cluster),
            ("namespace", ns),
            ("replicaset", *r),
            ("owner_kind", "Deployment"),
            ("owner_name", name),
        ];
        for t in each(START - 60 * MIN, END + 1) {
            om.sample("kube_replicaset_owner", &l, 1.0, t);
        }
    }
}

/// cAdvisor series of one container instance; `cores` per second, counter reset at `reset`.
#[allow(clippy::too_many_arguments)] // one line per fixture series reads best
fn cadvisor(
    om: &mut OpenMetrics,
    p: &Pod,
    id: &str,
    from: i64,
    to: i64,
    cores: f64,
    mem: f64,
    reset: Option<i64>,
) {
    let l = [
        ("cluster", p.cluster),
        ("namespace", p.ns),
        ("pod", p.name.as_str()),
        ("container", "app"),
        ("id", id),
    ];
    let mut counter = 0.0;
    let mut last = from;
    for t in each(from, to + 1) {
        counter += cores * (t - last) as f64 / 1000.0;
        if reset.is_some_and(|r| last < r && t >= r) {
            counter = cores * 5.0;
        }
        last = t;
        om.sample("container_cpu_usage_seconds_total", &l, counter, t);
    }
    for t in each(from, to + 1) {
        om.sample("container_memory_working_set_bytes", &l, mem, t);
    }
}

fn pod<'a>(
    cluster: &'a str,
    ns: &'a str,
    rs: &'a str,
    suffix: &str,
    from: i64,
    to: i64,
) -> Pod<'a> {
    Pod {
        cluster,
        ns,
        name: format!("{rs}-{suffix}"),
        uid: format!("{cluster}-{rs}-{suffix}-uid"),
        rs,
        from,
        to,
    }
}

pub(crate) fn fixture() -> OpenMetrics {
    let mut om = OpenMetrics::new();
    let rollout = END - 40 * MIN;
    // east shop/api: release api-old until 40 minutes ago, then api-new. Its own labels
    // are exported (the other workloads' are not: their pods' labels stand in).
    ksm_deployment(&mut om, "east", "shop", "api", 2.0, &["api-old", "api-new"]);
    // The new ReplicaSet was created two minutes before its pods: its creation, not its
    // first pod's, is the release start.
    let rs_new = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("replicaset", "api-new"),
    ];
    for t in each(rollout - 2 * MIN, END + 1) {
        om.sample(
            "kube_replicaset_created",
            &rs_new,
            ((rollout - 2 * MIN) / 1000) as f64,
            t,
        );
    }
    let api_labels = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("deployment", "api"),
        ("label_app_kubernetes_io_name", "api"),
        ("label_tier", "web"),
    ];
    for t in each(START - 60 * MIN, END + 1) {
        om.sample("kube_deployment_labels", &api_labels, 1.0, t);
    }
    for (rs, from, to, cores) in [
        ("api-old", START - 60 * MIN, rollout, 0.2),
        ("api-new", rollout, END, 0.3),
    ] {
        for s in ["aaaaa", "bbbbb"] {
            let p = pod("east", "shop", rs, s, from, to);
            ksm_pod(&mut om, &p, "api", 1.0, 512.0 * MIB);
            cadvisor(
                &mut om,
                &p,
                &format!("/kubepods/pod{}/c1", p.uid),
                from,
                to,
                cores,
                200.0 * MIB,
                None,
            );
        }
    }
    // east shop/worker: one pod; a counter reset 4 h before the end, a restart 3 h before.
    ksm_deployment(&mut om, "east", "shop", "worker", 1.0, &["worker-abc"]);
    let w = pod("east", "shop", "worker-abc", "xxxxx", START - 60 * MIN, END);
    ksm_pod(&mut om, &w, "worker", 2.0, 1024.0 * MIB);
    cadvisor(
        &mut om,
        &w,
        "/kubepods/podw/c1",
        w.from,
        END - 180 * MIN,
        0.5,
        300.0 * MIB,
        Some(END - 240 * MIN),
    );
    cadvisor(
        &mut om,
        &w,
        "/kubepods/podw/c2",
        END - 180 * MIN + 30_000,
        END,
        0.5,
        300.0 * MIB,
        None,
    );
    // east payments/ledger: OOM-killed at its 256 MiB limit two hours ago, restarted.
    ksm_deployment(&mut om, "east", "payments", "ledger", 1.0, &["ledger-r1"]);
    let l = pod(
        "east",
        "payments",
        "ledger-r1",
        "zzzzz",
        START - 60 * MIN,
        END,
    );
    ksm_pod(&mut om, &l, "ledger", 0.25, 256.0 * MIB);
    let oom = END - 120 * MIN;
    cadvisor(
        &mut om,
        &l,
        "/kubepods/podl/c1",
        l.from,
        oom,
        0.1,
        250.0 * MIB,
        None,
    );
    cadvisor(
        &mut om,
        &l,
        "/kubepods/podl/c2",
        oom + 30_000,
        END,
        0.1,
        180.0 * MIB,
        None,
    );
    let ids = [
        ("cluster", "east"),
        ("namespace", "payments"),
        ("pod", l.name.as_str()),
        ("uid", l.uid.as_str()),
        ("container", "app"),
    ];
    let mut reason = ids.to_vec();
    reason.push(("reason", "OOMKilled"));
    for t in each(oom, END + 1) {
        om.sample(
            "kube_pod_container_status_last_terminated_reason",
            &reason,
            1.0,
            t,
        );
    }
    for t in each(oom, END + 1) {
        om.sample(
            "kube_pod_container_status_last_terminated_timestamp",
            &ids,
            (oom / 1000) as f64,
            t,
        );
    }
    // west shop/api: same names, another cluster label, other numbers.
    ksm_deployment(&mut om, "west", "shop", "api", 1.0, &["api-west"]);
    let p = pod("west", "shop", "api-west", "wwwww", START - 60 * MIN, END);
    ksm_pod(&mut om, &p, "api", 0.5, 256.0 * MIB);
    cadvisor(
        &mut om,
        &p,
        "/kubepods/podwest/c1",
        p.from,
        END,
        0.05,
        100.0 * MIB,
        None,
    );
    // bare: cAdvisor only, no kube-state-metrics.
    let b = pod(
        "bare",
        "shop",
        "web-7d9f8c6b5d",
        "abcde",
        START - 60 * MIN,
        END,
    );
    cadvisor(
        &mut om,
        &b,
        "/kubepods/podbare/c1",
        b.from,
        END,
        0.1,
        100.0 * MIB,
        None,
    );
    om
}

pub(crate) fn source(url: &str, auth: ClientAuth) -> PrometheusSource {
    PrometheusSource::new(ClientConfig {
        url: url.to_string(),
        auth,
        headers: vec![("X-Scope-OrgID".into(), "tenant-a".into())],
        ca_pem: None,
        insecure_skip_verify: false,
        timeout: std::time::Duration::from_secs(30),
        max_concurrent_queries: 4,
    })
    .expect("source")
}

pub(crate) fn scope(cluster: &str) -> ClusterScope {
    ClusterScope {
        cluster: cluster.into(),
        selector_label: Some("cluster".into()),
        selector_value: Some(cluster.into()),
    }
}

pub(crate) const WINDOW: Window = Window {
    end_ms: END,
    start_ms: START,
    step_seconds: 60,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_collection_maps_resets_restarts_rollouts_ooms_clusters_and_missing_ksm() {
    let prom = Prometheus::with_data(&fixture(), false);
    let src = source(&prom.url, ClientAuth::None);
    let east = src
        .collect(&scope("east"), WINDOW)
        .await
        .expect("collect east");
    assert!(
        east.stats.queries > 0 && east.stats.queries < 20,
        "{:?}",
        east.stats
    );
    let names: Vec<&str> = east.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(
        names,
        ["ledger", "api", "worker"],
        "one entry per workload, never per pod"
    );
    let labels = |name: &str| {
        let w = east.workloads.iter().find(|w| w.name == name).expect(name);
        let pairs = w.labels.iter().map(|(k, v)| format!("{k}={v}"));
        pairs.collect::<Vec<_>>()
    };
    assert_eq!(labels("api"), ["app_kubernetes_io_name=api", "tier=web"]);
    assert_eq!(
        labels("worker"),
        ["app=worker", "version=worker-abc"],
        "pod labels without the template hash"
    );
    let out = analyze(&east.input, &default_policy()).expect("analyze east");
    let find = |name: &str| {
        east.input
            .containers
            .iter()
            .find(|c| c.target.name == name)
            .expect(name)
    };
    let result = |name: &str, r: Resource| {
        out.results
            .iter()
            .find(|x| x.target.name == name && x.resource == r)
            .expect(name)
    };

    // Rollout: api-new is current, api-old is the previous release and supplies usage.
    let api = find("api");
    assert_eq!(api.target.release, "api-new");
    assert!(api.identity.available && !api.identity.ambiguous);
    assert_eq!(
        api.identity.release_started_at,
        END - 42 * MIN,
        "kube_replicaset_created, not the first pod's creation"
    );
    assert_eq!(api.previous_releases.len(), 1);
    assert_eq!(api.previous_releases[0].release, "api-old");
    assert_eq!((api.inventory.eligible, api.inventory.observed), (2, 2));
    assert_eq!(api.cpu.current_request.value, 1000.0);
    let api_cpu = result("api", Resource::Cpu);
    assert!(
        api_cpu.notices.contains(&Reason::PreviousReleaseUsage),
        "{}",
        serde_json::to_string(api_cpu).unwrap_or_default()
    );
    let req = api_cpu
        .recommendations
        .iter()
        .find(|r| r.setting == Setting::Requests)
        .expect("cpu request");
    // 200 m of the previous release × the default CPU headroom of 3 (the new release's
    // 300 m would give 900).
    assert!(
        (req.suggested_value - 600.0).abs() < 40.0,
        "{}",
        req.suggested_value
    );

    // Restart: two series with distinct IDs for one pod; the counter reset does not
    // inflate usage (the engine rates raw counters; 0.5 cores steady).
    let worker = find("worker");
    let ids: Vec<&str> = worker.cpu.series.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_ne!(ids[0], ids[1]);
    assert!(worker
        .cpu
        .series
        .iter()
        .all(|s| s.pod_uid == "east-worker-abc-xxxxx-uid"));
    let worker_cpu = result("worker", Resource::Cpu);
    let usage = worker_cpu.evidence.aggregated_usage.value;
    assert!((usage - 500.0).abs() < 30.0, "aggregated CPU {usage}");

    // OOM: one event, joined with its timestamp, carrying the pod's limit; memory grows.
    let ledger = find("ledger");
    assert_eq!(ledger.oom_kills.len(), 1);
    assert_eq!(ledger.oom_kills[0].timestamp, END - 120 * MIN);
    assert_eq!(ledger.oom_kills[0].memory_limit_bytes, 256.0 * MIB);
    let ledger_mem = result("ledger", Resource::Memory);
    assert!(ledger_mem.notices.contains(&Reason::OomKillDetected));
    let mem_req = ledger_mem
        .recommendations
        .iter()
        .find(|r| r.setting == Setting::Requests)
        .expect("memory request");
    assert!(
        mem_req.suggested_value >= 384.0 * MIB,
        "{}",
        mem_req.suggested_value
    );

    // Grouped collection: one workload per group (its pods named in the selector) maps
    // exactly what the whole-cluster collection maps.
    let mut plan = src.plan(&scope("east"), WINDOW).await.expect("plan");
    plan.groups = plan_groups(&plan.pods, 1);
    assert_eq!(plan.groups.len(), 3, "{:?}", plan.groups);
    assert!(
        plan.groups.iter().any(|g| !g.pods.is_empty()),
        "shop is split"
    );
    let mut grouped = Vec::new();
    for index in 0..plan.groups.len() {
        let c = src.collect_group(&plan, index).await.expect("group");
        assert_eq!(c.workloads.len(), 1, "a workload is never split");
        grouped.extend(c.input.containers);
    }
    let shape = |cs: &[kerf::analysis::ContainerObservation]| {
        let mut v: Vec<(String, Vec<(String, usize)>)> = cs
            .iter()
            .map(|c| {
                let series = c.cpu.series.iter().chain(&c.memory.series);
                let ids = series.map(|s| (s.id.clone(), s.samples.len())).collect();
                (c.target.name.clone(), ids)
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(shape(&grouped), shape(&east.input.containers));

    // Charts read one container of one workload, with the collection's series.
    let chart = src
        .usage(
            &scope("east"),
            ("shop", "Deployment", "api"),
            "app",
            kerf::datasource::UsageResource::Cpu,
            WINDOW,
        )
        .await
        .expect("chart");
    let chart_ids: Vec<&str> = chart.iter().map(|s| s.id.as_str()).collect();
    let api_ids: Vec<&str> = api.cpu.series.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(chart_ids, api_ids);

    // Two clusters behind one backend: west sees only its own api.
    let west = src
        .collect(&scope("west"), WINDOW)
        .await
        .expect("collect west");
    assert_eq!(west.input.containers.len(), 1);
    assert_eq!(west.input.containers[0].target.release, "api-west");
    assert_eq!(west.input.containers[0].cpu.current_request.value, 500.0);

    // No kube-state-metrics: usage is there, everything else is honestly unknown.
    let bare = src
        .collect(&scope("bare"), WINDOW)
        .await
        .expect("collect bare");
    assert_eq!(bare.input.containers.len(), 1);
    let c = &bare.input.containers[0];
    assert!(!c.identity.available && !c.inventory.available);
    assert!(!c.cpu.current_request.available && !c.memory.current_limit.available);
    assert_eq!(c.cpu.current_request.value, 0.0);
    assert!(!c.cpu.series.is_empty());
    let bare_out = analyze(&bare.input, &default_policy()).expect("analyze bare");
    assert!(bare_out
        .results
        .iter()
        .all(|r| r.recommendations.is_empty()));
    assert!(bare_out
        .results
        .iter()
        .all(|r| r.data_quality.reasons.contains(&Reason::MissingIdentity)));

    // The test endpoint names what bare lacks.
    let report = src.test(&scope("bare")).await.expect("test");
    assert!(report.reachable && report.authenticated);
    assert!(
        report.missing_metrics.iter().any(|m| m == "kube_pod_owner"),
        "{report:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_basic_auth_gets_the_credentials_and_a_wrong_password_is_unauthorized() {
    let mut om = OpenMetrics::new();
    let p = pod("east", "shop", "api-new", "aaaaa", START, END);
    ksm_deployment(&mut om, "east", "shop", "api", 1.0, &["api-new"]);
    ksm_pod(&mut om, &p, "api", 1.0, 512.0 * MIB);
    cadvisor(&mut om, &p, "/c1", START, END, 0.2, 100.0 * MIB, None);
    let prom = Prometheus::with_data(&om, true);
    let good = source(
        &prom.url,
        ClientAuth::Basic {
            username: BASIC_AUTH_USER.into(),
            password: BASIC_AUTH_PASSWORD.into(),
        },
    );
    let c = good
        .collect(&scope("east"), WINDOW)
        .await
        .expect("authenticated collect");
    assert_eq!(c.input.containers.len(), 1);
    let bad = source(
        &prom.url,
        ClientAuth::Basic {
            username: BASIC_AUTH_USER.into(),
            password: "wrong".into(),
        },
    );
    let err = bad
        .collect(&scope("east"), WINDOW)
        .await
        .expect_err("wrong password");
    assert!(matches!(err, DatasourceError::Unauthorized(401)), "{err}");
    assert!(!err.to_string().contains("wrong"));
    let report = bad.test(&scope("east")).await.expect("test");
    assert!(report.reachable && !report.authenticated);
    let none = source(&prom.url, ClientAuth::None);
    assert!(matches!(
        none.collect(&scope("east"), WINDOW).await,
        Err(DatasourceError::Unauthorized(401))
    ));
}

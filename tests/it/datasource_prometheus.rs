//! Collection against a real Prometheus filled by `promtool` backfill: counter resets,
//! container restarts (new series), a rollout with its previous release as fallback (its
//! start the new ReplicaSet's creation, from kube_replicaset_created), an
//! OOM kill, two clusters behind one backend, missing kube-state-metrics, and basic auth.

use kerf::analysis::{analyze, default_policy, Reason, Resource, Setting};
use kerf::datasource::plan::plan_groups;
use kerf::datasource::prometheus::ClientAuth;
use kerf::datasource::{DatasourceError, Source};

use crate::support::prometheus::{OpenMetrics, Prometheus, BASIC_AUTH_PASSWORD, BASIC_AUTH_USER};
use crate::support::series::{
    cadvisor, fixture, ksm_deployment, ksm_pod, pod, scope, source, END, MIB, MIN, START, WINDOW,
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
            &kerf::workload::WorkloadKey::new("shop", "Deployment".into(), "api"),
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

//! CronJobs and bare Jobs through a real Prometheus (issue 31, done means 2). Each run of
//! `batch/nightly` is a Job that `kube_job_owner` gives to the CronJob; its pods are the
//! Job's. The hub makes one workload of all the runs (one release, their usage pooled),
//! reads the settings of the latest run although it finished before the window end, and
//! counts that run's pods as the inventory. The engine then sizes it under the batch
//! evidence rules (`kerf::runs::batch`), where the rules made for workloads that never
//! stop would call its usage stale and sparse. A Job without a CronJob is a workload of
//! its own (recommended, never applied).

use kerf::analysis::{analyze, default_policy, Input, Resource, Setting, INPUT_SCHEMA_VERSION};
use kerf::datasource::prometheus::ClientAuth;
use kerf::datasource::Source;

use crate::support::prometheus::{OpenMetrics, Prometheus};
use crate::support::series::{each, scope, source, END, MIB, MIN, START, WINDOW};

const RUNS: i64 = 6;
/// The fifth run (index 2) peaks at 300 MiB; the others at 200 MiB.
const PEAK_RUN: i64 = 2;

/// A run's (from, to): hourly, 20 minutes each, the last one done 35 minutes before the
/// window end.
fn run_span(i: i64) -> (i64, i64) {
    let from = START + i * 60 * MIN + 5 * MIN;
    (from, from + 20 * MIN)
}

/// How long a failed Job's pod stays (the Job keeps it for its status).
const FAILED_KEPT: i64 = 15 * MIN;

/// One pod of Job `job` (owned by `owner`, a CronJob, or none) over [from, to]: its
/// kube-state-metrics series and its cAdvisor usage. With `oom`, its container was
/// OOM-killed at `to` and, `restartPolicy: Never`, the pod stays failed a while.
fn job_pod(
    om: &mut OpenMetrics,
    job: &str,
    owner: Option<&str>,
    (from, to): (i64, i64),
    (mem, oom): (f64, bool),
) {
    let kept = if oom { to + FAILED_KEPT } else { to };
    let pod = format!("{job}-x7k2q");
    let uid = format!("{job}-uid");
    let base = [
        ("cluster", "batch"),
        ("namespace", "reports"),
        ("pod", pod.as_str()),
        ("uid", uid.as_str()),
    ];
    let mut owned = base.to_vec();
    owned.extend([
        ("owner_kind", "Job"),
        ("owner_name", job),
        ("owner_is_controller", "true"),
    ]);
    let job_owner = [
        ("cluster", "batch"),
        ("namespace", "reports"),
        ("job_name", job),
        ("owner_kind", owner.map_or("<none>", |_| "CronJob")),
        ("owner_name", owner.unwrap_or("<none>")),
        ("owner_is_controller", owner.map_or("<none>", |_| "true")),
    ];
    for t in each(from, kept + 1) {
        om.sample("kube_pod_owner", &owned, 1.0, t);
        om.sample("kube_pod_created", &base, (from / 1000) as f64, t);
        om.sample("kube_job_owner", &job_owner, 1.0, t);
    }
    if oom {
        let mut reason = base.to_vec();
        reason.extend([("container", "app"), ("reason", "OOMKilled")]);
        // Scraped 20 s after the kill, then while the failed pod is kept.
        for t in each(to + 20_000, kept + 1) {
            om.sample(
                "kube_pod_container_status_terminated_reason",
                &reason,
                1.0,
                t,
            );
        }
    }
    for (metric, resource, value) in [
        ("kube_pod_container_resource_requests", "cpu", 0.5),
        (
            "kube_pod_container_resource_requests",
            "memory",
            512.0 * MIB,
        ),
        ("kube_pod_container_resource_limits", "memory", 512.0 * MIB),
    ] {
        let mut l = base.to_vec();
        l.extend([("container", "app"), ("resource", resource)]);
        for t in each(from, kept + 1) {
            om.sample(metric, &l, value, t);
        }
    }
    let usage = [
        ("cluster", "batch"),
        ("namespace", "reports"),
        ("pod", pod.as_str()),
        ("container", "app"),
        ("id", uid.as_str()),
    ];
    let mut counter = 0.0;
    for t in each(from, to + 1) {
        om.sample("container_cpu_usage_seconds_total", &usage, counter, t);
        om.sample("container_memory_working_set_bytes", &usage, mem, t);
        counter += 0.3 * 30.0;
    }
}

fn batch() -> OpenMetrics {
    batch_with(false)
}

/// When the OOM-killed run of [`batch_with`] started (between the first two runs).
const OOM_RUN_FROM: i64 = START + 27 * MIN;

/// The runs of [`batch`]; with `oom`, one more run between the first two, OOM-killed
/// at its 512 MiB limit after 10 minutes.
fn batch_with(oom: bool) -> OpenMetrics {
    let mut om = OpenMetrics::new();
    let created = [
        ("cluster", "batch"),
        ("namespace", "reports"),
        ("cronjob", "nightly"),
    ];
    for t in each(START - 60 * MIN, END + 1) {
        om.sample(
            "kube_cronjob_created",
            &created,
            ((START - 86_400_000) / 1000) as f64,
            t,
        );
    }
    for i in 0..RUNS {
        let mem = if i == PEAK_RUN { 300.0 } else { 200.0 } * MIB;
        let job = format!("nightly-{}", 29_000_000 + i);
        job_pod(&mut om, &job, Some("nightly"), run_span(i), (mem, false));
    }
    if oom {
        let span = (OOM_RUN_FROM, OOM_RUN_FROM + 10 * MIN);
        job_pod(
            &mut om,
            "nightly-oom",
            Some("nightly"),
            span,
            (512.0 * MIB, true),
        );
    }
    // A one-off Job (a migration) that ran for 90 minutes.
    let migrate = (START + 60 * MIN, START + 150 * MIN);
    job_pod(&mut om, "migrate-1", None, migrate, (100.0 * MIB, false));
    om
}

/// `app` alone as the engine's input over the window.
fn input_of(app: &kerf::analysis::ContainerObservation) -> Input {
    Input {
        schema_version: INPUT_SCHEMA_VERSION.into(),
        evaluation_time: WINDOW.end_ms,
        window_start: WINDOW.start_ms,
        containers: vec![app.clone()],
    }
}

/// The engine's output for `input` under the default policy with the batch rules, and
/// that policy.
fn analyze_batch(input: &Input) -> (kerf::analysis::Output, kerf::analysis::Policy) {
    let policy = kerf::analysis::normalize_policy(&default_policy()).expect("policy");
    let policy = kerf::runs::batch::evidence_for("CronJob", policy, WINDOW);
    (analyze(input, &policy).expect("analyze"), policy)
}

fn json(r: &kerf::analysis::ResourceAnalysis) -> String {
    serde_json::to_string_pretty(r).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cronjobs_runs_pool_into_one_workload_sized_for_the_peak_of_any_run() {
    let prom = Prometheus::with_data(&batch(), false);
    let collected = source(&prom.url, ClientAuth::None)
        .collect(&scope("batch"), WINDOW)
        .await
        .expect("collect");
    let mut names: Vec<(String, String)> = collected
        .workloads
        .iter()
        .map(|w| (w.kind.clone(), w.name.clone()))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ("CronJob".to_string(), "nightly".to_string()),
            ("Job".to_string(), "migrate-1".to_string()),
        ],
        "the runs are one workload; the bare Job is its own"
    );
    let nightly = collected
        .workloads
        .iter()
        .find(|w| w.name == "nightly")
        .expect("nightly");
    assert_eq!(
        nightly.replicas, None,
        "batch work wants no replicas (no savings estimate)"
    );
    assert!(
        nightly
            .uid
            .ends_with(&format!("@{}", (START - 86_400_000) / 1000)),
        "{}",
        nightly.uid
    );
    let app = collected
        .input
        .containers
        .iter()
        .find(|c| c.target.name == "nightly")
        .expect("the nightly's app container");
    assert_eq!(app.target.kind, "CronJob");
    assert_eq!(app.target.release, "nightly", "all runs are one release");
    assert_eq!(app.cpu.series.len(), RUNS as usize, "one lifetime per run");
    assert!(app.previous_releases.is_empty());
    let (_, last_end) = run_span(RUNS - 1);
    assert!(app.identity.available);
    assert_eq!(
        app.identity.timestamp, last_end,
        "last seen at its latest run's last sample"
    );
    // The latest run finished 35 minutes before the end: its settings are read anyway,
    // with their own sample times.
    assert!(app.cpu.current_request.available && !app.cpu.current_request.unset);
    assert_eq!(app.cpu.current_request.value, 500.0);
    assert_eq!(app.cpu.current_request.timestamp, last_end);
    assert_eq!(app.memory.current_limit.value, 512.0 * MIB);
    assert!(app.inventory.available);
    assert_eq!(
        (app.inventory.eligible, app.inventory.observed),
        (RUNS, RUNS),
        "every run's pod in the window"
    );

    let input = input_of(app);
    // The rules for workloads that never stop refuse it: its usage is 35 minutes old and
    // covers a third of the window.
    let plain = analyze(&input, &default_policy()).expect("analyze");
    let quality = serde_json::to_string(&plain.results).expect("json");
    assert!(quality.contains("stale-usage"), "{quality}");
    assert!(plain.results.iter().all(|r| r.recommendations.is_empty()));
    // The batch rules size it: memory for the peak of any run.
    let (out, policy) = analyze_batch(&input);
    let memory = out
        .results
        .iter()
        .find(|r| r.resource == Resource::Memory)
        .expect("memory");
    let request = memory
        .recommendations
        .iter()
        .find(|r| r.setting == Setting::Requests)
        .unwrap_or_else(|| panic!("a memory request: {}", json(memory)));
    assert_eq!(request.current_value, 512.0 * MIB);
    assert!(
        request.suggested_value >= 300.0 * MIB && request.suggested_value < 512.0 * MIB,
        "sized for the 300 MiB peak of one run: {}",
        request.suggested_value / MIB
    );
    let cpu = out
        .results
        .iter()
        .find(|r| r.resource == Resource::Cpu)
        .expect("cpu");
    let cpu_request = cpu
        .recommendations
        .iter()
        .find(|r| r.setting == Setting::Requests)
        .unwrap_or_else(|| panic!("a CPU request: {}", json(cpu)));
    assert_eq!(
        cpu_request.suggested_value,
        (300.0 * policy.cpu.headroom_coefficient).round(),
        "sized from the 300m every run used, by the policy's headroom: {}",
        json(cpu)
    );

    // The engine's confidence reads the duty cycle (coverage) and one run's span; the
    // recommendation's is the engine's formula over history and samples alone.
    assert!(request.confidence < 40, "{}", request.confidence);
    let results: Vec<&kerf::analysis::ResourceAnalysis> = out.results.iter().collect();
    assert_eq!(
        kerf::runs::batch::confidence("CronJob", &results, &policy.evidence),
        Some(95),
        "five hours from the first run to the last, far over 30 observations"
    );
    assert_eq!(
        kerf::runs::batch::confidence("Deployment", &results, &policy.evidence),
        None
    );

    let migrate = collected
        .input
        .containers
        .iter()
        .find(|c| c.target.name == "migrate-1")
        .expect("the migration's app container");
    assert_eq!(
        (
            migrate.target.kind.as_str(),
            migrate.target.release.as_str()
        ),
        ("Job", "migrate-1")
    );
    assert_eq!(migrate.cpu.current_request.value, 500.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_for_memory_gives_the_cronjob_the_engines_oom_floor() {
    let prom = Prometheus::with_data(&batch_with(true), false);
    let collected = source(&prom.url, ClientAuth::None)
        .collect(&scope("batch"), WINDOW)
        .await
        .expect("collect");
    let app = collected
        .input
        .containers
        .iter()
        .find(|c| c.target.name == "nightly")
        .expect("the nightly's app container");
    // kube-state-metrics exports why the container's state is terminated, not when: the
    // kill is placed at the step its reason is first seen (within a step after it).
    let kill = OOM_RUN_FROM + 10 * MIN;
    assert_eq!(app.oom_kills.len(), 1, "{:?}", app.oom_kills);
    let k = &app.oom_kills[0];
    assert!(k.id.ends_with("inferred"), "{}", k.id);
    assert!(
        k.timestamp > kill && k.timestamp <= kill + 60_000,
        "{} vs {kill}",
        k.timestamp
    );
    assert_eq!(k.memory_limit_bytes, 512.0 * MIB, "the limit it hit");
    assert_eq!(k.release, "nightly");
    let input = input_of(app);
    let (out, _) = analyze_batch(&input);
    let memory = out
        .results
        .iter()
        .find(|r| r.resource == Resource::Memory)
        .expect("memory");
    let limit = memory
        .recommendations
        .iter()
        .find(|r| r.setting == Setting::Limits)
        .unwrap_or_else(|| panic!("a memory limit: {}", json(memory)));
    assert!(
        limit.suggested_value > 512.0 * MIB,
        "above the limit the run was killed at: {} MiB",
        limit.suggested_value / MIB
    );
}

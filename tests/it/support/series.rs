//! Scrapes the datasource tests backfill into a real Prometheus (or VictoriaMetrics):
//! the six-hour rollout/restart/OOM fixture of two clusters ([`fixture`]), the jittered
//! scrapes the step grid has to resolve ([`jittered`]), one recent Deployment
//! ([`deployment`]), and the source, scope and window that read them.

use kerf::datasource::prometheus::{ClientAuth, ClientConfig, PrometheusSource};
use kerf::datasource::{ClusterScope, Window};

use super::prometheus::OpenMetrics;

pub const END: i64 = 1_760_000_000_000 - 1_760_000_000_000 % 60_000;
pub const START: i64 = END - 6 * 3_600_000;
pub const MIN: i64 = 60_000;
pub const MIB: f64 = 1024.0 * 1024.0;

pub struct Pod<'a> {
    pub cluster: &'a str,
    pub ns: &'a str,
    pub name: String,
    pub uid: String,
    pub rs: &'a str,
    pub from: i64,
    pub to: i64,
}

/// Samples every 30 s in [from, to).
pub fn each(from: i64, to: i64) -> impl Iterator<Item = i64> {
    (0..)
        .map(move |i| from + i * 30_000)
        .take_while(move |t| *t < to)
}

pub fn ksm_pod(om: &mut OpenMetrics, p: &Pod, deployment: &str, cpu_req: f64, mem_limit: f64) {
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

pub fn ksm_deployment(
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
pub fn cadvisor(
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

pub fn pod<'a>(
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

pub fn fixture() -> OpenMetrics {
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

pub fn source(url: &str, auth: ClientAuth) -> PrometheusSource {
    PrometheusSource::new(ClientConfig {
        url: url.to_string(),
        auth,
        headers: vec![("X-Scope-OrgID".into(), "tenant-a".into())],
        ca_pem: None,
        insecure_skip_verify: false,
        timeout: std::time::Duration::from_secs(30),
        max_concurrent_queries: 4,
        outbound: Default::default(),
    })
    .expect("source")
}

pub fn scope(cluster: &str) -> ClusterScope {
    ClusterScope {
        cluster: cluster.into(),
        selector_label: Some("cluster".into()),
        selector_value: Some(cluster.into()),
    }
}

pub const WINDOW: Window = Window {
    end_ms: END,
    start_ms: START,
    step_seconds: 60,
};

/// `east/jitter/odd`: one pod scraped every 15 s with up to 4.9 s of jitter, a 12-minute
/// gap, a restart 47 minutes before the end, and a lone sample exactly 5 minutes before
/// a step followed by 7 minutes of silence.
pub const GAP: (i64, i64) = (END - 200 * MIN, END - 188 * MIN);
pub const LONE: i64 = END - 100 * MIN - 5 * MIN;

pub fn jittered(om: &mut OpenMetrics) {
    let ns = "jitter";
    let base = [("cluster", "east"), ("namespace", ns)];
    let mut rs_owner = base.to_vec();
    rs_owner.extend([
        ("replicaset", "odd-r1"),
        ("owner_kind", "Deployment"),
        ("owner_name", "odd"),
    ]);
    let mut dep = base.to_vec();
    dep.push(("deployment", "odd"));
    let pod = [
        ("cluster", "east"),
        ("namespace", ns),
        ("pod", "odd-r1-aaaaa"),
        ("uid", "odd-uid"),
    ];
    let mut owner = pod.to_vec();
    owner.extend([
        ("owner_kind", "ReplicaSet"),
        ("owner_name", "odd-r1"),
        ("owner_is_controller", "true"),
    ]);
    let mut limit = pod.to_vec();
    limit.extend([("container", "app"), ("resource", "memory")]);
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample(
            "kube_deployment_created",
            &dep,
            ((START - 1_440 * MIN) / 1000) as f64,
            t,
        );
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample("kube_deployment_spec_replicas", &dep, 1.0, t);
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample("kube_replicaset_owner", &rs_owner, 1.0, t);
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample("kube_pod_owner", &owner, 1.0, t);
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample(
            "kube_pod_created",
            &pod,
            ((START - 60 * MIN) / 1000) as f64,
            t,
        );
    }
    for t in (START - 60 * MIN..=END).step_by(30_000) {
        om.sample(
            "kube_pod_container_resource_limits",
            &limit,
            512.0 * 1_048_576.0,
            t,
        );
    }
    let restart = END - 47 * MIN;
    let gap = GAP;
    let edge = LONE; // a step lies exactly 5 minutes after it
    let times = |from: i64, to: i64| {
        let mut out = Vec::new();
        let mut k: i64 = 0;
        loop {
            let jitter = (k * 7_919 % 4_900) - 2_450;
            let t = from + k * 15_000 + jitter;
            if t >= to {
                return out;
            }
            let in_gap = (gap.0..gap.1).contains(&t);
            let near_edge = (edge..edge + 7 * MIN).contains(&t);
            if !in_gap && !near_edge {
                out.push(t);
            }
            k += 1;
        }
    };
    for (id, from, to) in [
        ("/c1", START - 30 * MIN, restart),
        ("/c2", restart + 20_000, END),
    ] {
        let mut l = pod.to_vec();
        l.truncate(3);
        l.extend([("container", "app"), ("id", id)]);
        let mut ts = times(from, to);
        if id == "/c1" {
            ts.push(edge);
            ts.sort_unstable();
        }
        let mut counter = 0.0;
        for (i, t) in ts.iter().enumerate() {
            counter += 0.125 + (i % 13) as f64 * 0.031_25;
            om.sample("container_cpu_usage_seconds_total", &l, counter, *t);
        }
        for (i, t) in ts.iter().enumerate() {
            let mem = 100.0 * 1_048_576.0 + ((i * 37) % 101) as f64 * 65_536.0;
            om.sample("container_memory_working_set_bytes", &l, mem, *t);
        }
    }
}

/// A Deployment with one ready pod and one container, sampled every 30 s over the last
/// three hours (ending a minute ago, so every sample lies before the run's window end).
pub fn deployment(om: &mut OpenMetrics, name: &str, now: i64) {
    let (from, to) = (now - 180 * MIN, now - MIN);
    let rs = format!("{name}-7d9f");
    let pod = format!("{rs}-x1");
    let uid = format!("{name}-pod-uid");
    let base = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("pod", pod.as_str()),
        ("uid", uid.as_str()),
    ];
    let mut owner = base.to_vec();
    owner.extend([
        ("owner_kind", "ReplicaSet"),
        ("owner_name", rs.as_str()),
        ("owner_is_controller", "true"),
    ]);
    let deploy = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("deployment", name),
    ];
    let rs_owner = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("replicaset", rs.as_str()),
        ("owner_kind", "Deployment"),
        ("owner_name", name),
    ];
    let container = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("pod", pod.as_str()),
        ("container", "app"),
        ("id", "c1"),
    ];
    let mut requests = base.to_vec();
    requests.extend([("container", "app"), ("resource", "cpu")]);
    let mut t = from;
    let mut cpu = 0.0;
    while t <= to {
        om.sample("kube_pod_owner", &owner, 1.0, t);
        om.sample("kube_pod_created", &base, (from / 1000) as f64, t);
        om.sample("kube_replicaset_owner", &rs_owner, 1.0, t);
        om.sample(
            "kube_deployment_created",
            &deploy,
            ((from - 60 * MIN) / 1000) as f64,
            t,
        );
        om.sample("kube_deployment_spec_replicas", &deploy, 1.0, t);
        om.sample("kube_pod_container_resource_requests", &requests, 1.0, t);
        cpu += 0.2 * 30.0;
        om.sample("container_cpu_usage_seconds_total", &container, cpu, t);
        om.sample(
            "container_memory_working_set_bytes",
            &container,
            64.0 * 1024.0 * 1024.0,
            t,
        );
        t += 30_000;
    }
}

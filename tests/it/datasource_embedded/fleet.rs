//! The seeded fleet both stores receive: kube-state-metrics series as its exporter
//! writes them (scraped every 30 s, 7.3 s past the half minute, a staleness marker when
//! an object goes away) and cAdvisor usage scraped every 15 s with seeded jitter, a
//! marker when a container instance ends. Two clusters:
//! - `emb`: shop/api (Deployment, 3 replicas, an HPA, a rolling update), shop/cart
//!   (2 replicas, an `app` and a `proxy` container, one `app` restarted after an
//!   error), db/pg (StatefulSet, 2 replicas: both pods recreated by a revision change,
//!   pg-0 under its old name, pg-1 OOM-killed and then resized in place),
//!   infra/agent (DaemonSet, its labels only on its pods);
//! - `emb-infer`: batch/worker (2 replicas), one OOM-killed, kube-state-metrics
//!   without `…_last_terminated_timestamp` (the kill is inferred from restarts).

use crate::datasource_raw::Seeded;
use crate::support::raw_tsdb::{stale, Dataset};

pub const MIN: i64 = 60_000;
pub const END: i64 = 1_760_000_000_000 - 1_760_000_000_000 % MIN;
pub const START: i64 = END - 6 * 60 * MIN;
/// The data begins before the window and goes on a little after its end.
pub const FIRST: i64 = START - 90 * MIN;
pub const LAST: i64 = END + 2 * MIN;
pub const MIB: f64 = 1_048_576.0;

pub const ROLLOUT: i64 = END - 150 * MIN;
pub const PG_KILL: i64 = END - 100 * MIN + 11_000;
pub const PG_RESIZE: i64 = END - 60 * MIN;
pub const WORKER_KILL: i64 = END - 80 * MIN + 23_000;

/// kube-state-metrics scrape times in `[from, to)`.
fn ksm_times(from: i64, to: i64) -> impl Iterator<Item = i64> {
    let first = from + (7_300 - from).rem_euclid(30_000);
    (0..)
        .map(move |k| first + k * 30_000)
        .take_while(move |t| *t < to)
}

/// The first scrape at or after `t`.
pub fn scrape_after(t: i64) -> i64 {
    ksm_times(t, i64::MAX).next().expect("a scrape")
}

pub struct Container {
    pub name: &'static str,
    pub cpu_request: f64,
    pub memory_limit: f64,
    pub cores: f64,
    pub bytes: f64,
    /// Terminations: (time, reason).
    pub kills: Vec<(i64, &'static str)>,
    /// An in-place resize of the memory limit: (time, new limit).
    pub resize: Option<(i64, f64)>,
}

pub struct Pod {
    pub ns: &'static str,
    pub name: String,
    pub uid: String,
    pub owner_kind: &'static str,
    pub owner: String,
    pub revision: Option<&'static str>,
    pub app: &'static str,
    pub from: i64,
    pub to: i64,
    pub containers: Vec<Container>,
}

/// Writes one cluster's series (each carries `cluster`).
pub struct Writer<'a> {
    pub ds: &'a mut Dataset,
    pub cluster: &'static str,
    pub rng: Seeded,
    /// Whether kube-state-metrics exports the termination timestamp.
    pub termination_time: bool,
}

impl Writer<'_> {
    /// A kube-state-metrics series over `[from, to)`, ended by a marker when `to` is
    /// before the data's end.
    fn ksm(
        &mut self,
        name: &str,
        pairs: &[(&str, &str)],
        (from, to): (i64, i64),
        v: impl Fn(i64) -> f64,
    ) {
        let mut samples: Vec<(i64, f64)> = ksm_times(from, to).map(|t| (t, v(t))).collect();
        if to < LAST {
            samples.push((scrape_after(to), stale()));
        }
        let mut labels = vec![("cluster", self.cluster)];
        labels.extend_from_slice(pairs);
        self.ds.add(name, &labels, samples);
    }

    /// A workload's own series: creation, desired replicas, labels when exported.
    pub fn workload(
        &mut self,
        ns: &str,
        kind: &str,
        name: &str,
        replicas: f64,
        labels: &[(&str, &str)],
    ) {
        let base = [("namespace", ns), (kind, name)];
        let created = ((FIRST - 3 * 1440 * MIN) / 1000) as f64;
        let whole = (FIRST, LAST);
        self.ksm(&format!("kube_{kind}_created"), &base, whole, |_| created);
        let desired = match kind {
            "deployment" => "kube_deployment_spec_replicas",
            "statefulset" => "kube_statefulset_replicas",
            _ => "kube_daemonset_status_desired_number_scheduled",
        };
        self.ksm(desired, &base, whole, |_| replicas);
        if !labels.is_empty() {
            let mut l = base.to_vec();
            l.extend_from_slice(labels);
            self.ksm(&format!("kube_{kind}_labels"), &l, whole, |_| 1.0);
        }
    }

    /// A ReplicaSet of Deployment `deployment`, created at `created`.
    pub fn replica_set(&mut self, ns: &str, rs: &str, deployment: &str, created: i64, to: i64) {
        let owner = [
            ("namespace", ns),
            ("replicaset", rs),
            ("owner_kind", "Deployment"),
            ("owner_name", deployment),
        ];
        let from = created.max(FIRST);
        self.ksm("kube_replicaset_owner", &owner, (from, to), |_| 1.0);
        let value = (created / 1000) as f64;
        let l = [("namespace", ns), ("replicaset", rs)];
        self.ksm("kube_replicaset_created", &l, (from, to), |_| value);
    }

    /// An HPA scaling Deployment `name` on CPU utilization.
    pub fn hpa(&mut self, ns: &str, name: &str, target: f64, (min, max): (f64, f64)) {
        let base = [("namespace", ns), ("horizontalpodautoscaler", name)];
        let whole = (FIRST, LAST);
        let mut info = base.to_vec();
        info.extend([
            ("scaletargetref_kind", "Deployment"),
            ("scaletargetref_name", name),
        ]);
        self.ksm("kube_horizontalpodautoscaler_info", &info, whole, |_| 1.0);
        let mut metric = base.to_vec();
        metric.extend([
            ("metric_name", "cpu"),
            ("metric_target_type", "utilization"),
        ]);
        self.ksm(
            "kube_horizontalpodautoscaler_spec_target_metric",
            &metric,
            whole,
            |_| target,
        );
        self.ksm(
            "kube_horizontalpodautoscaler_spec_min_replicas",
            &base,
            whole,
            |_| min,
        );
        self.ksm(
            "kube_horizontalpodautoscaler_spec_max_replicas",
            &base,
            whole,
            |_| max,
        );
    }

    /// A pod: its kube-state-metrics series and its containers' usage.
    pub fn pod(&mut self, p: &Pod) {
        let span = (p.from.max(FIRST), p.to);
        let base = [
            ("namespace", p.ns),
            ("pod", p.name.as_str()),
            ("uid", p.uid.as_str()),
        ];
        let mut owner = base.to_vec();
        owner.extend([
            ("owner_kind", p.owner_kind),
            ("owner_name", p.owner.as_str()),
            ("owner_is_controller", "true"),
        ]);
        self.ksm("kube_pod_owner", &owner, span, |_| 1.0);
        let created = (p.from / 1000) as f64;
        self.ksm("kube_pod_created", &base, span, |_| created);
        let mut labels = base.to_vec();
        labels.extend([("label_app", p.app), ("label_team", "core")]);
        if let Some(r) = p.revision {
            labels.push(("label_controller_revision_hash", r));
        }
        self.ksm("kube_pod_labels", &labels, span, |_| 1.0);
        for c in &p.containers {
            self.container(p, c, span);
        }
    }

    fn container(&mut self, p: &Pod, c: &Container, span: (i64, i64)) {
        let ids = [
            ("namespace", p.ns),
            ("pod", p.name.as_str()),
            ("uid", p.uid.as_str()),
            ("container", c.name),
        ];
        for (metric, resource, unit, value) in [
            (
                "kube_pod_container_resource_requests",
                "cpu",
                "core",
                c.cpu_request,
            ),
            (
                "kube_pod_container_resource_requests",
                "memory",
                "byte",
                c.memory_limit / 2.0,
            ),
            (
                "kube_pod_container_resource_limits",
                "memory",
                "byte",
                c.memory_limit,
            ),
        ] {
            let mut l = ids.to_vec();
            l.extend([("node", "node-1"), ("resource", resource), ("unit", unit)]);
            let resize = c.resize.filter(|_| metric.ends_with("limits"));
            self.ksm(metric, &l, span, |t| match resize {
                Some((at, limit)) if t >= at => limit,
                _ => value,
            });
        }
        let kills = c.kills.clone();
        self.ksm(
            "kube_pod_container_status_restarts_total",
            &ids,
            span,
            |t| kills.iter().filter(|(at, _)| *at <= t).count() as f64,
        );
        for (i, (at, reason)) in kills.iter().enumerate() {
            let until = kills.get(i + 1).map_or(span.1, |k| k.0);
            let mut l = ids.to_vec();
            l.push(("reason", reason));
            self.ksm(
                "kube_pod_container_status_last_terminated_reason",
                &l,
                (*at, until),
                |_| 1.0,
            );
        }
        if let (Some(first), true) = (kills.first(), self.termination_time) {
            let kills = kills.clone();
            self.ksm(
                "kube_pod_container_status_last_terminated_timestamp",
                &ids,
                (first.0, span.1),
                |t| {
                    let last = kills.iter().rfind(|(at, _)| *at <= t).expect("killed");
                    (last.0 / 1000) as f64
                },
            );
        }
        // One cAdvisor series per container instance: a kill ends one, a new `id`
        // starts 20 s later.
        let mut bounds = vec![span.0];
        bounds.extend(kills.iter().flat_map(|(at, _)| [*at, at + 20_000]));
        bounds.push(span.1);
        for (n, pair) in bounds.chunks(2).enumerate() {
            let id = format!("/kubepods/pod{}/{}-{n}", p.uid, c.name);
            self.usage(p, c, &id, (pair[0], pair[1]));
        }
    }

    /// cAdvisor's two series of one container instance over `[from, to)`.
    fn usage(&mut self, p: &Pod, c: &Container, id: &str, (from, to): (i64, i64)) {
        let l = [
            ("cluster", self.cluster),
            ("namespace", p.ns),
            ("pod", p.name.as_str()),
            ("container", c.name),
            ("id", id),
        ];
        let (mut cpu, mut mem) = (Vec::new(), Vec::new());
        let (mut counter, mut prev) = (0.0f64, from);
        let mut k = 0;
        loop {
            let t = from + 1_000 + k * 15_000 + (self.rng.unit() * 4_000.0) as i64 - 2_000;
            k += 1;
            if t >= to {
                break;
            }
            if t <= prev {
                continue;
            }
            let rate = c.cores * (0.6 + 0.8 * self.rng.unit() * self.rng.unit());
            counter += rate * (t - prev) as f64 / 1000.0;
            prev = t;
            cpu.push((t, (counter * 1e9).round() / 1e9));
            let noise = (self.rng.unit() * 4_096.0).round() * 4096.0;
            mem.push((t, c.bytes + noise));
        }
        if to < LAST {
            cpu.push((to + 5_000, stale()));
            mem.push((to + 5_000, stale()));
        }
        self.ds.add("container_cpu_usage_seconds_total", &l, cpu);
        self.ds.add("container_memory_working_set_bytes", &l, mem);
    }
}

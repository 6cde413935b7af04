//! What a simulated kubelet serves at `/metrics/cadvisor`, the same text on both faces
//! (the api-server face serves it over HTTP, the in-process face reads it with the
//! agent's own parser), so both agree by construction. As a real kubelet writes it:
//! per container its CPU usage, CFS periods and throttled periods, working set and OOM
//! events, and per pod its own cgroup (`container=""`, what its containers use
//! together) for CPU usage and working set. Every line carries the kubelet's timestamp
//! (the moment it last ran the container) and cAdvisor's `id`, the cgroup, which is new
//! for each container instance.

use std::fmt::Write as _;

use super::ContainerRun;

/// One pod as its node's kubelet runs it.
pub struct PodCgroups<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
    /// Its containers as they run, each with its image.
    pub containers: Vec<(&'a ContainerRun, &'a str)>,
}

impl PodCgroups<'_> {
    /// The pod's own cgroup.
    pub fn id(&self) -> String {
        format!("/kubepods/pod{}", self.uid)
    }

    /// The cgroup of the current instance of `c`.
    pub fn container_id(&self, c: &ContainerRun) -> String {
        format!("/kubepods/pod{}/{}-{}", self.uid, c.name, c.restarts)
    }

    /// When the kubelet last ran any of its containers.
    fn at_ms(&self) -> i64 {
        self.containers
            .iter()
            .map(|(c, _)| c.at_ms)
            .max()
            .unwrap_or(0)
    }
}

/// Metric name, type, help, the value of one container, and whether the pod's own
/// cgroup is written too (as the sum of its containers).
type Family = (
    &'static str,
    &'static str,
    &'static str,
    fn(&ContainerRun) -> f64,
    bool,
);

const FAMILIES: [Family; 5] = [
    (
        "container_cpu_usage_seconds_total",
        "counter",
        "Cumulative cpu time consumed in seconds.",
        |c| c.cpu_seconds,
        true,
    ),
    (
        "container_cpu_cfs_periods_total",
        "counter",
        "Number of elapsed enforcement period intervals.",
        |c| c.periods as f64,
        false,
    ),
    (
        "container_cpu_cfs_throttled_periods_total",
        "counter",
        "Number of throttled period intervals.",
        |c| c.throttled_periods as f64,
        false,
    ),
    (
        "container_memory_working_set_bytes",
        "gauge",
        "Current working set in bytes.",
        |c| c.memory_bytes,
        true,
    ),
    (
        "container_oom_events_total",
        "counter",
        "Count of out of memory events observed for the container.",
        |c| f64::from(c.oom_kills),
        false,
    ),
];

/// A label value as the text format escapes it.
fn escaped(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The page for `pods`, in pod order (namespace, name), containers by name.
pub fn render(pods: &mut [PodCgroups]) -> String {
    pods.sort_by(|a, b| (a.namespace, a.name).cmp(&(b.namespace, b.name)));
    for p in pods.iter_mut() {
        p.containers.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    }
    let mut out = String::new();
    for (name, kind, help, value, per_pod) in FAMILIES {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for pod in pods.iter() {
            let (ns, pod_name) = (escaped(pod.namespace), escaped(pod.name));
            if per_pod && !pod.containers.is_empty() {
                let total: f64 = pod.containers.iter().map(|(c, _)| value(c)).sum();
                let _ = writeln!(
                    out,
                    "{name}{{container=\"\",id=\"{}\",image=\"\",namespace=\"{ns}\",pod=\"{pod_name}\"}} {total} {}",
                    pod.id(),
                    pod.at_ms()
                );
            }
            for (c, image) in &pod.containers {
                let _ = writeln!(
                    out,
                    "{name}{{container=\"{}\",id=\"{}\",image=\"{}\",namespace=\"{ns}\",pod=\"{pod_name}\"}} {} {}",
                    escaped(&c.name),
                    pod.container_id(c),
                    escaped(image),
                    value(c),
                    c.at_ms
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::cadvisor::{cpu_counters, usage};
    use crate::cluster::{PodRef, ResizePolicy, Resources, UsageMetric};
    use crate::sim::kubelet::Usage;

    fn run(name: &str, cpu_seconds: f64, memory: f64, at_ms: i64) -> ContainerRun {
        let mut c = ContainerRun::start(
            name,
            Usage::default(),
            Resources::default(),
            ResizePolicy::default(),
            0,
        );
        (c.cpu_seconds, c.memory_bytes, c.at_ms) = (cpu_seconds, memory, at_ms);
        c
    }

    #[test]
    fn the_page_reads_back_as_the_usage_of_each_container_and_its_pod_at_the_kubelets_time() {
        let (app, side) = (run("app", 3.0, 100.0, 5_000), run("side", 1.5, 20.0, 4_000));
        let mut restarted = run("app", 7.0, 50.0, 6_000);
        restarted.restarts = 2;
        let mut pods = [
            PodCgroups {
                namespace: "shop",
                name: "web-2",
                uid: "u2",
                containers: vec![(&restarted, "app:1")],
            },
            PodCgroups {
                namespace: "shop",
                name: "web-1",
                uid: "u1",
                containers: vec![(&side, "side:1"), (&app, "app:1")],
            },
        ];
        let text = render(&mut pods);
        let got: Vec<(UsageMetric, String, String, String, f64, i64)> = usage(&text, 1)
            .into_iter()
            .map(|s| {
                (
                    s.metric,
                    s.pod.name,
                    s.container,
                    s.id,
                    s.value,
                    s.timestamp_ms,
                )
            })
            .collect();
        let cpu = UsageMetric::CpuSeconds;
        let row = |m, pod: &str, c: &str, id: &str, v: f64, t: i64| {
            (m, pod.to_string(), c.to_string(), id.to_string(), v, t)
        };
        assert_eq!(
            got[..5],
            [
                row(cpu, "web-1", "", "/kubepods/podu1", 4.5, 5_000),
                row(cpu, "web-1", "app", "/kubepods/podu1/app-0", 3.0, 5_000),
                row(cpu, "web-1", "side", "/kubepods/podu1/side-0", 1.5, 4_000),
                row(cpu, "web-2", "", "/kubepods/podu2", 7.0, 6_000),
                row(cpu, "web-2", "app", "/kubepods/podu2/app-2", 7.0, 6_000),
            ]
        );
        assert_eq!(got.len(), 10);
        assert_eq!(
            got[5],
            row(
                UsageMetric::MemoryWorkingSet,
                "web-1",
                "",
                "/kubepods/podu1",
                120.0,
                5_000
            )
        );
        // The throttling reader sees the containers only.
        let counters = cpu_counters(&text);
        assert_eq!(counters.len(), 3);
        assert_eq!(counters[0].pod, PodRef::new("shop", "web-1"));
    }
}

//! What a kubelet serves at `/metrics/cadvisor`, read from its Prometheus text format by
//! one parser ([`lines`]): sample lines `metric{labels} value [timestamp]`, label values
//! unescaped (`\\`, `\"`, `\n`), the optional integer timestamp (Unix ms) kept. Two
//! readings are made of it:
//! - [`cpu_counters`]: the CFS counters (`container_cpu_cfs_periods_total`,
//!   `container_cpu_cfs_throttled_periods_total`) per container, for the `Throttled`
//!   guardrail and the health watch;
//! - [`usage`]: `container_cpu_usage_seconds_total` and
//!   `container_memory_working_set_bytes`, per container and per pod (the pod's own
//!   cgroup, `container=""`), each sample with the kubelet's timestamp, for the agent's
//!   collector.
//!
//! Both skip the pause container (`container="POD"`) and cgroups outside any pod.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{CpuCounters, PodRef};

const PERIODS: &str = "container_cpu_cfs_periods_total";
const THROTTLED: &str = "container_cpu_cfs_throttled_periods_total";

/// Which usage a cAdvisor series measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum UsageMetric {
    /// `container_cpu_usage_seconds_total`: CPU seconds used, a counter.
    CpuSeconds,
    /// `container_memory_working_set_bytes`: the working set, a gauge.
    MemoryWorkingSet,
}

impl UsageMetric {
    pub const ALL: [UsageMetric; 2] = [UsageMetric::CpuSeconds, UsageMetric::MemoryWorkingSet];

    /// The metric's name as cAdvisor exports it.
    pub fn name(self) -> &'static str {
        match self {
            UsageMetric::CpuSeconds => "container_cpu_usage_seconds_total",
            UsageMetric::MemoryWorkingSet => "container_memory_working_set_bytes",
        }
    }

    pub fn parse(name: &str) -> Option<UsageMetric> {
        UsageMetric::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// One sample of a cAdvisor usage series, as a node's kubelet serves it. A series is
/// (metric, pod, container, id): cAdvisor's `id` is the cgroup, a new one for each
/// container instance, so a restarted container starts a new series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageSample {
    pub metric: UsageMetric,
    pub pod: PodRef,
    /// Empty for the pod's own cgroup (what all its containers use together).
    pub container: String,
    /// cAdvisor's `id` label (the cgroup path).
    pub id: String,
    pub value: f64,
    /// Unix ms: the kubelet's own timestamp when the line carries one, else the scrape's.
    pub timestamp_ms: i64,
}

/// One sample line of the text format.
#[derive(Debug, Clone, PartialEq)]
pub struct Line<'a> {
    pub metric: &'a str,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
    /// The optional timestamp after the value (Unix ms).
    pub timestamp_ms: Option<i64>,
}

impl Line<'_> {
    /// A label's value, empty when absent (as Prometheus reads a missing label).
    pub fn label(&self, name: &str) -> &str {
        self.labels
            .get(name)
            .map(String::as_str)
            .unwrap_or_default()
    }
}

/// The sample lines of `text` whose metric is one of `wanted`. Comments, other metrics
/// and lines that do not parse are skipped; labels are read only for the wanted ones (a
/// node's page holds dozens of metrics per container).
pub fn lines<'a>(text: &'a str, wanted: &'a [&str]) -> impl Iterator<Item = Line<'a>> + 'a {
    text.lines().filter_map(move |line| {
        let line = line.trim_start();
        let end = line.find(['{', ' ', '\t'])?;
        let metric = &line[..end];
        if !wanted.contains(&metric) {
            return None;
        }
        let (labels, rest) = match line[end..].strip_prefix('{') {
            Some(_) => labels(&line[end..])?,
            None => (BTreeMap::new(), &line[end..]),
        };
        let mut fields = rest.split_whitespace();
        let value = fields.next()?.parse::<f64>().ok()?;
        let timestamp_ms = match fields.next() {
            Some(t) => Some(t.parse::<i64>().ok()?),
            None => None,
        };
        if fields.next().is_some() {
            return None;
        }
        Some(Line {
            metric,
            labels,
            value,
            timestamp_ms,
        })
    })
}

/// The labels of one sample line (`{a="x",b="y"}`), unescaping `\\`, `\"` and `\n`, and
/// what follows them.
fn labels(text: &str) -> Option<(BTreeMap<String, String>, &str)> {
    let mut out = BTreeMap::new();
    let mut rest = text.strip_prefix('{')?;
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        if let Some(after) = rest.strip_prefix('}') {
            return Some((out, after));
        }
        let eq = rest.find('=')?;
        let name = rest[..eq].trim().to_string();
        let mut chars = rest[eq + 1..].char_indices();
        if chars.next()?.1 != '"' {
            return None;
        }
        let mut value = String::new();
        let mut end = None;
        let mut escaped = false;
        for (i, c) in chars {
            match (escaped, c) {
                (true, 'n') => {
                    value.push('\n');
                    escaped = false;
                }
                (true, c) => {
                    value.push(c);
                    escaped = false;
                }
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = Some(eq + 1 + i + 1);
                    break;
                }
                (false, c) => value.push(c),
            }
        }
        rest = &rest[end?..];
        out.insert(name, value);
    }
}

/// The pod a line is about, unless it is the pause container or no pod's cgroup.
fn pod_of(line: &Line) -> Option<PodRef> {
    let (ns, pod) = (line.label("namespace"), line.label("pod"));
    if ns.is_empty() || pod.is_empty() || line.label("container") == "POD" {
        return None;
    }
    Some(PodRef::new(ns, pod))
}

/// Every container's CFS counters in `text` (containers without a CPU limit have
/// none: the kernel enforces no quota for them).
pub fn cpu_counters(text: &str) -> Vec<CpuCounters> {
    let mut by: BTreeMap<(PodRef, String), (u64, u64)> = BTreeMap::new();
    for line in lines(text, &[PERIODS, THROTTLED]) {
        let container = line.label("container").to_string();
        let Some(pod) = pod_of(&line).filter(|_| !container.is_empty()) else {
            continue;
        };
        let entry = by.entry((pod, container)).or_default();
        let v = line.value.max(0.0) as u64;
        if line.metric == PERIODS {
            entry.0 = v;
        } else {
            entry.1 = v;
        }
    }
    by.into_iter()
        .map(|((pod, container), (periods, throttled))| CpuCounters {
            pod,
            container,
            periods,
            throttled_periods: throttled,
        })
        .collect()
}

/// The CPU and memory usage samples in `text`, per container and per pod. A line
/// without a timestamp is stamped `scraped_at_ms`. A per-CPU breakdown (a `cpu` label
/// other than `total`, which some kubelets add) is left out: the total is its own line.
pub fn usage(text: &str, scraped_at_ms: i64) -> Vec<UsageSample> {
    let wanted = UsageMetric::ALL.map(UsageMetric::name);
    lines(text, &wanted)
        .filter(|l| matches!(l.label("cpu"), "" | "total"))
        .filter_map(|line| {
            Some(UsageSample {
                metric: UsageMetric::parse(line.metric)?,
                pod: pod_of(&line)?,
                container: line.label("container").to_string(),
                id: line.label("id").to_string(),
                value: line.value,
                timestamp_ms: line.timestamp_ms.unwrap_or(scraped_at_ms),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_per_container_as_a_kubelet_writes_them() {
        let text = r#"# HELP container_cpu_cfs_periods_total Number of elapsed enforcement period intervals.
# TYPE container_cpu_cfs_periods_total counter
container_cpu_cfs_periods_total{container="app",id="/kubepods/x",image="a:1",name="k8s_app",namespace="web",pod="web-1"} 1200 1700000000000
container_cpu_cfs_periods_total{container="",id="/kubepods/x",namespace="web",pod="web-1"} 1300
container_cpu_cfs_periods_total{container="POD",namespace="web",pod="web-1"} 10
container_cpu_cfs_throttled_periods_total{container="app",namespace="web",pod="web-1",odd="a \"quoted\" \\ value"} 300
container_cpu_usage_seconds_total{container="app",namespace="web",pod="web-1"} 99.5
container_cpu_cfs_periods_total{container="side",namespace="web",pod="web-1"} 5e2
"#;
        let got = cpu_counters(text);
        assert_eq!(
            got,
            vec![
                CpuCounters {
                    pod: PodRef::new("web", "web-1"),
                    container: "app".into(),
                    periods: 1200,
                    throttled_periods: 300,
                },
                CpuCounters {
                    pod: PodRef::new("web", "web-1"),
                    container: "side".into(),
                    periods: 500,
                    throttled_periods: 0,
                },
            ]
        );
    }

    #[test]
    fn lines_that_are_not_counters_are_skipped() {
        assert!(cpu_counters("garbage\ncontainer_cpu_cfs_periods_total{bad 1\n").is_empty());
    }

    #[test]
    fn a_line_keeps_its_timestamp_its_unescaped_labels_and_special_values() {
        let text = "# TYPE m gauge\n\
            m{a=\"x\\\\y\",b=\"say \\\"hi\\\"\",c=\"two\\nlines\",} 1.5 1700000000123\n\
            m 2\n\
            \x20 m{a=\"z\"} +Inf\n\
            m{a=\"n\"} NaN 17\n\
            other{a=\"x\"} 3 4\n\
            m{a=\"late\"} 1 not-a-time\n\
            m{a=\"extra\"} 1 2 3\n\
            m{a=\"open 1\n";
        let got: Vec<Line> = lines(text, &["m"]).collect();
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0].label("a"), "x\\y");
        assert_eq!(got[0].label("b"), "say \"hi\"");
        assert_eq!(got[0].label("c"), "two\nlines");
        assert_eq!(
            (got[0].value, got[0].timestamp_ms),
            (1.5, Some(1_700_000_000_123))
        );
        assert_eq!((got[1].value, got[1].timestamp_ms), (2.0, None));
        assert!(got[1].labels.is_empty());
        assert_eq!(got[2].value, f64::INFINITY);
        assert!(got[3].value.is_nan());
        assert_eq!(got[3].timestamp_ms, Some(17));
    }

    #[test]
    fn usage_keeps_containers_and_pods_with_the_kubelets_time_and_skips_the_pause_container() {
        let text = r#"# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",cpu="total",id="/kubepods/podu1/c1",image="a:1",namespace="web",pod="web-1"} 12.5 1700000000123
container_cpu_usage_seconds_total{container="app",cpu="cpu00",id="/kubepods/podu1/c1",namespace="web",pod="web-1"} 6.25 1700000000123
container_cpu_usage_seconds_total{container="",id="/kubepods/podu1",namespace="web",pod="web-1"} 13 1700000000100
container_cpu_usage_seconds_total{container="POD",id="/kubepods/podu1/pause",namespace="web",pod="web-1"} 0.1 1700000000100
container_cpu_usage_seconds_total{id="/system.slice"} 500 1700000000100
container_memory_working_set_bytes{container="app",id="/kubepods/podu1/c1",namespace="web",pod="web-1"} 1.048576e+06
container_cpu_cfs_periods_total{container="app",id="/kubepods/podu1/c1",namespace="web",pod="web-1"} 7 1700000000123
"#;
        let got = usage(text, 42);
        let brief: Vec<(UsageMetric, &str, &str, f64, i64)> = got
            .iter()
            .map(|s| {
                assert_eq!(s.pod, PodRef::new("web", "web-1"));
                (
                    s.metric,
                    s.container.as_str(),
                    s.id.as_str(),
                    s.value,
                    s.timestamp_ms,
                )
            })
            .collect();
        assert_eq!(
            brief,
            [
                (
                    UsageMetric::CpuSeconds,
                    "app",
                    "/kubepods/podu1/c1",
                    12.5,
                    1_700_000_000_123
                ),
                (
                    UsageMetric::CpuSeconds,
                    "",
                    "/kubepods/podu1",
                    13.0,
                    1_700_000_000_100
                ),
                // No timestamp on the line: the scrape's.
                (
                    UsageMetric::MemoryWorkingSet,
                    "app",
                    "/kubepods/podu1/c1",
                    1_048_576.0,
                    42
                ),
            ]
        );
    }
}

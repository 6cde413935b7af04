//! cAdvisor's CPU counters read from the Prometheus text format a kubelet serves at
//! `/metrics/cadvisor`: `container_cpu_cfs_periods_total` and
//! `container_cpu_cfs_throttled_periods_total`, labelled `namespace`, `pod`,
//! `container`. Rows of the pod's own cgroup (`container=""`) and of the pause
//! container (`POD`) are skipped; an optional timestamp after the value is ignored.

use std::collections::BTreeMap;

use super::{CpuCounters, PodRef};

const PERIODS: &str = "container_cpu_cfs_periods_total";
const THROTTLED: &str = "container_cpu_cfs_throttled_periods_total";

/// The labels of one sample line (`{a="x",b="y"}`), unescaping `\\`, `\"` and `\n`.
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

/// Every container's CFS counters in `text` (containers without a CPU limit have
/// none: the kernel enforces no quota for them).
pub fn cpu_counters(text: &str) -> Vec<CpuCounters> {
    let mut by: BTreeMap<(String, String, String), (u64, u64)> = BTreeMap::new();
    for line in text.lines() {
        let (metric, rest) = match line.find('{') {
            Some(i) => (&line[..i], &line[i..]),
            None => continue,
        };
        let slot = match metric {
            PERIODS => 0,
            THROTTLED => 1,
            _ => continue,
        };
        let Some((l, after)) = labels(rest) else {
            continue;
        };
        let Some(value) = after
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        else {
            continue;
        };
        let get = |k: &str| l.get(k).cloned().unwrap_or_default();
        let (ns, pod, container) = (get("namespace"), get("pod"), get("container"));
        if ns.is_empty() || pod.is_empty() || container.is_empty() || container == "POD" {
            continue;
        }
        let entry = by.entry((ns, pod, container)).or_default();
        let v = value.max(0.0) as u64;
        if slot == 0 {
            entry.0 = v;
        } else {
            entry.1 = v;
        }
    }
    by.into_iter()
        .map(|((ns, pod, container), (periods, throttled))| CpuCounters {
            pod: PodRef::new(&ns, &pod),
            container,
            periods,
            throttled_periods: throttled,
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
}

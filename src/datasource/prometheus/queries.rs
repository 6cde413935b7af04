//! Every PromQL query kerf issues (listed with their identity limits in
//! `docs/contracts/datasource.md`), with the cluster selector injected into every
//! selector, and the split of long ranges under the points-per-series limit.

use super::remote_read::{MatchType, Matcher};
use crate::datasource::raw::{label, metric};
use crate::datasource::ClusterScope;

/// Prometheus refuses range queries above 11,000 points per series; stay well under.
pub const MAX_POINTS_PER_QUERY: i64 = crate::datasource::plan::MAX_POINTS_PER_REQUEST as i64;

/// Lookback for "now" answers: kube-state-metrics is scraped more often than this.
pub const NOW_LOOKBACK: &str = "5m";

/// Builds selectors for one cluster scope and group (namespaces, maybe pods).
#[derive(Debug, Clone)]
pub struct Selector {
    cluster: String,
    namespaces: String,
    pods: String,
}

pub(super) fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Escapes a literal for a RE2 alternation.
fn regex_literal(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `label=~"a|b|c"` with every value a literal; "" for no values.
fn alternation(label: &str, values: &[String]) -> String {
    if values.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = values.iter().map(|v| regex_literal(v)).collect();
    format!("{label}=~{}", quote(&parts.join("|")))
}

impl Selector {
    /// The scope's selector; `namespaces` empty means every namespace.
    pub fn new(scope: &ClusterScope, namespaces: &[String]) -> Selector {
        let cluster = match (&scope.selector_label, &scope.selector_value) {
            (Some(l), Some(v)) if !l.is_empty() => format!("{l}={}", quote(v)),
            _ => String::new(),
        };
        Selector {
            cluster,
            namespaces: alternation("namespace", namespaces),
            pods: String::new(),
        }
    }

    /// The selector of one collection group: its namespaces, and its pods when the group
    /// is part of a namespace (pod names are literals: Prometheus looks them up as a set).
    pub fn group(scope: &ClusterScope, group: &crate::datasource::Group) -> Selector {
        let mut sel = Selector::new(scope, &group.namespaces);
        sel.pods = alternation("pod", &group.pods);
        sel
    }

    /// `{<extra>, <cluster>, <namespaces>, <pods>}`.
    pub fn with(&self, extra: &str) -> String {
        let parts: Vec<&str> = [
            extra,
            self.cluster.as_str(),
            self.namespaces.as_str(),
            self.pods.as_str(),
        ]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
        format!("{{{}}}", parts.join(","))
    }
}

/// The inventory queries (instant, at the window end), in `RawInventory` field order.
pub fn inventory(sel: &Selector, window_s: i64) -> [String; 10] {
    let w = format!("{window_s}s");
    [
        format!(
            "max by (namespace, pod, uid, owner_kind, owner_name, owner_is_controller) \
             (last_over_time({}{}[{w}]))",
            metric::POD_OWNER,
            sel.with("")
        ),
        format!("{}{}[{NOW_LOOKBACK}]", metric::POD_OWNER, sel.with("")),
        format!(
            "max by (namespace, pod, uid) (last_over_time({}{}[{w}]))",
            metric::POD_CREATED,
            sel.with("")
        ),
        format!(
            "max by (namespace, pod, uid, label_controller_revision_hash) \
             (last_over_time({}{}[{w}]))",
            metric::POD_LABELS,
            sel.with("label_controller_revision_hash!=\"\"")
        ),
        format!(
            "max by (namespace, replicaset, job_name, owner_kind, owner_name) \
             (last_over_time({}[{w}]))",
            sel.with(&format!(
                "__name__=~\"{}|{}\"",
                metric::REPLICASET_OWNER,
                metric::JOB_OWNER
            ))
        ),
        format!(
            "max by (namespace, deployment, statefulset, daemonset, cronjob) \
             (last_over_time({}[{w}]))",
            sel.with(&format!(
                "__name__=~\"{}|{}|{}|{}\"",
                metric::DEPLOYMENT_CREATED,
                metric::STATEFULSET_CREATED,
                metric::DAEMONSET_CREATED,
                metric::CRONJOB_CREATED
            ))
        ),
        format!(
            "{}[{NOW_LOOKBACK}]",
            sel.with(&format!(
                "__name__=~\"{}|{}|{}|{}\"",
                metric::DEPLOYMENT_REPLICAS,
                metric::STATEFULSET_REPLICAS,
                metric::DAEMONSET_DESIRED,
                metric::ROLLOUT_REPLICAS
            ))
        ),
        // A plain selector: label names are not known in advance, so no `max by`.
        sel.with(&format!(
            "__name__=~\"{}|{}|{}|{}|{}\"",
            metric::DEPLOYMENT_LABELS,
            metric::STATEFULSET_LABELS,
            metric::DAEMONSET_LABELS,
            metric::CRONJOB_LABELS,
            metric::POD_LABELS
        )),
        format!(
            "max by (namespace, replicaset) (last_over_time({}{}[{w}]))",
            metric::REPLICASET_CREATED,
            sel.with("")
        ),
        format!(
            "{}[{NOW_LOOKBACK}]",
            sel.with(&format!(
                "__name__=~\"{}|{}|{}|{}\"",
                metric::HPA_INFO,
                metric::HPA_TARGET_METRIC,
                metric::HPA_MIN_REPLICAS,
                metric::HPA_MAX_REPLICAS
            ))
        ),
    ]
}

/// Current requests and limits with raw sample times (instant, at the end), of app
/// and init containers, and the init containers' info (no `resource` label: the
/// matcher's empty alternative keeps it).
pub fn settings_now(sel: &Selector) -> String {
    settings_over(sel, NOW_LOOKBACK)
}

/// The settings over the whole window (`[W]`, raw sample times) of the pods of batch
/// work's latest runs that no longer run at the end (`PodIndex::finished_runs`).
pub fn settings_of_finished_runs(sel: &Selector, window_s: i64) -> String {
    settings_over(sel, &format!("{window_s}s"))
}

fn settings_over(sel: &Selector, range: &str) -> String {
    format!(
        "{}[{range}]",
        sel.with(&format!(
            "__name__=~\"{}\",resource=~\"cpu|memory|\"",
            metric::SETTINGS_NOW.join("|")
        ))
    )
}

/// The memory-limit history of the selected pods' containers, sidecars and init
/// containers (instant at the end, a range vector: raw samples with their times), so
/// each OOM kill gets the limit at its time.
pub fn memory_limit_history(sel: &Selector, window_s: i64) -> String {
    format!(
        "{}[{window_s}s]",
        sel.with(&format!(
            "__name__=~\"{}|{}\",resource=\"memory\"",
            metric::LIMITS,
            metric::INIT_LIMITS
        ))
    )
}

/// OOM terminations: the termination time, kept only while the last reason is
/// `OOMKilled` (range query). App containers only: kube-state-metrics exports no
/// termination time of init containers and sidecars.
pub fn oom_terminations(sel: &Selector) -> String {
    format!(
        "max by (namespace, pod, uid, container) ({}{} and on (namespace, pod, uid, container) \
         ({}{} > 0))",
        metric::TERMINATED_TIMESTAMP,
        sel.with(""),
        metric::TERMINATED_REASON,
        sel.with("reason=\"OOMKilled\"")
    )
}

/// Containers whose last termination was `OOMKilled` at some point of the window
/// (instant at the end): init containers and sidecars, and with `apps` (the
/// termination timestamp is not exported) app containers too.
pub fn oom_killed_containers(sel: &Selector, window_s: i64, apps: bool) -> String {
    format!(
        "max by (namespace, pod, uid, container) (max_over_time({}[{window_s}s]))",
        sel.with(&format!(
            "__name__=~\"{}\",reason=\"OOMKilled\"",
            reason_names(apps)
        ))
    )
}

/// The last-termination-reason metrics of init containers, and with `apps` of app
/// containers.
fn reason_names(apps: bool) -> String {
    if apps {
        format!("{}|{}", metric::TERMINATED_REASON, metric::INIT_LAST_REASON)
    } else {
        metric::INIT_LAST_REASON.to_string()
    }
}

/// Restart counts of the selected pods' containers, sidecars and init containers (range
/// query).
pub fn restarts(sel: &Selector) -> String {
    format!(
        "max by (namespace, pod, uid, container) ({})",
        sel.with(&format!(
            "__name__=~\"{}|{}\"",
            metric::RESTARTS,
            metric::INIT_RESTARTS
        ))
    )
}

/// When the selected pods' containers (sidecars, init containers) last terminated with
/// `OOMKilled` (range query: present while that is the last termination reason).
pub fn oom_reasons(sel: &Selector) -> String {
    format!(
        "max by (namespace, pod, uid, container) ({} > 0)",
        sel.with(&format!(
            "__name__=~\"{}\",reason=\"OOMKilled\"",
            reason_names(true)
        ))
    )
}

/// Containers of the selected pods (batch work's) whose current state is terminated by
/// an OOM kill (range query: present from the step the kill is first seen).
pub fn terminated_ooms(sel: &Selector) -> String {
    format!(
        "max by (namespace, pod, uid, container) ({}{} > 0)",
        metric::TERMINATED_NOW_REASON,
        sel.with("reason=\"OOMKilled\"")
    )
}

/// The labels of a usage series kerf keeps: one series per cAdvisor container instance.
pub const USAGE_LABELS: &[&str] = &["namespace", "pod", "container", "id"];

/// The usage selector (queries 12 and 13 together: both metrics in one selector), for
/// `pods` of `namespaces` (every namespace when empty; every pod when `pods` is empty).
/// Remote read sends it as matchers; the export API and range selectors as text.
pub fn usage_matchers(
    scope: &ClusterScope,
    namespaces: &[String],
    pods: &[String],
) -> Vec<Matcher> {
    let alternation = |values: &[String]| {
        let parts: Vec<String> = values.iter().map(|v| regex_literal(v)).collect();
        parts.join("|")
    };
    let names = [metric::CPU.to_string(), metric::MEMORY.to_string()];
    let mut out = vec![Matcher::new(
        MatchType::Re,
        label::NAME,
        &alternation(&names),
    )];
    if let (Some(l), Some(v)) = (&scope.selector_label, &scope.selector_value) {
        if !l.is_empty() {
            out.push(Matcher::new(MatchType::Eq, l, v));
        }
    }
    match namespaces {
        [] => {}
        [one] => out.push(Matcher::new(MatchType::Eq, label::NAMESPACE, one)),
        many => out.push(Matcher::new(
            MatchType::Re,
            label::NAMESPACE,
            &alternation(many),
        )),
    }
    if !pods.is_empty() {
        out.push(Matcher::new(MatchType::Re, label::POD, &alternation(pods)));
    }
    out.push(Matcher::new(MatchType::Neq, label::CONTAINER, ""));
    out.push(Matcher::new(MatchType::Neq, label::CONTAINER, "POD"));
    out
}

/// Which required metrics have series now (instant).
pub fn presence(sel: &Selector) -> String {
    format!(
        "count by (__name__) ({})",
        sel.with(&format!("__name__=~\"{}\"", metric::REQUIRED.join("|")))
    )
}

/// Splits the step grid ending at `end_ms` into ranges of at most
/// [`MAX_POINTS_PER_QUERY`] points: `(start_ms, end_ms)` pairs, oldest first.
pub fn split_range(start_ms: i64, end_ms: i64, step_seconds: u32) -> Vec<(i64, i64)> {
    let step = i64::from(step_seconds.max(1)) * 1000;
    let steps = (end_ms - start_ms).max(0) / step;
    let first = end_ms - steps * step;
    let mut out = Vec::new();
    let mut from = first;
    while from <= end_ms {
        let to = (from + (MAX_POINTS_PER_QUERY - 1) * step).min(end_ms);
        out.push((from, to));
        from = to + step;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> ClusterScope {
        ClusterScope {
            cluster: "east".into(),
            selector_label: Some("cluster".into()),
            selector_value: Some("ea\"st".into()),
        }
    }

    #[test]
    fn every_selector_carries_the_cluster_label_and_namespace_batch() {
        let sel = Selector::new(&scope(), &["shop".into(), "a.b".into()]);
        let q = settings_now(&sel);
        assert!(q.contains("cluster=\"ea\\\"st\""), "{q}");
        assert!(q.contains("namespace=~\"shop|a\\\\.b\""), "{q}");
        for q in inventory(&sel, 3600) {
            assert!(q.contains("cluster="), "{q}");
        }
        assert_eq!(oom_terminations(&sel).matches("cluster=").count(), 2);
    }

    #[test]
    fn long_ranges_split_under_the_points_per_series_limit_without_gaps_or_overlap() {
        let end = 1_800_000_000_000;
        let start = end - 14 * 86_400_000;
        let parts = split_range(start, end, 60);
        assert!(parts.len() >= 3);
        for (i, (a, b)) in parts.iter().enumerate() {
            let points = (b - a) / 60_000 + 1;
            assert!(points <= MAX_POINTS_PER_QUERY, "{points}");
            if i > 0 {
                assert_eq!(*a, parts[i - 1].1 + 60_000);
            }
        }
        assert_eq!(parts.last().map(|p| p.1), Some(end));
        assert_eq!(
            split_range(end - 3_600_000, end, 60),
            vec![(end - 3_600_000, end)]
        );
    }
}

//! The weekly digest's content, for the fleet or one team: savings realized by changes
//! applied this week and still available, changes applied / rolled back / blocked with
//! their top reasons, workloads that need attention (OOM-killed, leaking, throttled,
//! stale data) and clusters not ready. Pure: computed from [`DigestFacts`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::auth::pattern;
use crate::store::notify_digest::{DigestFacts, EventFacts};
use crate::store::NamespacePattern;

/// Workloads listed per attention kind at most (the count says how many in all).
const MAX_LISTED: usize = 10;
/// Reasons listed per event type at most.
const TOP_REASONS: usize = 3;

/// How often a reason occurred.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonCount {
    pub reason: String,
    pub count: usize,
}

/// Monthly money figures, in the pricing settings' currency, rounded to cents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Savings {
    /// What the changes applied this week and still live save a month (rollbacks taken
    /// back, partial changes counted for their part), as the overview counts it.
    pub realized_monthly: f64,
    /// Savings the latest recommendations still offer (as `GET /v1/savings`).
    pub available_monthly: f64,
}

/// The week's changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    pub applied: usize,
    pub rolled_back: usize,
    pub blocked: usize,
    pub top_rollback_reasons: Vec<ReasonCount>,
    pub top_blocked_reasons: Vec<ReasonCount>,
}

/// Workloads of one attention kind.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Listed {
    pub count: usize,
    /// `cluster/namespace/Kind/name`, the first few.
    pub workloads: Vec<String>,
}

/// Workloads that need a person.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attention {
    pub oom_killed: Listed,
    pub leaking: Listed,
    pub throttled: Listed,
    pub stale: Listed,
}

/// A cluster that is not ready.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterState {
    pub cluster: String,
    pub state: String,
    pub reasons: Vec<String>,
}

/// One digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DigestReport {
    /// `fleet`, or the team's name.
    pub scope: String,
    pub period_start: String,
    pub period_end: String,
    pub currency: String,
    pub savings: Savings,
    pub changes: Changes,
    pub attention: Attention,
    pub clusters_not_ready: Vec<ClusterState>,
    /// Nothing happened, nothing needs anyone, nothing to save.
    pub empty: bool,
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn in_scope(scope: Option<&[NamespacePattern]>, cluster: &str, namespace: Option<&str>) -> bool {
    scope.is_none_or(|s| {
        s.iter().any(|p| {
            pattern::matches(&p.cluster, cluster)
                && namespace.is_none_or(|n| pattern::matches(&p.namespace, n))
        })
    })
}

fn top(events: &[&EventFacts], kind: &str) -> Vec<ReasonCount> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in events.iter().filter(|e| e.event_type == kind) {
        *counts.entry(&e.reason).or_default() += 1;
    }
    let mut v: Vec<ReasonCount> = counts
        .into_iter()
        .map(|(reason, count)| ReasonCount {
            reason: reason.into(),
            count,
        })
        .collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    v.truncate(TOP_REASONS);
    v
}

fn listed(mut names: Vec<String>) -> Listed {
    names.sort();
    names.dedup();
    let count = names.len();
    names.truncate(MAX_LISTED);
    Listed {
        count,
        workloads: names,
    }
}

/// The digest of `facts` for `scope_name` (`None` patterns = the fleet).
pub fn build(
    facts: &DigestFacts,
    scope_name: &str,
    scope: Option<&[NamespacePattern]>,
    currency: &str,
    period: (String, String),
) -> DigestReport {
    let events: Vec<&EventFacts> = facts
        .events
        .iter()
        .filter(|e| in_scope(scope, &e.cluster, Some(&e.namespace)))
        .collect();
    let key = |e: &EventFacts| format!("{}/{}/{}/{}", e.cluster, e.namespace, e.kind, e.name);
    let workloads: Vec<_> = facts
        .workloads
        .iter()
        .filter(|w| in_scope(scope, &w.cluster, Some(&w.namespace)))
        .collect();
    // What the week's live changes saved, and what is left (each workload's cost delta
    // already moved by the changes applied after its recommendation): one computation
    // with the overview's (`runs::realized`).
    let realized: f64 = workloads.iter().filter_map(|w| w.realized).sum();
    let available: f64 = workloads
        .iter()
        .filter(|w| w.recommended)
        .map(|w| w.cost_delta.map_or(0.0, |d| (-d).max(0.0)))
        .sum();
    let name = |w: &&crate::store::notify_digest::WorkloadFacts| {
        format!("{}/{}/{}/{}", w.cluster, w.namespace, w.kind, w.name)
    };
    let with_notice = |n: &str| -> Vec<String> {
        workloads
            .iter()
            .filter(|w| w.notices.contains(&format!(",{n},")))
            .map(name)
            .collect()
    };
    let throttled: Vec<String> = events
        .iter()
        .filter(|e| e.reason == "Throttled" || e.reason == "Throttling")
        .map(|e| key(e))
        .collect();
    let mut oom = with_notice("oom-kill-detected");
    oom.extend(
        events
            .iter()
            .filter(|e| e.reason == "OOMKilled" || e.reason == "OOMKills")
            .map(|e| key(e)),
    );
    let attention = Attention {
        oom_killed: listed(oom),
        leaking: listed(with_notice("potential-memory-leak")),
        throttled: listed(throttled),
        stale: listed(workloads.iter().filter(|w| w.stale).map(name).collect()),
    };
    let clusters_not_ready: Vec<ClusterState> = facts
        .clusters
        .iter()
        .filter(|(c, state, _)| state != "ready" && in_scope(scope, c, None))
        .map(|(c, state, reasons)| ClusterState {
            cluster: c.clone(),
            state: state.clone(),
            reasons: serde_json::from_str(reasons).unwrap_or_default(),
        })
        .collect();
    let count = |t: &str| events.iter().filter(|e| e.event_type == t).count();
    let changes = Changes {
        applied: count("applied"),
        rolled_back: count("rolled_back"),
        blocked: count("blocked"),
        top_rollback_reasons: top(&events, "rolled_back"),
        top_blocked_reasons: top(&events, "blocked"),
    };
    let savings = Savings {
        realized_monthly: round2(realized),
        available_monthly: round2(available),
    };
    let empty = changes.applied + changes.rolled_back + changes.blocked == 0
        && attention == Attention::default()
        && clusters_not_ready.is_empty()
        && savings.realized_monthly == 0.0
        && savings.available_monthly == 0.0;
    DigestReport {
        scope: scope_name.into(),
        period_start: period.0,
        period_end: period.1,
        currency: currency.into(),
        savings,
        changes,
        attention,
        clusters_not_ready,
        empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::notify_digest::WorkloadFacts;

    fn workload(name: &str, notices: &str, stale: bool, delta: Option<f64>) -> WorkloadFacts {
        WorkloadFacts {
            id: format!("wl-{name}"),
            cluster: "prod".into(),
            namespace: "shop".into(),
            kind: "Deployment".into(),
            name: name.into(),
            cost_delta: delta,
            recommended: delta.is_some(),
            notices: notices.into(),
            stale,
            realized: None,
        }
    }

    fn event(name: &str, kind: &str, reason: &str, t: i64) -> EventFacts {
        EventFacts {
            cluster: "prod".into(),
            namespace: "shop".into(),
            kind: "Deployment".into(),
            name: name.into(),
            event_type: kind.into(),
            reason: reason.into(),
            time_ms: t,
        }
    }

    fn digest(facts: &DigestFacts) -> DigestReport {
        build(facts, "fleet", None, "EUR", ("a".into(), "b".into()))
    }

    #[test]
    fn each_attention_kind_lists_its_workloads_from_notices_events_and_staleness() {
        let facts = DigestFacts {
            workloads: vec![
                workload("cart", ",oom-kill-detected,", false, None),
                workload("queue", ",potential-memory-leak,", false, None),
                workload("feed", "", true, None),
                workload("calm", ",some-other-notice,", false, None),
            ],
            events: vec![
                event("web", "rolled_back", "OOMKills", 1),
                event("batch", "blocked", "OOMKilled", 2),
                event("api", "blocked", "Throttled", 3),
                event("search", "rolled_back", "Throttling", 4),
            ],
            clusters: vec![("prod".into(), "ready".into(), "[]".into())],
        };
        let a = digest(&facts).attention;
        let names = |l: &Listed| l.workloads.clone();
        assert_eq!(
            names(&a.oom_killed),
            [
                "prod/shop/Deployment/batch",
                "prod/shop/Deployment/cart",
                "prod/shop/Deployment/web"
            ]
        );
        assert_eq!(names(&a.leaking), ["prod/shop/Deployment/queue"]);
        assert_eq!(
            names(&a.throttled),
            ["prod/shop/Deployment/api", "prod/shop/Deployment/search"]
        );
        assert_eq!(names(&a.stale), ["prod/shop/Deployment/feed"]);
        assert_eq!(
            (
                a.oom_killed.count,
                a.leaking.count,
                a.throttled.count,
                a.stale.count
            ),
            (3, 1, 2, 1)
        );
    }

    #[test]
    fn an_attention_kind_lists_ten_and_counts_them_all() {
        let facts = DigestFacts {
            workloads: (0..13)
                .map(|i| workload(&format!("w{i:02}"), "", true, None))
                .collect(),
            ..DigestFacts::default()
        };
        let stale = digest(&facts).attention.stale;
        assert_eq!((stale.count, stale.workloads.len()), (13, 10));
        assert_eq!(stale.workloads[0], "prod/shop/Deployment/w00");
    }

    #[test]
    fn top_reasons_are_the_three_most_frequent_and_live_changes_are_realized() {
        // a's change is live; b's was rolled back, so it has no live change.
        let mut a = workload("a", "", false, Some(-5.0));
        a.realized = Some(30.0);
        let facts = DigestFacts {
            workloads: vec![a, workload("b", "", false, Some(-12.5))],
            events: vec![
                event("a", "applied", "RecommendationApplied", 1),
                event("b", "applied", "RecommendationApplied", 2),
                event("b", "rolled_back", "OOMKills", 3),
                event("c", "rolled_back", "Restarts", 4),
                event("d", "rolled_back", "OOMKills", 5),
                event("e", "blocked", "Cooldown", 6),
                event("f", "blocked", "Cooldown", 7),
                event("g", "blocked", "LowConfidence", 8),
                event("h", "blocked", "HPACoupled", 9),
                event("i", "blocked", "PodDisruptionBudget", 10),
                event("i", "blocked", "PodDisruptionBudget", 11),
            ],
            ..DigestFacts::default()
        };
        let r = digest(&facts);
        let pairs = |v: &[ReasonCount]| -> Vec<(String, usize)> {
            v.iter().map(|r| (r.reason.clone(), r.count)).collect()
        };
        assert_eq!(
            pairs(&r.changes.top_rollback_reasons),
            [("OOMKills".into(), 2), ("Restarts".into(), 1)]
        );
        assert_eq!(
            pairs(&r.changes.top_blocked_reasons),
            [
                ("Cooldown".into(), 2),
                ("PodDisruptionBudget".into(), 2),
                ("HPACoupled".into(), 1)
            ]
        );
        assert_eq!(r.savings.realized_monthly, 30.0, "b was rolled back");
        assert_eq!(r.savings.available_monthly, 17.5, "what is left to save");
        assert!(!r.empty);
    }

    #[test]
    fn a_week_with_nothing_is_empty_and_anything_at_all_is_not() {
        let ready = ("prod".to_string(), "ready".to_string(), "[]".to_string());
        let quiet = DigestFacts {
            workloads: vec![workload("web", "", false, Some(0.0))],
            clusters: vec![ready.clone()],
            ..DigestFacts::default()
        };
        assert!(digest(&quiet).empty);
        let mut saving = quiet.clone();
        saving.workloads[0].cost_delta = Some(-4.0);
        let mut not_ready = quiet.clone();
        not_ready.clusters[0] = (
            "prod".into(),
            "degraded".into(),
            r#"["no heartbeat"]"#.into(),
        );
        let mut blocked = quiet.clone();
        blocked.events = vec![event("web", "blocked", "Cooldown", 1)];
        let mut stale = quiet.clone();
        stale.workloads[0].stale = true;
        for facts in [saving, not_ready, blocked, stale] {
            assert!(!digest(&facts).empty, "{facts:?}");
        }
    }
}

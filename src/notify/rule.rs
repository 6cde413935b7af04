//! Rules: which events go to which channel — by event type and reason, cluster,
//! namespace pattern and team — plus the hub's own notices. Checking a request and
//! matching an item are pure.

use serde::{Deserialize, Serialize};

use super::item::{Item, NOTICES};
use super::FieldError;
use crate::auth::pattern;
use crate::events::wellknown;
use crate::store::NamespacePattern;

/// Longest rule name, in characters.
const MAX_NAME_CHARS: usize = 100;
/// At most this many entries in each list of a rule.
const MAX_LIST: usize = 50;

/// What a new channel hears about unless told otherwise: what the agents did and what
/// holds them (`applied`, `blocked`: grouped per cluster and type in each dispatch, so a
/// busy fleet is a message per pass, not one per workload), and the things that need a
/// person.
pub const DEFAULT_EVENTS: &[&str] = &[
    "applied",
    "blocked",
    "rolled_back",
    "failed",
    "readiness_degraded",
    "readiness_recovered",
    "automation_paused",
    "automation_resumed",
    "run_failed",
];

/// Name of the rule created with a channel.
pub const DEFAULT_RULE_NAME: &str = "Changes, holds, rollbacks, failures, readiness and pauses";

/// What a rule selects. Empty lists (other than `events`) select everything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = RuleSelector)]
pub struct Selector {
    /// Event types (`applied`, `rolled_back`, …) and notices (`readiness_degraded`, …).
    pub events: Vec<String>,
    /// Reasons of the chosen event types; a type none of whose reasons is listed passes
    /// with every reason.
    #[serde(default)]
    pub reasons: Vec<String>,
    /// Cluster name globs (`prod-*`).
    #[serde(default)]
    pub clusters: Vec<String>,
    /// Namespace globs (`payments-*`); cluster-wide notices pass.
    #[serde(default)]
    pub namespaces: Vec<String>,
}

/// `POST /v1/notifications/rules` and `PUT .../rules/{id}`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleInput {
    pub channel_id: i64,
    pub name: String,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    pub events: Vec<String>,
    #[serde(default)]
    pub reasons: Vec<String>,
    #[serde(default)]
    pub clusters: Vec<String>,
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Only the namespaces of this team.
    #[serde(default)]
    pub team_id: Option<i64>,
    /// Why (recorded in the audit).
    pub reason: Option<String>,
}

fn enabled_by_default() -> bool {
    true
}

/// A checked rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidRule {
    pub channel_id: i64,
    pub name: String,
    pub enabled: bool,
    pub selector: Selector,
    pub team_id: Option<i64>,
}

/// The rule every new channel gets unless `defaultRules: false`.
pub fn default_rule(channel_id: i64) -> ValidRule {
    ValidRule {
        channel_id,
        name: DEFAULT_RULE_NAME.into(),
        enabled: true,
        selector: Selector {
            events: DEFAULT_EVENTS.iter().map(|s| s.to_string()).collect(),
            ..Selector::default()
        },
        team_id: None,
    }
}

/// True for event types agents send and the hub's notices.
pub fn is_trigger(name: &str) -> bool {
    wellknown::is_agent_type(name) || NOTICES.contains(&name)
}

fn err(field: String, message: impl Into<String>) -> FieldError {
    FieldError {
        field,
        message: message.into(),
    }
}

fn check_list(
    field: &str,
    items: &[String],
    errors: &mut Vec<FieldError>,
    each: impl Fn(&str) -> Option<String>,
) {
    if items.len() > MAX_LIST {
        errors.push(err(field.into(), format!("at most {MAX_LIST} entries")));
    }
    for (i, v) in items.iter().enumerate() {
        if let Some(m) = each(v) {
            errors.push(err(format!("{field}[{i}]"), m));
        }
    }
}

/// Checks a rule request.
pub fn validate(input: RuleInput) -> Result<ValidRule, Vec<FieldError>> {
    let mut errors = Vec::new();
    let name = input.name.trim().to_string();
    if let Err(e) = crate::names::free(&input.name, MAX_NAME_CHARS) {
        errors.push(err("name".into(), e));
    }
    if input.events.is_empty() {
        errors.push(err(
            "events".into(),
            "name at least one event type or notice",
        ));
    }
    check_list("events", &input.events, &mut errors, |e| {
        (!is_trigger(e)).then(|| {
            format!(
                "{e:?} is not an event type ({}) or notice ({})",
                wellknown::EventType::ALL
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                NOTICES.join(", ")
            )
        })
    });
    check_list("reasons", &input.reasons, &mut errors, |r| {
        let known = input
            .events
            .iter()
            .filter_map(|t| wellknown::reasons_for(t))
            .any(|reasons| reasons.contains(&r));
        (!known).then(|| format!("{r:?} is not a reason of the chosen event types"))
    });
    for (field, list) in [
        ("clusters", &input.clusters),
        ("namespaces", &input.namespaces),
    ] {
        check_list(field, list, &mut errors, |p| {
            pattern::validate(p).err().map(|e| e.to_string())
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(ValidRule {
        channel_id: input.channel_id,
        name,
        enabled: input.enabled,
        selector: Selector {
            events: input.events,
            reasons: input.reasons,
            clusters: input.clusters,
            namespaces: input.namespaces,
        },
        team_id: input.team_id,
    })
}

/// A rule as the dispatcher uses it: its selector and the namespaces it is limited to
/// (the rule's team and the channel's team, each when set).
#[derive(Debug, Clone)]
pub struct LiveRule {
    pub id: i64,
    pub channel_id: i64,
    pub selector: Selector,
    pub scopes: Vec<Vec<NamespacePattern>>,
}

impl LiveRule {
    /// True when `item` should go to this rule's channel.
    pub fn matches(&self, item: &Item) -> bool {
        let s = &self.selector;
        if !s.events.contains(&item.trigger) {
            return false;
        }
        if let Some(reasons) = wellknown::reasons_for(&item.trigger) {
            let listed: Vec<&String> = s
                .reasons
                .iter()
                .filter(|r| reasons.contains(&r.as_str()))
                .collect();
            if !listed.is_empty() && !listed.iter().any(|r| **r == item.reason) {
                return false;
            }
        }
        // A fleet-wide notice (no cluster) concerns every cluster.
        if let Some(cluster) = &item.cluster {
            if !s.clusters.is_empty() && !s.clusters.iter().any(|p| pattern::matches(p, cluster)) {
                return false;
            }
            if let Some(ns) = &item.namespace {
                if !s.namespaces.is_empty() && !s.namespaces.iter().any(|p| pattern::matches(p, ns))
                {
                    return false;
                }
            }
        }
        self.scopes.iter().all(|scope| in_scope(scope, item))
    }
}

/// True when `item` is inside a team's namespaces: a workload event in one of them, a
/// cluster notice of a cluster the team has namespaces in, or a fleet-wide notice.
pub fn in_scope(scope: &[NamespacePattern], item: &Item) -> bool {
    match (&item.cluster, &item.namespace) {
        (None, _) => true,
        (Some(c), None) => scope.iter().any(|p| pattern::matches(&p.cluster, c)),
        (Some(c), Some(n)) => scope
            .iter()
            .any(|p| pattern::matches(&p.cluster, c) && pattern::matches(&p.namespace, n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(trigger: &str, reason: &str, cluster: Option<&str>, ns: Option<&str>) -> Item {
        Item {
            seq: 1,
            id: "e1".into(),
            trigger: trigger.into(),
            reason: reason.into(),
            cluster: cluster.map(str::to_string),
            namespace: ns.map(str::to_string),
            time_ms: 0,
            detail: serde_json::Value::Null,
        }
    }

    fn rule(events: &[&str], reasons: &[&str], clusters: &[&str], namespaces: &[&str]) -> LiveRule {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        LiveRule {
            id: 1,
            channel_id: 1,
            selector: Selector {
                events: v(events),
                reasons: v(reasons),
                clusters: v(clusters),
                namespaces: v(namespaces),
            },
            scopes: Vec::new(),
        }
    }

    #[test]
    fn reasons_narrow_only_the_types_they_belong_to() {
        let r = rule(&["applied", "blocked"], &["Paused"], &[], &[]);
        assert!(r.matches(&item("blocked", "Paused", Some("prod"), Some("shop"))));
        assert!(!r.matches(&item("blocked", "Cooldown", Some("prod"), Some("shop"))));
        assert!(r.matches(&item(
            "applied",
            "RecommendationApplied",
            Some("prod"),
            Some("shop")
        )));
        assert!(!r.matches(&item("rolled_back", "OOMKills", Some("prod"), Some("shop"))));
    }

    #[test]
    fn cluster_and_namespace_globs_filter_and_fleet_notices_pass() {
        let r = rule(
            &["applied", "automation_paused"],
            &[],
            &["prod-*"],
            &["pay-*"],
        );
        assert!(r.matches(&item("applied", "x", Some("prod-eu"), Some("pay-api"))));
        assert!(!r.matches(&item("applied", "x", Some("prod-eu"), Some("shop"))));
        assert!(!r.matches(&item("applied", "x", Some("dev"), Some("pay-api"))));
        assert!(r.matches(&item("automation_paused", "", Some("prod-eu"), None)));
        assert!(r.matches(&item("automation_paused", "", None, None)));
    }

    #[test]
    fn a_team_scope_keeps_only_the_teams_namespaces() {
        let mut r = rule(&["applied", "readiness_degraded"], &[], &[], &[]);
        r.scopes = vec![vec![NamespacePattern {
            cluster: "prod".into(),
            namespace: "shop".into(),
        }]];
        assert!(r.matches(&item("applied", "x", Some("prod"), Some("shop"))));
        assert!(!r.matches(&item("applied", "x", Some("prod"), Some("billing"))));
        assert!(r.matches(&item("readiness_degraded", "", Some("prod"), None)));
        assert!(!r.matches(&item("readiness_degraded", "", Some("dev"), None)));
    }

    #[test]
    fn bad_rules_name_each_field() {
        let input = RuleInput {
            channel_id: 1,
            name: " ".into(),
            enabled: true,
            events: vec!["applied".into(), "exploded".into()],
            reasons: vec!["OOMKills".into()],
            clusters: vec!["Prod!".into()],
            namespaces: vec![],
            team_id: None,
            reason: None,
        };
        let fields: Vec<_> = validate(input)
            .unwrap_err()
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["name", "events[1]", "reasons[0]", "clusters[0]"]);
    }
}

//! The channel-independent message: what happened, in a title, a sentence, a line per
//! item, a few facts and a link into the UI, plus the data a webhook receives. Bursts are
//! grouped here: the events one channel gets in one pass become one message per cluster
//! and event type (40 `applied` events of a run are one message, not 40). Pure.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::item::{self, Item};
use crate::runs::workload::workload_id;
use crate::workload::WorkloadKey;

/// Events listed in one message at most; a bigger burst is split.
pub const MAX_EVENTS_PER_MESSAGE: usize = 50;
/// Lines shown in chat and email; the rest are counted ("and 12 more").
pub const MAX_LINES: usize = 15;

/// What a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MessageKind {
    Events,
    Notice,
    Digest,
    Test,
}

impl MessageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::Events => "events",
            MessageKind::Notice => "notice",
            MessageKind::Digest => "digest",
            MessageKind::Test => "test",
        }
    }
}

/// How loud: decides colours and emoji, never routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Good,
    Info,
    Warning,
    Critical,
}

/// A name and value shown side by side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Fact {
    pub name: String,
    pub value: String,
}

/// One message, rendered per channel kind at send time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub kind: MessageKind,
    pub severity: Severity,
    pub title: String,
    pub text: String,
    pub lines: Vec<String>,
    /// Lines left out of `lines`.
    pub more: usize,
    pub facts: Vec<Fact>,
    /// Where in the UI to look.
    pub link: Option<String>,
    /// What webhooks receive as `data`: the events, the notice or the digest report.
    pub data: Value,
}

/// A message and the ids of the events it carries.
pub type Composed = (Message, Vec<String>);

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn fact(name: &str, value: impl Into<String>) -> Fact {
    Fact {
        name: name.into(),
        value: value.into(),
    }
}

/// The messages for the items one channel gets in one pass (in log order).
pub fn compose(items: &[&Item], base_url: &str) -> Vec<Composed> {
    let mut out = Vec::new();
    let mut groups: Vec<((String, String), Vec<&Item>)> = Vec::new();
    for it in items {
        if it.is_notice() {
            out.push((notice(it, base_url), vec![it.id.clone()]));
            continue;
        }
        let key = (it.cluster.clone().unwrap_or_default(), it.trigger.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(it),
            None => groups.push((key, vec![it])),
        }
    }
    for (_, group) in groups {
        for chunk in group.chunks(MAX_EVENTS_PER_MESSAGE) {
            let ids = chunk.iter().map(|i| i.id.clone()).collect();
            out.push((events(chunk, base_url), ids));
        }
    }
    out
}

/// The event's workload (its parts empty where the stored event lacks them).
fn workload_of(it: &Item) -> WorkloadKey {
    let w = &it.detail["workload"];
    let s = |k: &str| w[k].as_str().unwrap_or("").to_string();
    WorkloadKey::new(&s("namespace"), s("kind"), &s("name"))
}

/// `app: cpu 500m→250m, memory 1Gi→512Mi (limit memory 1Gi→512Mi)`.
fn changes(detail: &Value) -> String {
    let mut parts = Vec::new();
    for c in detail["containers"].as_array().into_iter().flatten() {
        let mut values = Vec::new();
        for (setting, label) in [("requests", ""), ("limits", "limit ")] {
            for res in ["cpu", "memory"] {
                let from = c["from"][setting][res].as_str();
                let to = c["to"][setting][res].as_str();
                if from.is_some() || to.is_some() {
                    values.push(format!(
                        "{label}{res} {}→{}",
                        from.unwrap_or("unset"),
                        to.unwrap_or("unset")
                    ));
                }
            }
        }
        parts.push(format!(
            "{}: {}",
            c["name"].as_str().unwrap_or("?"),
            values.join(", ")
        ));
    }
    parts.join("; ")
}

fn event_line(it: &Item) -> String {
    let mut line = format!("{} — {}", workload_of(it), it.reason);
    let ch = changes(&it.detail);
    if !ch.is_empty() {
        line.push_str(&format!(": {ch}"));
    }
    if let Some(m) = it.detail["message"].as_str().filter(|m| !m.is_empty()) {
        line.push_str(&format!(" ({m})"));
    }
    line
}

fn severity_of(trigger: &str) -> Severity {
    match trigger {
        "rolled_back" | "failed" => Severity::Critical,
        "blocked" | "fallback" => Severity::Warning,
        "applied" => Severity::Good,
        _ => Severity::Info,
    }
}

fn events(chunk: &[&Item], base_url: &str) -> Message {
    let first = chunk[0];
    let cluster = first.cluster.clone().unwrap_or_default();
    let n = chunk.len();
    let workload = workload_of(first);
    let title = if n == 1 {
        let what = format!("{workload} in {cluster}");
        match first.trigger.as_str() {
            "applied" => format!("Resized {what}"),
            "rolled_back" => format!("Rolled back {what}"),
            "failed" => format!("Action failed on {what}"),
            "blocked" => format!("Change blocked on {what}"),
            "skipped" => format!("Change skipped on {what}"),
            "fallback" => format!("In-place resize fell back to a rollout on {what}"),
            _ => format!("Released {what} to its GitOps values"),
        }
    } else {
        let count = match first.trigger.as_str() {
            "applied" => plural(n, "change applied", "changes applied"),
            "rolled_back" => plural(n, "rollback", "rollbacks"),
            "failed" => plural(n, "action failed", "actions failed"),
            "blocked" => plural(n, "change blocked", "changes blocked"),
            "skipped" => plural(n, "change skipped", "changes skipped"),
            "fallback" => plural(
                n,
                "resize fell back to a rollout",
                "resizes fell back to a rollout",
            ),
            _ => plural(n, "workload released", "workloads released"),
        };
        format!("{count} in {cluster}")
    };
    let lines: Vec<String> = chunk
        .iter()
        .take(MAX_LINES)
        .map(|i| event_line(i))
        .collect();
    let link = if n == 1 {
        format!(
            "{base_url}/workloads/{}",
            workload_id(
                &cluster,
                &workload.namespace,
                &workload.kind,
                &workload.name
            )
        )
    } else {
        format!("{base_url}/audit?cluster={cluster}&type={}", first.trigger)
    };
    let mut reasons: Vec<&str> = chunk.iter().map(|i| i.reason.as_str()).collect();
    reasons.dedup();
    Message {
        kind: MessageKind::Events,
        severity: severity_of(&first.trigger),
        text: format!(
            "kerf reported {} of type {} in cluster {cluster}.",
            plural(n, "event", "events"),
            first.trigger
        ),
        title,
        more: n.saturating_sub(MAX_LINES),
        lines,
        facts: vec![
            fact("Cluster", &cluster),
            fact("Type", &first.trigger),
            fact("Reasons", reasons.join(", ")),
        ],
        link: Some(link),
        data: json!({ "events": chunk.iter().map(|i| i.detail.clone()).collect::<Vec<_>>() }),
    }
}

fn notice(it: &Item, base_url: &str) -> Message {
    let d = &it.detail;
    let scope = it
        .cluster
        .clone()
        .map_or_else(|| "the whole fleet".to_string(), |c| format!("cluster {c}"));
    let actor = d["actor"]["name"].as_str().unwrap_or("someone").to_string();
    let why = d["reason"].as_str().unwrap_or("").to_string();
    let (severity, title, text) = match it.trigger.as_str() {
        item::READINESS_DEGRADED => (
            if it.reason == "not-ready" {
                Severity::Critical
            } else {
                Severity::Warning
            },
            format!(
                "{} is {} (was {})",
                capital(&scope),
                it.reason,
                d["before"]["state"].as_str().unwrap_or("?")
            ),
            format!("Automation in {scope} is held back until it is ready again. {why}"),
        ),
        item::READINESS_RECOVERED => (
            Severity::Good,
            format!(
                "{} is {} again (was {})",
                capital(&scope),
                it.reason,
                d["before"]["state"].as_str().unwrap_or("?")
            ),
            why,
        ),
        item::AUTOMATION_PAUSED => {
            let until = d["after"]["resumeAt"]
                .as_str()
                .map(|t| format!(" until {t}"))
                .unwrap_or_default();
            (
                Severity::Warning,
                format!("Automation paused in {scope}{until}"),
                format!(
                    "Paused by {actor}: {why}. Agents change no workload; rollbacks still run."
                ),
            )
        }
        item::AUTOMATION_RESUMED => (
            Severity::Info,
            format!("Automation resumed in {scope}"),
            format!("Resumed by {actor}. {why}"),
        ),
        _ => (
            Severity::Critical,
            format!("Recommendation run of {scope} failed"),
            d["errors"]
                .as_array()
                .and_then(|e| e.first())
                .and_then(|e| e["message"].as_str())
                .unwrap_or("see the run for its errors")
                .to_string(),
        ),
    };
    // Readiness, pauses and runs are all shown per cluster on the clusters page.
    let link = format!("{base_url}/clusters");
    Message {
        kind: MessageKind::Notice,
        severity,
        title,
        text: text.trim().to_string(),
        lines: Vec::new(),
        more: 0,
        facts: vec![fact("Scope", scope), fact("Notice", &it.trigger)],
        link: Some(link),
        data: json!({ "notice": d }),
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The message `POST .../channels/{id}/test` sends.
pub fn test_message(channel: &str, base_url: &str, now_text: &str) -> Message {
    Message {
        kind: MessageKind::Test,
        severity: Severity::Info,
        title: format!("Test message from kerf to {channel}"),
        text: "If you can read this, kerf can reach this channel. Nothing else happened.".into(),
        lines: Vec::new(),
        more: 0,
        facts: vec![fact("Channel", channel), fact("Sent", now_text)],
        link: Some(format!("{base_url}/notifications")),
        data: json!({ "test": true }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(id: &str, cluster: &str, name: &str) -> Item {
        Item {
            seq: 1,
            id: id.into(),
            trigger: "applied".into(),
            reason: "RecommendationApplied".into(),
            cluster: Some(cluster.into()),
            namespace: Some("shop".into()),
            time_ms: 0,
            detail: json!({"id": id, "workload": {"namespace": "shop", "kind": "Deployment", "name": name},
                "containers": [{"name": "app", "from": {"requests": {"cpu": "500m"}}, "to": {"requests": {"cpu": "250m"}}}]}),
        }
    }

    #[test]
    fn forty_applied_events_of_one_cluster_are_one_message() {
        let items: Vec<Item> = (0..40)
            .map(|i| applied(&format!("e{i}"), "prod", &format!("w{i}")))
            .collect();
        let refs: Vec<&Item> = items.iter().collect();
        let out = compose(&refs, "http://kerf");
        assert_eq!(out.len(), 1);
        let (m, ids) = &out[0];
        assert_eq!(ids.len(), 40);
        assert_eq!(m.title, "40 changes applied in prod");
        assert_eq!(m.lines.len(), MAX_LINES);
        assert_eq!(m.more, 25);
        assert_eq!(
            m.lines[0],
            "shop/Deployment/w0 — RecommendationApplied: app: cpu 500m→250m"
        );
        assert_eq!(m.data["events"].as_array().map(Vec::len), Some(40));
        assert_eq!(
            m.link.as_deref(),
            Some("http://kerf/audit?cluster=prod&type=applied")
        );
    }

    #[test]
    fn clusters_and_types_split_groups_and_big_bursts_are_chunked() {
        let mut items: Vec<Item> = (0..120)
            .map(|i| applied(&format!("e{i}"), "prod", "w"))
            .collect();
        items.push(applied("x", "dev", "w"));
        let refs: Vec<&Item> = items.iter().collect();
        let sizes: Vec<usize> = compose(&refs, "")
            .iter()
            .map(|(_, ids)| ids.len())
            .collect();
        assert_eq!(sizes, [50, 50, 20, 1]);
    }

    #[test]
    fn a_single_event_links_to_its_workload() {
        let it = applied("e1", "prod", "catalog");
        let (m, _) = &compose(&[&it], "http://kerf")[0];
        assert_eq!(m.title, "Resized shop/Deployment/catalog in prod");
        let id = workload_id("prod", "shop", "Deployment", "catalog");
        assert_eq!(m.link.clone(), Some(format!("http://kerf/workloads/{id}")));
    }
}

//! A message as each kind of receiver wants it: a Slack Block Kit message, a Microsoft
//! Teams Adaptive Card, kerf's own webhook JSON, and an email (plain text + HTML).
//! docs/contracts/notifications.md shows each shape. Pure.

use serde_json::{json, Value};

use super::message::{Message, Severity};

/// Slack's limits: header text 150 characters, a section's text 3000.
const SLACK_HEADER_MAX: usize = 150;
const SLACK_SECTION_MAX: usize = 3000;

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

fn emoji(s: Severity) -> &'static str {
    match s {
        Severity::Good => "✅",
        Severity::Info => "ℹ️",
        Severity::Warning => "⚠️",
        Severity::Critical => "🚨",
    }
}

fn bullet_lines(m: &Message, bullet: &str) -> String {
    let mut text: Vec<String> = m.lines.iter().map(|l| format!("{bullet}{l}")).collect();
    if m.more > 0 {
        text.push(format!("…and {} more", m.more));
    }
    text.join("\n")
}

/// Slack mrkdwn needs `&`, `<` and `>` escaped.
fn slack_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The body POSTed to a Slack incoming webhook.
pub fn slack(m: &Message, delivery_id: &str) -> Value {
    let title = format!("{} {}", emoji(m.severity), m.title);
    let mut blocks = vec![json!({
        "type": "header",
        "text": {"type": "plain_text", "text": clip(&title, SLACK_HEADER_MAX), "emoji": true}
    })];
    if !m.text.is_empty() {
        blocks.push(json!({"type": "section", "text": {"type": "mrkdwn", "text": clip(&slack_escape(&m.text), SLACK_SECTION_MAX)}}));
    }
    if !m.lines.is_empty() {
        let lines = slack_escape(&bullet_lines(m, "• "));
        blocks.push(json!({"type": "section", "text": {"type": "mrkdwn", "text": clip(&lines, SLACK_SECTION_MAX)}}));
    }
    if !m.facts.is_empty() {
        let fields: Vec<Value> = m
            .facts
            .iter()
            .take(10)
            .map(|f| json!({"type": "mrkdwn", "text": clip(&format!("*{}*\n{}", slack_escape(&f.name), slack_escape(&f.value)), 2000)}))
            .collect();
        blocks.push(json!({"type": "section", "fields": fields}));
    }
    if let Some(link) = &m.link {
        blocks.push(json!({"type": "actions", "elements": [{
            "type": "button", "text": {"type": "plain_text", "text": "Open in kerf"}, "url": link
        }]}));
    }
    blocks.push(json!({"type": "context", "elements": [{
        "type": "mrkdwn", "text": format!("kerf · {} · delivery {delivery_id}", m.kind.as_str())
    }]}));
    json!({ "text": clip(&title, SLACK_SECTION_MAX), "blocks": blocks })
}

/// The body POSTed to a Teams incoming webhook: a message with one Adaptive Card.
pub fn teams(m: &Message, delivery_id: &str) -> Value {
    let color = match m.severity {
        Severity::Good => "Good",
        Severity::Info => "Default",
        Severity::Warning => "Warning",
        Severity::Critical => "Attention",
    };
    let mut body = vec![json!({
        "type": "TextBlock", "size": "Large", "weight": "Bolder", "wrap": true,
        "color": color, "text": m.title
    })];
    if !m.text.is_empty() {
        body.push(json!({"type": "TextBlock", "wrap": true, "text": m.text}));
    }
    if !m.lines.is_empty() {
        body.push(json!({"type": "TextBlock", "wrap": true, "text": bullet_lines(m, "- ")}));
    }
    if !m.facts.is_empty() {
        let facts: Vec<Value> = m
            .facts
            .iter()
            .map(|f| json!({"title": f.name, "value": f.value}))
            .collect();
        body.push(json!({"type": "FactSet", "facts": facts}));
    }
    body.push(json!({
        "type": "TextBlock", "wrap": true, "isSubtle": true, "size": "Small",
        "text": format!("kerf · {} · delivery {delivery_id}", m.kind.as_str())
    }));
    let actions: Vec<Value> = m
        .link
        .iter()
        .map(|url| json!({"type": "Action.OpenUrl", "title": "Open in kerf", "url": url}))
        .collect();
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": body,
                "actions": actions
            }
        }]
    })
}

/// kerf's own webhook body (signed by the sender).
pub fn webhook(m: &Message, delivery_id: &str, channel: (i64, &str)) -> Value {
    json!({
        "deliveryId": delivery_id,
        "kind": m.kind,
        "severity": m.severity,
        "title": m.title,
        "text": m.text,
        "lines": m.lines,
        "more": m.more,
        "facts": m.facts,
        "link": m.link,
        "channel": {"id": channel.0, "name": channel.1},
        "data": m.data,
    })
}

/// An email: (subject, plain text, HTML).
pub fn email(m: &Message, delivery_id: &str) -> (String, String, String) {
    let subject = clip(&format!("[kerf] {}", m.title), 200);
    let mut text = format!("{}\n\n", m.title);
    if !m.text.is_empty() {
        text.push_str(&format!("{}\n\n", m.text));
    }
    if !m.lines.is_empty() {
        text.push_str(&format!("{}\n\n", bullet_lines(m, "- ")));
    }
    for f in &m.facts {
        text.push_str(&format!("{}: {}\n", f.name, f.value));
    }
    if let Some(link) = &m.link {
        text.push_str(&format!("\nOpen in kerf: {link}\n"));
    }
    text.push_str(&format!(
        "\n-- \nkerf · {} · delivery {delivery_id}\n",
        m.kind.as_str()
    ));
    let e = html_escape;
    let mut html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\"><h2>{}</h2>",
        e(&m.title)
    );
    if !m.text.is_empty() {
        html.push_str(&format!("<p>{}</p>", e(&m.text)));
    }
    if !m.lines.is_empty() {
        html.push_str("<ul>");
        for l in &m.lines {
            html.push_str(&format!("<li>{}</li>", e(l)));
        }
        if m.more > 0 {
            html.push_str(&format!("<li>…and {} more</li>", m.more));
        }
        html.push_str("</ul>");
    }
    if !m.facts.is_empty() {
        html.push_str("<table>");
        for f in &m.facts {
            html.push_str(&format!(
                "<tr><th align=\"left\">{}</th><td>{}</td></tr>",
                e(&f.name),
                e(&f.value)
            ));
        }
        html.push_str("</table>");
    }
    if let Some(link) = &m.link {
        html.push_str(&format!("<p><a href=\"{}\">Open in kerf</a></p>", e(link)));
    }
    html.push_str(&format!(
        "<p style=\"color:#777;font-size:small\">kerf · {} · delivery {}</p></body></html>",
        m.kind.as_str(),
        e(delivery_id)
    ));
    (subject, text, html)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::{Fact, MessageKind};

    fn message() -> Message {
        Message {
            kind: MessageKind::Events,
            severity: Severity::Critical,
            title: "2 rollbacks in prod".into(),
            text: "kerf reported 2 events <urgent> & more.".into(),
            lines: vec!["shop/Deployment/a — OOMKills".into()],
            more: 1,
            facts: vec![Fact {
                name: "Cluster".into(),
                value: "prod".into(),
            }],
            link: Some("http://kerf/audit?cluster=prod&type=rolled_back".into()),
            data: json!({"events": []}),
        }
    }

    #[test]
    fn slack_gets_block_kit_with_escaped_text_and_a_button() {
        let v = slack(&message(), "d1");
        assert_eq!(v["blocks"][0]["type"], "header");
        assert_eq!(v["blocks"][0]["text"]["text"], "🚨 2 rollbacks in prod");
        assert_eq!(
            v["blocks"][1]["text"]["text"],
            "kerf reported 2 events &lt;urgent&gt; &amp; more."
        );
        assert_eq!(
            v["blocks"][2]["text"]["text"],
            "• shop/Deployment/a — OOMKills\n…and 1 more"
        );
        assert_eq!(
            v["blocks"][4]["elements"][0]["url"],
            "http://kerf/audit?cluster=prod&type=rolled_back"
        );
        assert!(v["text"].as_str().is_some_and(|t| t.contains("rollbacks")));
    }

    #[test]
    fn teams_gets_an_adaptive_card() {
        let v = teams(&message(), "d1");
        let card = &v["attachments"][0];
        assert_eq!(
            card["contentType"],
            "application/vnd.microsoft.card.adaptive"
        );
        assert_eq!(card["content"]["type"], "AdaptiveCard");
        assert_eq!(card["content"]["body"][0]["color"], "Attention");
        assert_eq!(card["content"]["body"][3]["type"], "FactSet");
        assert_eq!(card["content"]["actions"][0]["type"], "Action.OpenUrl");
    }

    #[test]
    fn email_has_a_subject_text_and_escaped_html() {
        let (subject, text, html) = email(&message(), "d1");
        assert_eq!(subject, "[kerf] 2 rollbacks in prod");
        assert!(
            text.contains("- shop/Deployment/a — OOMKills\n…and 1 more"),
            "{text}"
        );
        assert!(text.contains("Open in kerf: http://kerf/audit?cluster=prod&type=rolled_back"));
        assert!(html.contains("&lt;urgent&gt; &amp; more"), "{html}");
        assert!(html.contains("href=\"http://kerf/audit?cluster=prod&amp;type=rolled_back\""));
    }
}

//! Issue 36, defect 6: a name with a line break, NUL or escape could forge log lines
//! and terminal output. Every name a person gives (notification channels and rules,
//! policies, teams, clusters, datasources, API tokens, users, display names) refuses a
//! control character with the route's 400 naming the field, and nothing is created.

use serde_json::{json, Value};

use crate::support::hub::{hub, Hub};

const CLUSTER: &str = "prod";

/// Control characters an attacker would use: a forged log line, NUL, an ANSI colour
/// and C1's next-line.
const FORGERIES: [&str; 4] = [
    "ops\r\n2031-01-01T00:00:00Z  INFO kerf: forged",
    "ops\u{0}x",
    "ops\u{1b}[31mred",
    "ops\u{85}next",
];

/// The field a 400 names: `details.field`, or the first of `details.errors` (`field`,
/// or `path` for policies).
fn field_at_fault(v: &Value) -> String {
    let d = &v["error"]["details"];
    let first = &d["errors"][0];
    d["field"]
        .as_str()
        .or_else(|| first["field"].as_str())
        .or_else(|| first["path"].as_str())
        .unwrap_or_default()
        .trim_start_matches("$.")
        .to_string()
}

async fn refused(h: &Hub, method: &str, path: &str, body: Value, field: &str) {
    let (s, v) = h.api.call(method, path, Some(body.clone())).await;
    assert_eq!(s, 400, "{method} {path} with {body} answered {s}: {v}");
    assert_eq!(field_at_fault(&v), field, "{method} {path}: {v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_characters_are_refused_in_every_name_with_a_field_error() {
    let h = hub(CLUSTER, false).await;
    let slack = "https://hooks.slack.com/services/T0000/B0000/abcdefabcdef";
    let channel = h
        .api
        .post_ok(
            "/v1/notifications/channels",
            json!({"name": "ops", "type": "slack", "url": slack}),
        )
        .await;
    let channel_id = channel["id"].as_i64().expect("channel id");
    let rule = h
        .api
        .post_ok(
            "/v1/notifications/rules",
            json!({"channelId": channel_id, "name": "r", "events": ["blocked"]}),
        )
        .await;
    let user = h
        .api
        .post_ok("/v1/admin/users", json!({"username": "ann"}))
        .await;
    let (channels, rules) = (
        "/v1/notifications/channels",
        "/v1/notifications/rules".to_string(),
    );
    let rule_path = format!("{rules}/{}", rule["id"]);
    let user_path = format!(
        "/v1/admin/users/{}",
        user["user"]["id"].as_str().expect("user id")
    );
    for bad in FORGERIES {
        let cases = [
            (
                "POST",
                channels.to_string(),
                json!({"name": bad, "type": "slack", "url": slack}),
                "name",
            ),
            (
                "PUT",
                format!("{channels}/{channel_id}"),
                json!({"name": bad, "type": "slack"}),
                "name",
            ),
            (
                "POST",
                rules.clone(),
                json!({"channelId": channel_id, "name": bad, "events": ["blocked"]}),
                "name",
            ),
            (
                "PUT",
                rule_path.clone(),
                json!({"channelId": channel_id, "name": bad, "events": ["blocked"]}),
                "name",
            ),
            ("POST", "/v1/policies".into(), json!({"name": bad}), "name"),
            (
                "POST",
                "/v1/policies".into(),
                json!({"name": "p1", "description": bad}),
                "description",
            ),
            (
                "POST",
                "/v1/admin/teams".into(),
                json!({"name": bad}),
                "name",
            ),
            (
                "POST",
                "/v1/admin/teams".into(),
                json!({"name": "t1", "description": bad}),
                "description",
            ),
            ("POST", "/v1/clusters".into(), json!({"name": bad}), "name"),
            (
                "PATCH",
                format!("/v1/clusters/{CLUSTER}"),
                json!({"displayName": bad}),
                "displayName",
            ),
            (
                "POST",
                "/v1/datasources".into(),
                json!({"name": bad, "type": "prometheus", "url": "http://127.0.0.1:9"}),
                "name",
            ),
            (
                "POST",
                "/v1/admin/tokens".into(),
                json!({"name": bad, "role": "viewer"}),
                "name",
            ),
            (
                "POST",
                "/v1/admin/users".into(),
                json!({"username": bad}),
                "username",
            ),
            (
                "POST",
                "/v1/admin/users".into(),
                json!({"username": "bob", "displayName": bad}),
                "displayName",
            ),
            (
                "PATCH",
                user_path.clone(),
                json!({"displayName": bad}),
                "displayName",
            ),
        ];
        for (method, path, body, field) in cases {
            refused(&h, method, &path, body, field).await;
        }
    }
    // Nothing was made or changed by the refusals.
    let (_, list) = h.api.get(channels).await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list["items"][0]["name"], "ops");
    let (_, users) = h.api.get("/v1/admin/users").await;
    let shown = users.to_string();
    assert!(
        !shown.contains("bob") && !shown.contains("forged"),
        "{users}"
    );
    let (_, teams) = h.api.get("/v1/admin/teams").await;
    assert_eq!(teams["items"], json!([]), "{teams}");
}

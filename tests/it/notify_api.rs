//! The notification API against the real binary: every change audited with the
//! contract's `Notification*` action (masked targets only), bad input answered 400 with
//! the field named, the test button reporting what the receiver answered, and the hub's
//! own notices (pause / resume) reaching a channel through its default rule.

use std::time::Duration;

use serde_json::json;

use crate::support::receiver::{Receiver, Shape};
use crate::support::{error_code, Api, DataDir};

const SECRET: &str = "api-signing-secret-0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn changes_are_audited_bad_input_is_named_and_notices_flow_through_default_rules() {
    let data = DataDir::new();
    data.create_cluster("prod");
    let admin = data.admin_token();
    let kerf = data.start_for_local_receivers();
    let base = kerf.url("");
    let rx = Receiver::start(Shape::Webhook, "hooks/apipathsecret0007", Some(SECRET)).await;

    // Bad input: each answer names the field.
    for (body, field) in [
        (json!({"name": "x", "type": "pager"}), "type"),
        (
            json!({"name": "x", "type": "webhook", "url": "ftp://nope", "signingSecret": SECRET}),
            "url",
        ),
        (
            json!({"name": "x", "type": "webhook", "url": rx.url}),
            "signingSecret",
        ),
        (json!({"name": "", "type": "slack", "url": rx.url}), "name"),
        (
            json!({"name": "x", "type": "slack", "url": rx.url, "colour": "red"}),
            "colour",
        ),
        (
            json!({"name": "x", "type": "email", "email": {"host": "smtp", "from": "nope", "to": []}}),
            "email.from",
        ),
        (
            json!({"name": "x", "type": "slack", "url": rx.url, "teamId": 999}),
            "teamId",
        ),
    ] {
        let (s, v) = Api::new(&base, &admin)
            .call("POST", "/v1/notifications/channels", Some(body.clone()))
            .await;
        assert_eq!(s, 400, "{body} → {v}");
        error_code(&v);
        assert_eq!(v["error"]["details"]["field"], field, "{body} → {v}");
    }

    // Create: the default rule comes along; both are audited, the URL masked.
    let body = json!({"name": "ops", "type": "webhook", "url": rx.url, "signingSecret": SECRET, "reason": "on-call hears rollbacks"});
    let (s, ch) = Api::new(&base, &admin)
        .call("POST", "/v1/notifications/channels", Some(body))
        .await;
    assert_eq!(s, 201, "{ch}");
    let id = ch["id"].as_i64().expect("id");
    assert_eq!(
        (ch["urlSet"].as_bool(), ch["signingSecretSet"].as_bool()),
        (Some(true), Some(true))
    );
    assert!(
        ch["target"]
            .as_str()
            .is_some_and(|t| t.starts_with("http://127.0.0.1:") && !t.contains("apipathsecret")),
        "{ch}"
    );
    let (_, rules) = Api::new(&base, &admin)
        .call(
            "GET",
            &format!("/v1/notifications/rules?channelId={id}"),
            None,
        )
        .await;
    let rule = &rules["items"][0];
    assert_eq!(
        rule["events"],
        json!([
            "applied",
            "blocked",
            "rolled_back",
            "failed",
            "readiness_degraded",
            "readiness_recovered",
            "automation_paused",
            "automation_resumed",
            "run_failed"
        ])
    );
    let rule_id = rule["id"].as_i64().expect("rule id");

    for (body, field) in [
        (
            json!({"channelId": id, "name": "r", "events": []}),
            "events",
        ),
        (
            json!({"channelId": id, "name": "r", "events": ["exploded"]}),
            "events[0]",
        ),
        (
            json!({"channelId": id, "name": "r", "events": ["blocked"], "reasons": ["OOMKills"]}),
            "reasons[0]",
        ),
        (
            json!({"channelId": id, "name": "r", "events": ["blocked"], "namespaces": ["Pay Ments"]}),
            "namespaces[0]",
        ),
        (
            json!({"channelId": 4242, "name": "r", "events": ["blocked"]}),
            "channelId",
        ),
    ] {
        let (s, v) = Api::new(&base, &admin)
            .call("POST", "/v1/notifications/rules", Some(body.clone()))
            .await;
        assert_eq!(
            (s, v["error"]["details"]["field"].as_str()),
            (400, Some(field)),
            "{body} → {v}"
        );
    }
    for (body, field) in [
        (
            json!({"enabled": true, "schedule": "every monday"}),
            "schedule",
        ),
        (
            json!({"enabled": true, "timeZone": "Europe/Atlantis"}),
            "timeZone",
        ),
        (
            json!({"enabled": true, "schedule": "*/10 * * * *"}),
            "schedule",
        ),
    ] {
        let (s, v) = Api::new(&base, &admin)
            .call(
                "PUT",
                &format!("/v1/notifications/channels/{id}/digest"),
                Some(body.clone()),
            )
            .await;
        assert_eq!(
            (s, v["error"]["details"]["field"].as_str()),
            (400, Some(field)),
            "{body} → {v}"
        );
    }
    assert_eq!(
        Api::new(&base, &admin)
            .call("GET", "/v1/notifications/channels/77", None)
            .await
            .0,
        404
    );
    assert_eq!(
        Api::new(&base, &admin)
            .call("GET", "/v1/notifications/deliveries?status=lost", None)
            .await
            .0,
        400
    );

    // Changes of every kind, then the audit names each with its action.
    let digest = json!({"enabled": true, "schedule": "0 8 * * 5", "timeZone": "America/New_York"});
    let (s, v) = Api::new(&base, &admin)
        .call(
            "PUT",
            &format!("/v1/notifications/channels/{id}/digest"),
            Some(digest),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["digest"]["timeZone"], "America/New_York");
    let replace = json!({"name": "ops-renamed", "type": "webhook"});
    let (s, v) = Api::new(&base, &admin)
        .call(
            "PUT",
            &format!("/v1/notifications/channels/{id}"),
            Some(replace),
        )
        .await;
    assert_eq!(s, 200, "secrets kept when left out: {v}");
    let edit = json!({"channelId": id, "name": "pauses only", "events": ["automation_paused", "automation_resumed"]});
    assert_eq!(
        Api::new(&base, &admin)
            .call(
                "PUT",
                &format!("/v1/notifications/rules/{rule_id}"),
                Some(edit)
            )
            .await
            .0,
        200
    );
    let (s, extra) = Api::new(&base, &admin)
        .call(
            "POST",
            "/v1/notifications/rules",
            Some(json!({"channelId": id, "name": "tmp", "events": ["failed"]})),
        )
        .await;
    assert_eq!(s, 201, "{extra}");
    assert_eq!(
        Api::new(&base, &admin)
            .call(
                "DELETE",
                &format!("/v1/notifications/rules/{}?reason=unused", extra["id"]),
                None
            )
            .await
            .0,
        204
    );
    let (_, audit) = Api::new(&base, &admin)
        .call(
            "GET",
            "/v1/audit/config?targetType=notification&limit=100",
            None,
        )
        .await;
    let actions: Vec<&str> = audit["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|c| c["action"].as_str())
        .collect();
    for a in [
        "NotificationChannelCreated",
        "NotificationRuleCreated",
        "NotificationDigestUpdated",
        "NotificationChannelUpdated",
        "NotificationRuleUpdated",
        "NotificationRuleDeleted",
    ] {
        assert!(actions.contains(&a), "{a} in {actions:?}");
    }
    let digest_change = audit["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|c| c["action"] == "NotificationDigestUpdated")
        .expect("digest change");
    assert_eq!(
        (
            digest_change["target"]["id"].as_str(),
            digest_change["target"]["name"].as_str()
        ),
        (Some("digest"), Some("ops"))
    );
    let created = audit["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|c| c["action"] == "NotificationChannelCreated")
        .expect("created");
    assert_eq!(created["reason"], "on-call hears rollbacks");
    assert_eq!(
        created["after"]["target"], ch["target"],
        "only the masked URL is recorded"
    );

    // The test button: the status and kerf's verdict are reported (never the receiver's
    // own text) and logged, failures too.
    let (s, t) = Api::new(&base, &admin)
        .call(
            "POST",
            &format!("/v1/notifications/channels/{id}/test"),
            None,
        )
        .await;
    assert_eq!(
        (
            s,
            t["delivered"].as_bool(),
            t["status"].as_i64(),
            t["answer"].as_str()
        ),
        (200, Some(true), Some(200), Some("delivered")),
        "{t}"
    );
    rx.fail_next(1);
    let (_, t) = Api::new(&base, &admin)
        .call(
            "POST",
            &format!("/v1/notifications/channels/{id}/test"),
            None,
        )
        .await;
    assert_eq!(
        (t["delivered"].as_bool(), t["status"].as_i64()),
        (Some(false), Some(500)),
        "{t}"
    );
    assert_eq!(t["answer"], "refused by the receiver", "{t}");
    assert!(
        !t.to_string().contains("no route for") && !t.to_string().contains("apipathsecret"),
        "the receiver's words stay out: {t}"
    );
    let (_, log) = Api::new(&base, &admin)
        .call("GET", "/v1/notifications/deliveries?kind=test", None)
        .await;
    let statuses: Vec<&str> = log["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|d| d["status"].as_str())
        .collect();
    assert_eq!(statuses, ["failed", "delivered"], "newest first: {log}");
    assert!(log["items"][0]["lastError"]
        .as_str()
        .is_some_and(|e| e.contains("500")));

    // A pause and a resume reach the channel as notices.
    let (s, v) = Api::new(&base, &admin)
        .call(
            "POST",
            "/v1/clusters/prod/pause",
            Some(json!({"reason": "incident 42"})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        Api::new(&base, &admin)
            .call("POST", "/v1/clusters/prod/resume", Some(json!({})))
            .await
            .0,
        200
    );
    rx.wait_until(Duration::from_secs(10), "pause and resume notices", |g| {
        g.iter().filter(|m| m.kind == "notice").count() == 2
    })
    .await;
    let titles: Vec<String> = rx
        .accepted()
        .iter()
        .filter(|m| m.kind == "notice")
        .map(|m| m.body["title"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        titles,
        [
            "Automation paused in cluster prod",
            "Automation resumed in cluster prod"
        ]
    );
    let paused = rx
        .accepted()
        .into_iter()
        .find(|m| m.kind == "notice")
        .expect("notice");
    assert!(
        paused.body["text"]
            .as_str()
            .is_some_and(|t| t.contains("incident 42")),
        "{}",
        paused.body
    );

    assert_eq!(
        Api::new(&base, &admin)
            .call("DELETE", &format!("/v1/notifications/channels/{id}"), None)
            .await
            .0,
        204
    );
    let (_, audit) = Api::new(&base, &admin)
        .call(
            "GET",
            "/v1/audit/config?action=NotificationChannelDeleted",
            None,
        )
        .await;
    assert_eq!(audit["items"][0]["target"]["id"], id.to_string());
    assert_eq!(kerf.stop(), Some(0));
}

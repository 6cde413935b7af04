//! Notification channels under team roles, against the real binary: a team editor
//! creates and changes only their team's channels (a fleet-wide or another team's is
//! refused), team members see only their teams' channels and rules, team viewers only
//! read, and a team channel's digest is the team's.

use serde_json::{json, Value};

use crate::support::{Api, DataDir};

async fn token(base: &str, admin: &str, role: &str, team: &str) -> String {
    let (s, v) = Api::new(base, admin)
        .call(
            "POST",
            "/v1/admin/tokens",
            Some(json!({"name": role, "role": role, "team": team})),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    v["value"].as_str().expect("value").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn team_editors_manage_only_their_teams_channels_and_team_viewers_only_read_them() {
    let data = DataDir::new();
    data.create_cluster("prod");
    let admin = data.admin_token();
    let kerf = data.start_for_local_receivers();
    let base = kerf.url("");
    let mut teams: Vec<String> = Vec::new();
    for (name, ns) in [("shop", "shop-*"), ("billing", "billing")] {
        let body = json!({"name": name, "namespaces": [{"cluster": "prod", "namespace": ns}]});
        let (s, t) = Api::new(&base, &admin)
            .call("POST", "/v1/admin/teams", Some(body))
            .await;
        assert_eq!(s, 201, "{t}");
        teams.push(t["id"].as_str().expect("id").to_string());
    }
    let (shop, billing) = (
        teams[0].parse::<i64>().expect("id"),
        teams[1].parse::<i64>().expect("id"),
    );
    let editor = token(&base, &admin, "team-editor", &teams[0]).await;
    let viewer = token(&base, &admin, "team-viewer", &teams[0]).await;
    let url = "http://127.0.0.1:9/hooks/never-called";
    let ch = |name: &str, team: Option<i64>| json!({"name": name, "type": "slack", "url": url, "teamId": team});

    let (s, v) = Api::new(&base, &editor)
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(ch("fleet-wide", None)),
        )
        .await;
    assert_eq!(s, 403, "a team editor cannot create a fleet channel: {v}");
    let (s, v) = Api::new(&base, &editor)
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(ch("theirs", Some(billing))),
        )
        .await;
    assert_eq!(s, 403, "nor another team's: {v}");
    let (s, own) = Api::new(&base, &editor)
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(ch("shop-alerts", Some(shop))),
        )
        .await;
    assert_eq!(s, 201, "{own}");
    assert_eq!(own["team"], json!({"id": shop, "name": "shop"}));
    let (s, other) = Api::new(&base, &admin)
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(ch("billing-alerts", Some(billing))),
        )
        .await;
    assert_eq!(s, 201, "{other}");
    let (s, fleet) = Api::new(&base, &admin)
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(ch("fleet", None)),
        )
        .await;
    assert_eq!(s, 201, "{fleet}");

    let names = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|c| c["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    for who in [&editor, &viewer] {
        let (_, list) = Api::new(&base, who)
            .call("GET", "/v1/notifications/channels", None)
            .await;
        assert_eq!(names(&list), ["shop-alerts"]);
        let (_, rules) = Api::new(&base, who)
            .call("GET", "/v1/notifications/rules", None)
            .await;
        assert!(
            rules["items"]
                .as_array()
                .expect("items")
                .iter()
                .all(|r| r["channelName"] == "shop-alerts"),
            "{rules}"
        );
    }
    let (_, all) = Api::new(&base, &admin)
        .call("GET", "/v1/notifications/channels", None)
        .await;
    assert_eq!(names(&all), ["billing-alerts", "fleet", "shop-alerts"]);
    let other_id = other["id"].as_i64().expect("id");
    assert_eq!(
        Api::new(&base, &editor)
            .call(
                "GET",
                &format!("/v1/notifications/channels/{other_id}"),
                None
            )
            .await
            .0,
        404
    );
    assert_eq!(
        Api::new(&base, &editor)
            .call(
                "DELETE",
                &format!("/v1/notifications/channels/{other_id}"),
                None
            )
            .await
            .0,
        404
    );
    let rule = json!({"channelId": other_id, "name": "sneak", "events": ["applied"]});
    let (s, v) = Api::new(&base, &editor)
        .call("POST", "/v1/notifications/rules", Some(rule))
        .await;
    assert_eq!(
        (s, v["error"]["details"]["field"].as_str()),
        (400, Some("channelId")),
        "{v}"
    );
    let own_id = own["id"].as_i64().expect("id");
    let (s, _) = Api::new(&base, &viewer)
        .call(
            "PUT",
            &format!("/v1/notifications/channels/{own_id}/digest"),
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(s, 403, "team viewers read only");
    let (s, v) = Api::new(&base, &editor)
        .call(
            "PUT",
            &format!("/v1/notifications/channels/{own_id}/digest"),
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(
        (s, v["digest"]["enabled"].as_bool()),
        (200, Some(false)),
        "{v}"
    );
    let (_, audit) = Api::new(&base, &admin)
        .call(
            "GET",
            "/v1/audit/config?action=NotificationChannelCreated",
            None,
        )
        .await;
    let by_editor = audit["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|c| c["target"]["name"] == "shop-alerts")
        .expect("audited");
    assert_eq!(
        by_editor["actor"]["teams"][0]["name"], "shop",
        "the team role that allowed it"
    );
    let (s, v) = Api::new(&base, &editor)
        .call(
            "GET",
            &format!("/v1/notifications/channels/{own_id}/digest"),
            None,
        )
        .await;
    assert_eq!(
        (s, v["preview"]["scope"].as_str()),
        (200, Some("shop")),
        "a team channel's digest is the team's: {v}"
    );
    assert_eq!(kerf.stop(), Some(0));
}

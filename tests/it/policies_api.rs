//! Policies through the real binary: validation naming every bad field, versions with no
//! gaps, optimistic concurrency under 8 concurrent writers, soft delete and revert, and
//! the `config_changed` rows of policy, settings and datasource changes (actor, target,
//! before/after, reason; never a secret).

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::audit::assert_change;
use crate::support::{Api, Cred, DataDir};

fn spec(name: &str, priority: i64) -> Value {
    json!({"name": name, "priority": priority, "selector": {"namespaces": ["shop"]},
           "mode": {"cpu": "auto-patch"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn policies_are_validated_versioned_soft_deleted_reverted_and_audited() {
    let data = DataDir::new();
    let token = data.admin_token();
    let kerf = data.start();
    let api = Api::new(kerf.url(""), token);
    let bad = api
        .request(Method::POST, "/v1/policies")
        .json(&json!({"name": "Bad Name", "priority": 5000,
                "apply": {"maintenanceWindows": [{"cron": "nope", "duration": "2h"}]}}))
        .send()
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.body["error"]["code"], "invalid_policy");
    let paths: Vec<&str> = bad.body["error"]["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    for p in ["name", "priority", "apply.maintenanceWindows[0].cron"] {
        assert!(paths.contains(&p), "{p} missing from {paths:?}");
    }
    let mut body = spec("web", 1);
    body["reason"] = json!("r-create");
    let made = api
        .request(Method::POST, "/v1/policies")
        .json(&body)
        .send()
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.etag().as_deref(), Some("\"1\""));
    let id = made.body["id"].as_i64().unwrap();
    let path = format!("/v1/policies/{id}");
    let dup = api
        .request(Method::POST, "/v1/policies")
        .json(&spec("web", 2))
        .send()
        .await;
    assert_eq!(dup.status, 409, "a live name is unique");
    let missing = api
        .request(Method::PUT, &path)
        .json(&spec("web", 2))
        .send()
        .await;
    assert_eq!(missing.status, 428, "a write names the version it read");
    let mut v2 = spec("web", 2);
    v2["reason"] = json!("r-update");
    let up = api
        .request(Method::PUT, &path)
        .cred(Cred::Bearer(&api.token))
        .json(&v2)
        .if_match(1)
        .send()
        .await;
    assert_eq!((up.status, up.body["version"].as_i64()), (200, Some(2)));
    let stale = api
        .request(Method::PUT, &path)
        .cred(Cred::Bearer(&api.token))
        .json(&spec("web", 3))
        .if_match(1)
        .send()
        .await;
    assert_eq!(
        (stale.status, stale.body["error"]["code"].as_str()),
        (412, Some("version_conflict"))
    );
    assert_eq!(stale.body["error"]["details"]["currentVersion"], 2);
    let mut in_body = spec("web", 3);
    in_body["version"] = json!(1);
    let stale = api.request(Method::PUT, &path).json(&in_body).send().await;
    assert_eq!(stale.status, 409, "a stale body version is a conflict");
    let rev = api
        .request(Method::POST, &format!("{path}/revert"))
        .cred(Cred::Bearer(&api.token))
        .json(&json!({"version": 1, "reason": "r-revert"}))
        .if_match(2)
        .send()
        .await;
    assert_eq!(rev.status, 200, "{}", rev.body);
    assert_eq!(
        (
            rev.body["version"].as_i64(),
            rev.body["spec"]["priority"].as_i64()
        ),
        (Some(3), Some(1)),
        "a revert appends the old content as a new version"
    );
    let del = api
        .request(Method::DELETE, &format!("{path}?version=3&reason=r-delete"))
        .send()
        .await;
    assert_eq!(del.status, 204, "{}", del.body);
    let live = api.request(Method::GET, "/v1/policies").send().await;
    assert_eq!(live.body["items"].as_array().unwrap().len(), 0);
    let gone = api.request(Method::GET, &path).send().await;
    assert!(gone.body["deletedAt"].is_string(), "{}", gone.body);
    let versions = api
        .request(Method::GET, &format!("{path}/versions"))
        .send()
        .await;
    let list: Vec<i64> = versions.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(list, [1, 2, 3], "history kept after delete");
    let again = api
        .request(Method::POST, "/v1/policies")
        .json(&spec("web", 9))
        .send()
        .await;
    assert_eq!(again.status, 201, "a deleted policy's name is free");

    let sid = id.to_string();
    let admin = "tests";
    assert_change(
        &api.changes("PolicyCreated").await,
        "r-create",
        admin,
        ("policy", &sid),
        (false, true),
    );
    let u = assert_change(
        &api.changes("PolicyUpdated").await,
        "r-update",
        admin,
        ("policy", &sid),
        (true, true),
    );
    assert_eq!(
        (
            u["before"]["version"].as_i64(),
            u["after"]["version"].as_i64()
        ),
        (Some(1), Some(2))
    );
    assert_eq!(
        api.changes("PolicyUpdated").await.len(),
        1,
        "refused writes leave no row"
    );
    assert_change(
        &api.changes("PolicyReverted").await,
        "r-revert",
        admin,
        ("policy", &sid),
        (true, true),
    );
    assert_change(
        &api.changes("PolicyDeleted").await,
        "r-delete",
        admin,
        ("policy", &sid),
        (true, true),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn eight_concurrent_writers_lose_no_update_and_leave_no_gap() {
    let data = DataDir::new();
    let token = data.admin_token();
    let kerf = data.start();
    let api = Api::new(kerf.url(""), token);
    let made = api
        .request(Method::POST, "/v1/policies")
        .json(&spec("hot", 0))
        .send()
        .await;
    let id = made.body["id"].as_i64().unwrap();
    const WRITES: usize = 5;
    let mut tasks = Vec::new();
    for client_no in 0..8 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            let path = format!("/v1/policies/{id}");
            let (mut accepted, mut refused) = (Vec::new(), 0);
            while accepted.len() < WRITES {
                let cur = api.request(Method::GET, &path).send().await;
                let version = cur.body["version"].as_i64().unwrap();
                let label = format!("c{client_no}-w{}", accepted.len());
                let mut body = spec("hot", (client_no * 10 + accepted.len()) as i64);
                body["description"] = json!(label);
                let r = api
                    .request(Method::PUT, &path)
                    .cred(Cred::Bearer(&api.token))
                    .json(&body)
                    .if_match(version)
                    .send()
                    .await;
                match r.status {
                    200 => accepted.push((r.body["version"].as_i64().unwrap(), label)),
                    412 => refused += 1,
                    s => panic!("unexpected {s}: {}", r.body),
                }
            }
            (accepted, refused)
        }));
    }
    let mut accepted = Vec::new();
    let mut refused = 0;
    for t in tasks {
        let (a, r) = t.await.unwrap();
        accepted.extend(a);
        refused += r;
    }
    assert_eq!(accepted.len(), 8 * WRITES);
    let versions = api
        .request(Method::GET, &format!("/v1/policies/{id}/versions"))
        .send()
        .await;
    let items = versions.body["items"].as_array().unwrap();
    let numbers: Vec<i64> = items
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    let expected: Vec<i64> = (1..=(1 + 8 * WRITES as i64)).collect();
    assert_eq!(numbers, expected, "no gaps, one version per accepted write");
    for (version, label) in &accepted {
        let v = &items[(*version - 1) as usize];
        assert_eq!(v["spec"]["description"], *label, "each write landed whole");
        let (c, w): (i64, i64) = {
            let l = label.trim_start_matches('c');
            let (c, w) = l.split_once("-w").unwrap();
            (c.parse().unwrap(), w.parse().unwrap())
        };
        assert_eq!(v["spec"]["priority"].as_i64(), Some(c * 10 + w));
    }
    assert_eq!(
        api.changes("PolicyUpdated").await.len(),
        8 * WRITES,
        "one audit row per accepted write ({refused} refused)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_and_datasource_changes_are_audited_without_secrets() {
    let data = DataDir::new();
    let token = data.admin_token();
    let kerf = data.start();
    let api = Api::new(kerf.url(""), token);
    let pricing = api
        .request(Method::GET, "/v1/admin/settings/pricing")
        .send()
        .await
        .body;
    let r = api
        .request(Method::PUT, "/v1/admin/settings/pricing?reason=r-pricing")
        .json(&pricing.clone())
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let rec = api
        .request(Method::GET, "/v1/admin/settings/recommender")
        .send()
        .await
        .body;
    let r = api
        .request(
            Method::PUT,
            "/v1/admin/settings/recommender?reason=r-recommender",
        )
        .json(&rec)
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let settings = api.changes("SettingsUpdated").await;
    let c = assert_change(
        &settings,
        "r-pricing",
        "tests",
        ("settings", "pricing"),
        (true, true),
    );
    assert_eq!(c["after"], pricing);
    assert_change(
        &settings,
        "r-recommender",
        "tests",
        ("settings", "recommender"),
        (true, true),
    );
    let secret = "Sup3r-Secret-Passw0rd";
    let header_secret = "hdr-Secret-Value-42";
    let ds = json!({"name": "prom", "type": "prometheus", "url": "http://127.0.0.1:9/",
        "auth": {"type": "basic", "username": "u", "password": secret},
        "headers": [{"name": "X-Org", "value": header_secret, "secret": true}],
        "reason": "r-ds-create"});
    let made = api
        .request(Method::POST, "/v1/datasources")
        .json(&ds.clone())
        .send()
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let id = made.body["id"].as_i64().unwrap().to_string();
    let mut replace = ds.clone();
    replace["reason"] = json!("r-ds-update");
    replace["url"] = json!("http://127.0.0.1:10/");
    let r = api
        .request(Method::PUT, &format!("/v1/datasources/{id}"))
        .json(&replace)
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = api
        .request(
            Method::DELETE,
            &format!("/v1/datasources/{id}?reason=r-ds-delete"),
        )
        .send()
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let created = api.changes("DatasourceCreated").await;
    let c = assert_change(
        &created,
        "r-ds-create",
        "tests",
        ("datasource", &id),
        (false, true),
    );
    assert_eq!(c["after"]["headers"][0]["value"], "***", "{c}");
    let updated = api.changes("DatasourceUpdated").await;
    let u = assert_change(
        &updated,
        "r-ds-update",
        "tests",
        ("datasource", &id),
        (true, true),
    );
    assert_eq!(u["after"]["url"], "http://127.0.0.1:10/");
    let deleted = api.changes("DatasourceDeleted").await;
    assert_change(
        &deleted,
        "r-ds-delete",
        "tests",
        ("datasource", &id),
        (true, false),
    );
    let all = api
        .request(Method::GET, "/v1/audit/config?limit=500")
        .send()
        .await
        .body
        .to_string();
    assert!(
        !all.contains(secret) && !all.contains(header_secret),
        "a secret reached the audit"
    );
}

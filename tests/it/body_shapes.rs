//! Every JSON body is an object with the documented types: an array where an object is
//! expected (serde would fill a struct's fields by position) and `null` for a field
//! that is not nullable are refused with 400 naming the problem, and nothing changes.

use serde_json::{json, Value};

use crate::support::error_code;
use crate::support::hub::{hub_after_run, Hub};

const CLUSTER: &str = "demo-east";

async fn refused(h: &Hub, method: &str, path: &str, body: Value) -> Value {
    let (s, v) = h
        .as_token(&h.admin)
        .call(method, path, Some(body.clone()))
        .await;
    assert_eq!(s, 400, "{method} {path} with {body} answered {s}: {v}");
    assert!(error_code(&v).starts_with("invalid"), "{v}");
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn arrays_for_objects_and_nulls_for_values_are_refused_and_change_nothing() {
    let h = hub_after_run(CLUSTER).await;
    let (_, before) = h
        .as_token(&h.admin)
        .call("GET", "/v1/admin/settings/recommender", None)
        .await;

    let settings = "/v1/admin/settings/recommender";
    refused(&h, "PUT", settings, json!([])).await;
    refused(&h, "PUT", settings, json!(["*/5 * * * *", 3600])).await;
    refused(&h, "PUT", settings, json!({"schedule": null})).await;
    let pricing = "/v1/admin/settings/pricing";
    refused(&h, "PUT", pricing, json!(["EUR", 1.0, 1.0])).await;
    refused(
        &h,
        "PUT",
        pricing,
        json!({"currency": "EUR", "cpuPerVcpuHour": null}),
    )
    .await;
    let bad_cluster_price = json!({"clusters": {"prod": {"cpuPerVcpuHour": null}}});
    refused(&h, "PUT", pricing, bad_cluster_price).await;
    let (_, after) = h.as_token(&h.admin).call("GET", settings, None).await;
    assert_eq!(before, after, "the settings did not change");
    let (_, changes) = h
        .as_token(&h.admin)
        .call("GET", "/v1/audit/config?action=SettingsUpdated", None)
        .await;
    assert_eq!(changes["items"], json!([]), "nothing was audited");

    let (_, feed) = h
        .as_token(&h.agent)
        .call(
            "GET",
            &format!("/v1/clusters/{CLUSTER}/recommendations"),
            None,
        )
        .await;
    let item = &feed["items"][0];
    let (wl, rec) = (
        item["workloadId"].as_str().unwrap(),
        &item["recommendationId"],
    );
    let approve = format!("/v1/workloads/{wl}/approve");
    refused(&h, "POST", &approve, json!([rec, "because"])).await;
    refused(
        &h,
        "POST",
        &approve,
        json!({"recommendationId": rec, "reason": null}),
    )
    .await;
    let ov = format!("/v1/workloads/{wl}/override");
    refused(&h, "PUT", &ov, json!([{"cpu": "off"}, [], null, "why"])).await;
    let no_expiry = json!({"mode": {"cpu": "off"}, "expiresAt": null});
    refused(&h, "PUT", &ov, no_expiry).await;
    refused(&h, "PUT", &ov, json!({"mode": ["off", "off"]})).await;
    let (s, policy) = h
        .as_token(&h.admin)
        .call("GET", &format!("/v1/workloads/{wl}/policy"), None)
        .await;
    assert_eq!((s, &policy["override"]), (200, &Value::Null), "{policy}");

    let pause = format!("/v1/clusters/{CLUSTER}/pause");
    refused(&h, "POST", &pause, json!(["incident", null])).await;
    refused(
        &h,
        "POST",
        &pause,
        json!({"reason": "incident", "resumeAt": null}),
    )
    .await;
    refused(
        &h,
        "POST",
        &format!("/v1/clusters/{CLUSTER}/resume"),
        json!([]),
    )
    .await;
    refused(&h, "POST", "/v1/fleet/pause", json!(["incident"])).await;
    let (_, config) = h
        .as_token(&h.agent)
        .call("GET", &format!("/v1/clusters/{CLUSTER}/config"), None)
        .await;
    assert_eq!(config["flags"]["paused"], false);
}

/// The schema `s` stands for in `doc` (one `$ref` followed).
fn resolved<'a>(doc: &'a Value, s: &'a Value) -> &'a Value {
    match s["$ref"].as_str() {
        Some(r) => {
            let name = r.rsplit('/').next().expect("a schema name");
            &doc["components"]["schemas"][name]
        }
        None => s,
    }
}

/// The properties of `s`, through `$ref` and `allOf`.
fn properties(doc: &Value, s: &Value) -> Vec<(String, Value)> {
    let s = resolved(doc, s);
    let mut out: Vec<(String, Value)> = s["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for part in s["allOf"].as_array().into_iter().flatten() {
        out.extend(properties(doc, part));
    }
    out
}

fn is_object(doc: &Value, s: &Value) -> bool {
    let t = &resolved(doc, s)["type"];
    let typed = t == "object" || t.as_array().is_some_and(|t| t.contains(&json!("object")));
    typed || !properties(doc, s).is_empty()
}

/// True when the document lets `s` be `null` (`type: [..., "null"]`).
fn nullable(s: &Value) -> bool {
    s["type"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t == "null"))
}

/// A value of schema `s` with the right types (required properties only): what the
/// shape checks pass, so a probe added to it is refused for the probe alone.
fn typed_example(doc: &Value, s: &Value) -> Value {
    let r = resolved(doc, s);
    if let Some(first) = r["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(first) = r["oneOf"].as_array().and_then(|o| o.first()) {
        return typed_example(doc, first);
    }
    let t = match &r["type"] {
        Value::Array(ts) => ts
            .iter()
            .find(|t| *t != "null")
            .cloned()
            .unwrap_or_default(),
        t => t.clone(),
    };
    match t.as_str() {
        Some("string") if r["format"] == "date-time" => json!("2031-01-01T00:00:00Z"),
        Some("string") => json!("x"),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        _ => {
            let mut out = serde_json::Map::new();
            let mut required: Vec<&Value> =
                r["required"].as_array().into_iter().flatten().collect();
            for part in r["allOf"].as_array().into_iter().flatten() {
                required.extend(
                    resolved(doc, part)["required"]
                        .as_array()
                        .into_iter()
                        .flatten(),
                );
            }
            for (name, prop) in properties(doc, s) {
                if required.iter().any(|n| *n == name.as_str()) {
                    out.insert(name, typed_example(doc, &prop));
                }
            }
            Value::Object(out)
        }
    }
}

/// Bodies no route may take, each with the property the refusal must name: `null`
/// and the wrong top-level shape, and, in an otherwise well-typed body, `null` for a
/// property the document does not let be null and an array for one it documents as
/// an object.
fn hostile_bodies(doc: &Value, schema: &Value) -> Vec<(Value, Option<String>)> {
    if resolved(doc, schema)["type"] == "array" {
        return [Value::Null, json!({}), json!("x")]
            .map(|b| (b, None))
            .into();
    }
    let mut out: Vec<(Value, Option<String>)> = [Value::Null, json!([]), json!("x"), json!([{}])]
        .map(|b| (b, None))
        .into();
    let base = typed_example(doc, schema);
    let with = |name: &String, v: Value| {
        let mut body = base.clone();
        body[name.as_str()] = v;
        (body, Some(name.clone()))
    };
    for (name, prop) in properties(doc, schema) {
        if !nullable(&prop) {
            out.push(with(&name, Value::Null));
        }
        if is_object(doc, &prop) {
            out.push(with(&name, json!([])));
            out.push(with(&name, json!([{}])));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_that_takes_a_json_body_refuses_null_and_the_wrong_shapes() {
    let h = hub_after_run(CLUSTER).await;
    let api = h.as_token(&h.admin);
    let id = |v: &Value| {
        let v = if v["user"].is_object() {
            &v["user"]["id"]
        } else {
            &v["id"]
        };
        v.as_str().map_or_else(|| v.to_string(), str::to_string)
    };
    let slack = "https://hooks.slack.com/services/T0000/B0000/abcdefabcdef";
    let channel = id(&api
        .post_ok(
            "/v1/notifications/channels",
            json!({"name": "ops", "type": "slack", "url": slack}),
        )
        .await);
    let rule = json!({"channelId": channel.parse::<i64>().expect("channel id"),
                      "name": "r", "events": ["blocked"]});
    let ids = [
        (
            "/v1/admin/users",
            id(&api
                .post_ok("/v1/admin/users", json!({"username": "ann"}))
                .await),
        ),
        (
            "/v1/admin/teams",
            id(&api.post_ok("/v1/admin/teams", json!({"name": "t"})).await),
        ),
        (
            "/v1/policies",
            id(&api.post_ok("/v1/policies", json!({"name": "p"})).await),
        ),
        (
            "/v1/datasources",
            id(&api
                .post_ok(
                    "/v1/datasources",
                    json!({"name": "prom", "type": "prometheus", "url": "http://127.0.0.1:9"}),
                )
                .await),
        ),
        ("/v1/notifications/channels", channel.clone()),
        (
            "/v1/notifications/rules",
            id(&api.post_ok("/v1/notifications/rules", rule).await),
        ),
    ];
    let (_, workloads) = api.get("/v1/workloads?limit=1").await;
    let workload = workloads["items"][0]["id"]
        .as_str()
        .expect("a workload")
        .to_string();

    let doc = crate::support::openapi::committed();
    let (mut routes, mut taken) = (0, Vec::new());
    for (template, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            let Some(schema) = op["requestBody"]["content"].get("application/json") else {
                continue;
            };
            routes += 1;
            let path = match template.split_once("/{id}") {
                Some(("/v1/workloads", rest)) => format!("/v1/workloads/{workload}{rest}"),
                Some((prefix, rest)) => {
                    let (_, n) = ids
                        .iter()
                        .find(|(p, _)| *p == prefix)
                        .unwrap_or_else(|| panic!("{template}: give this test one {prefix}"));
                    format!("{prefix}/{n}{rest}")
                }
                None => template.replace("{cluster}", CLUSTER),
            };
            let token = match op["x-kerf-permission"].as_str() {
                Some("cluster-agent") => &h.agent,
                _ => &h.admin,
            };
            let method = method.to_ascii_uppercase();
            for (body, field) in hostile_bodies(&doc, &schema["schema"]) {
                // If-Match: replacing a policy asks for the version read (1).
                let api = h.as_token(token);
                let r = api
                    .request(method.as_str(), &path)
                    .json(&body)
                    .if_match(1)
                    .send()
                    .await;
                let (s, v) = (r.status, r.body);
                let code = v["error"]["code"].as_str().unwrap_or_default();
                let named = field.is_none_or(|f| v["error"].to_string().contains(&f));
                if s != 400 || !code.starts_with("invalid") || !named {
                    let answer: String = v.to_string().chars().take(200).collect();
                    taken.push(format!("{method} {path} took {body}: {s} {answer}"));
                }
            }
        }
    }
    assert!(taken.is_empty(), "{}", taken.join("\n"));
    assert!(
        routes >= 30,
        "the document lists the routes with a body ({routes})"
    );
}

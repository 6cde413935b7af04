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

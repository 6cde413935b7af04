//! An approval outlives the run that supersedes its recommendation when the new one asks
//! for the same values (issue 27, defect 1): it is carried over, and the agent's feed
//! still offers it. When a run asks for other values, it lapses, and the workload says
//! so with the reason, instead of the approval vanishing without a word.

use serde_json::{json, Value};

use crate::support::hub::{hub_after_run, Hub};

const CLUSTER: &str = "demo-east";

async fn get(h: &Hub, path: &str) -> Value {
    let (s, v) = h.as_token(&h.admin).call("GET", path, None).await;
    assert_eq!(s, 200, "{path}: {v}");
    v
}

async fn run(h: &Hub) {
    let run = h
        .runs
        .run_to_end(CLUSTER, kerf::runs::Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(run.status.as_str(), "succeeded", "{:?}", run.errors);
}

/// The approval the agent's feed offers for workload `id`, if any.
async fn offered(h: &Hub, id: &str) -> Option<Value> {
    let path = format!("/v1/clusters/{CLUSTER}/recommendations");
    let (s, feed) = h.as_token(&h.agent).call("GET", &path, None).await;
    assert_eq!(s, 200, "{feed}");
    let item = feed["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["workloadId"] == id)
        .cloned()
        .expect("in the feed");
    (!item["approval"].is_null()).then(|| item["approval"].clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_carries_over_to_the_same_values_and_lapses_with_the_reason_otherwise() {
    let h = hub_after_run(CLUSTER).await;
    // A workload in audit mode (no demo policy selects shop) with a change to approve.
    let list = get(
        &h,
        "/v1/workloads?cluster=demo-east&namespace=shop&hasRecommendation=true",
    )
    .await;
    let w = list["items"][0].clone();
    let id = w["id"].as_str().expect("id").to_string();
    let body = json!({"recommendationId": w["latestRecommendationId"], "reason": "try it"});
    let (s, approval) = h
        .as_token(&h.admin)
        .call("POST", &format!("/v1/workloads/{id}/approve"), Some(body))
        .await;
    assert_eq!(s, 201, "{approval}");
    assert_eq!(approval["state"], "pending");

    // The next run sees the same usage: the same values, so the approval carries over.
    run(&h).await;
    let page = get(&h, &format!("/v1/workloads/{id}")).await;
    assert_ne!(
        page["latestRecommendationId"], w["latestRecommendationId"],
        "a new one"
    );
    let a = &page["approval"];
    assert_eq!(a["id"], approval["id"], "{a}");
    assert_eq!(a["state"], "pending", "{a}");
    assert_eq!(a["recommendationId"], page["latestRecommendationId"]);
    assert!(a["carriedAt"].is_string(), "{a}");
    assert_eq!(
        offered(&h, &id).await.map(|o| o["id"].clone()),
        Some(approval["id"].clone()),
        "the agent is still offered it"
    );

    // Twice the CPU headroom: the next run asks for other values, and the approval lapses.
    let mut settings = get(&h, "/v1/admin/settings/recommender").await;
    let headroom = settings["policy"]["cpu"]["headroomCoefficient"]
        .as_f64()
        .expect("headroom");
    settings["policy"]["cpu"]["headroomCoefficient"] = json!(headroom * 2.0);
    let (s, v) = h
        .as_token(&h.admin)
        .call("PUT", "/v1/admin/settings/recommender", Some(settings))
        .await;
    assert_eq!(s, 200, "{v}");
    run(&h).await;
    let a = get(&h, &format!("/v1/workloads/{id}")).await["approval"].clone();
    assert_eq!(a["state"], "lapsed", "{a}");
    let why = a["lapseReason"].as_str().expect("a reason");
    assert!(
        why.contains("cpu request of") && why.contains("(approved: "),
        "{why}"
    );
    assert!(a["lapsedAt"].is_string());
    assert_eq!(
        offered(&h, &id).await,
        None,
        "a lapsed approval is not offered"
    );
}

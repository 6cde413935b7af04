//! An `applied ApprovedOnce` consumes only the approval of the workload it is about:
//! the same approval id sent for another workload of the cluster leaves it pending.

use kerf::wire::RecommendationFeed;
use serde_json::{json, Value};

use crate::support::hub::{at, hub_after_run, Hub, T0};
use crate::support::uuid;

const CLUSTER: &str = "demo-east";

async fn feed(h: &Hub) -> RecommendationFeed {
    let path = format!("/v1/clusters/{CLUSTER}/recommendations");
    let (s, v) = h.as_token(&h.agent).call("GET", &path, None).await;
    assert_eq!(s, 200, "{v}");
    serde_json::from_value(v).expect("feed")
}

fn applied(w: &kerf::wire::FeedWorkload, approval: &str) -> Value {
    json!([{"id": uuid(), "type": "applied", "reason": "ApprovedOnce", "time": at(T0),
        "strategy": "in-place", "resources": ["memory"],
        "containers": [{"name": "app",
            "from": {"requests": {"memory": "384Mi"}}, "to": {"requests": {"memory": "512Mi"}}}],
        "workload": {"namespace": w.namespace, "kind": w.kind, "name": w.name},
        "details": {"approvalId": approval, "approvedBy": "ops"}}])
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_once_for_another_workload_leaves_the_approval_pending() {
    let h = hub_after_run(CLUSTER).await;
    let before = feed(&h).await;
    let (a, b) = (&before.items[0], &before.items[1]);
    let body = json!({"recommendationId": a.recommendation_id, "reason": "once"});
    let path = format!("/v1/workloads/{}/approve", a.workload_id);
    let (s, approval) = h.as_token(&h.admin).call("POST", &path, Some(body)).await;
    assert_eq!(s, 201, "{approval}");
    let id = approval["id"].as_str().expect("approval id");

    let events = format!("/v1/clusters/{CLUSTER}/events");
    let (s, v) = h
        .as_token(&h.agent)
        .call("POST", &events, Some(applied(&b.workload, id)))
        .await;
    assert_eq!((s, v["accepted"].as_i64()), (200, Some(1)), "{v}");
    let pending = |f: &RecommendationFeed| {
        f.items
            .iter()
            .find(|i| i.workload_id == a.workload_id)
            .and_then(|i| i.approval.clone())
    };
    assert_eq!(
        pending(&feed(&h).await).map(|p| p.id),
        Some(id.to_string()),
        "another workload's event must not use up this approval"
    );

    let (s, v) = h
        .as_token(&h.agent)
        .call("POST", &events, Some(applied(&a.workload, id)))
        .await;
    assert_eq!((s, v["accepted"].as_i64()), (200, Some(1)), "{v}");
    assert_eq!(
        pending(&feed(&h).await),
        None,
        "consumed by its own workload"
    );
}

//! One clock moves the whole hub: after a manual clock passes an override's expiry and a
//! pause's `resumeAt`, the config feed, the recommendation feed, the workload's policy
//! and the ticker all agree on the same "now" — and both feeds decode into the wire
//! types the agent reads (unknown fields refused).

use kerf::fleet::ticker;
use kerf::wire::{ConfigFeed, PauseScope, RecommendationFeed};
use serde_json::json;

use crate::support::hub::{at, hub_after_run, Hub, T0};

const CLUSTER: &str = "demo-east";

async fn feeds(h: &Hub) -> (ConfigFeed, RecommendationFeed) {
    let config = serde_json::from_value(h.config(CLUSTER).await).expect("a wire::ConfigFeed");
    let (s, v) = h
        .as_token(&h.agent)
        .call(
            "GET",
            &format!("/v1/clusters/{CLUSTER}/recommendations"),
            None,
        )
        .await;
    assert_eq!(s, 200, "{v}");
    (
        config,
        serde_json::from_value(v).expect("a wire::RecommendationFeed"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_feeds_expiry_and_auto_resume_agree_as_the_manual_clock_moves() {
    let h = hub_after_run(CLUSTER).await;
    let (config, recs) = feeds(&h).await;
    let item = &recs.items[0];
    let workload = item.workload_id.clone();
    assert!(!item.recommendation_stale, "made under the policy in force");
    let default_identity = item.policy_identity.clone();

    // An override (mode off) and a cluster pause, both ending in one minute.
    let until = at(T0 + 60_000);
    let body = json!({"mode": {"cpu": "off", "memory": "off"}, "expiresAt": until,
                      "reason": "hands off for a minute"});
    let (s, v) = h
        .as_token(&h.admin)
        .call(
            "PUT",
            &format!("/v1/workloads/{workload}/override"),
            Some(body),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    let pause = json!({"reason": "change freeze", "resumeAt": until});
    let (s, v) = h
        .as_token(&h.admin)
        .call(
            "POST",
            &format!("/v1/clusters/{CLUSTER}/pause"),
            Some(pause),
        )
        .await;
    assert_eq!(s, 200, "{v}");

    let (config_now, recs_now) = feeds(&h).await;
    assert_eq!(config_now.server_time, at(T0));
    assert_eq!(config.workloads.len(), config_now.workloads.len());
    assert!(config_now.flags.paused);
    assert_eq!(config_now.flags.pause_scope, Some(PauseScope::Cluster));
    let w = config_now
        .workloads
        .iter()
        .find(|w| w.workload_id == workload)
        .expect("the workload in the config feed");
    let r = recs_now
        .items
        .iter()
        .find(|r| r.workload_id == workload)
        .expect("the workload in the recommendation feed");
    assert_eq!(
        serde_json::to_value(&w.mode).unwrap(),
        json!({"cpu": "off", "memory": "off"})
    );
    assert_eq!(w.mode, r.mode, "both feeds see the override");
    assert_eq!(w.policy_identity, r.policy_identity);
    assert_ne!(w.policy_identity, default_identity);
    assert!(r.recommendation_stale, "made before the override");
    let policy_path = format!("/v1/workloads/{workload}/policy");
    let (_, policy) = h.as_token(&h.admin).call("GET", &policy_path, None).await;
    assert_eq!(
        policy["recommendationStale"], true,
        "the workload page is served the feed's staleness, not left to recompute it"
    );

    // A millisecond before the end: nothing has ended yet, in any view.
    h.clock.set(T0 + 59_999);
    let (c, rf) = feeds(&h).await;
    assert!(c.flags.paused);
    assert!(rf
        .items
        .iter()
        .any(|r| r.workload_id == workload && r.recommendation_stale));

    // At the end, without any tick: every view agrees the override and the pause are over.
    h.clock.set(T0 + 60_000);
    let (c, rf) = feeds(&h).await;
    assert_eq!(c.server_time, at(T0 + 60_000));
    assert!(
        !c.flags.paused,
        "a pause past its resumeAt no longer applies"
    );
    let w = c
        .workloads
        .iter()
        .find(|w| w.workload_id == workload)
        .unwrap();
    let r = rf.items.iter().find(|r| r.workload_id == workload).unwrap();
    assert_eq!(w.policy_identity, default_identity, "the override expired");
    assert_eq!(r.policy_identity, default_identity);
    assert_eq!(w.mode, r.mode);
    assert!(
        !r.recommendation_stale,
        "the recommendation matches the policy again"
    );
    let (s, policy) = h
        .as_token(&h.admin)
        .call("GET", &format!("/v1/workloads/{workload}/policy"), None)
        .await;
    assert_eq!(s, 200, "{policy}");
    assert_eq!(policy["identity"], default_identity.as_str());
    assert_eq!(policy["override"]["active"], false);
    assert_eq!(policy["recommendationStale"], false);

    // The ticker, on the same clock, ends the pause for the record at that very time.
    let report = ticker::tick(&h.store, &h.runs).await;
    assert_eq!(report.resumed, vec![CLUSTER.to_string()]);
    let resumed = h.changes("AutomationResumed").await;
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0]["time"], at(T0 + 60_000));
}

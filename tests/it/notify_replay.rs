//! Replay protection end to end: kerf signs each webhook attempt with the hub's clock
//! (`X-Kerf-Timestamp`, Unix seconds), and a receiver following the contract's recipe
//! (tests/it/support/receiver.rs) refuses a signature more than 300 s from its own
//! clock. A hub on a manual clock far from the receiver's is refused; on the same time
//! it is accepted; 301 s apart it is refused again.

use kerf::clock::Clock;
use serde_json::json;

use crate::support::hub::hub;
use crate::support::receiver::{Receiver, Shape};
use crate::support::Api;

const SECRET: &str = "replay-signing-secret-0123456789";

#[tokio::test(flavor = "multi_thread")]
async fn a_receiver_refuses_a_signature_whose_timestamp_is_stale() {
    // The hub's manual clock is in 2027; the receiver starts on the system clock.
    let h = hub("replay", false).await;
    let rx = Receiver::start(Shape::Webhook, "hooks/replaypathsecret", Some(SECRET)).await;
    let (s, ch) = Api::new(&h.base, &h.admin)
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(
                json!({"name": "hook", "type": "webhook", "url": rx.url, "signingSecret": SECRET,
                    "defaultRules": false}),
            ),
        )
        .await;
    assert_eq!(s, 201, "{ch}");
    let test = format!("/v1/notifications/channels/{}/test", ch["id"]);
    let send = || {
        let (api, test) = (h.api.clone(), test.clone());
        async move { api.call("POST", &test, None).await.1 }
    };

    let refused = send().await;
    assert_eq!(refused["delivered"], false, "{refused}");
    assert_eq!(refused["status"], 400, "{refused}");
    assert_eq!(refused["answer"], "refused by the receiver", "{refused}");
    assert!(
        rx.faults().iter().any(|f| f.contains("replay")),
        "the receiver refused it as a replay: {:?}",
        rx.faults()
    );
    assert!(rx.accepted().is_empty());

    // The receiver on the hub's time: accepted.
    let clock = h.clock.clone();
    rx.use_clock(move || clock.now_ms() / 1000);
    let accepted = send().await;
    assert_eq!(accepted["delivered"], true, "{accepted}");
    assert_eq!(rx.accepted().len(), 1);

    // The receiver 301 s behind the hub: refused again.
    let pinned = h.clock.now_ms() / 1000;
    rx.use_clock(move || pinned);
    h.clock.advance(301_000);
    let late = send().await;
    assert_eq!(late["delivered"], false, "{late}");
    assert_eq!(rx.accepted().len(), 1);
}

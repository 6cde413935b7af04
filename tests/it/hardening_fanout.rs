//! Notification fan-out cannot exhaust the hub's descriptors (issue 36, defect 3),
//! through the real binary on loopback. Before, 600 Slack channels aimed at a hanging
//! receiver and one fleet pause held 600 connections at once: the hub ran out of its
//! 512 descriptors and API probes timed out. Now every send waits for one of
//! `notifications.max_concurrent_sends` slots (lowered to fit the open-file limit), and
//! the number of channels is capped per fleet and per team.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::binary::LOCAL_RECEIVERS;
use crate::support::receiver::{Receiver, Shape};
use crate::support::{client, eventually, DataDir, Kerf};

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_hundred_channels_to_a_hanging_receiver_leave_the_hub_its_descriptors() {
    let dir = DataDir::new();
    let admin = dir.token("ops-admin", "admin");
    let kerf = Kerf::builder(dir.path())
        .under_shell("ulimit -n 512")
        .envs(&[
            ("KERF_OUTBOUND__ALLOW", LOCAL_RECEIVERS),
            ("KERF_NOTIFICATIONS__MAX_CHANNELS", "1000"),
            ("KERF_NOTIFICATIONS__MAX_CHANNELS_PER_TEAM", "1000"),
            ("KERF_NOTIFICATIONS__SEND_TIMEOUT_SECONDS", "120"),
            ("KERF_NOTIFICATIONS__GROUP_WINDOW_MS", "0"),
        ])
        .start();
    let api = kerf.api(&admin);
    let rx = Receiver::start(Shape::Slack, "services/T/B/hang", None).await;
    rx.hang(true);
    for i in 0..600 {
        let body = json!({"name": format!("ops-{i}"), "type": "slack", "url": rx.url});
        let (s, v) = api
            .call("POST", "/v1/notifications/channels", Some(body))
            .await;
        assert_eq!(s, 201, "channel {i}: {v}");
    }
    let (s, v) = api
        .call(
            "POST",
            "/v1/fleet/pause",
            Some(json!({"reason": "fan-out"})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    // The 512-descriptor limit leaves 128 for all but clients: 32 sends at once.
    let cap = 32;
    eventually(
        "the sends fill their slots",
        Duration::from_secs(60),
        async || match rx.attempts() {
            n if n >= cap => Ok(n),
            n => Err(n),
        },
    )
    .await;
    // While 600 messages wait on a receiver that never answers, the API answers.
    let http = client();
    let mut slowest = Duration::ZERO;
    for _ in 0..40 {
        let t = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(2),
            http.get(kerf.url("/healthz")).send(),
        )
        .await
        .expect("/healthz answered within 2 s")
        .expect("/healthz");
        assert_eq!(r.status(), 200);
        slowest = slowest.max(t.elapsed());
    }
    eprintln!("slowest /healthz of 40 during the fan-out: {slowest:?}");
    assert_eq!(
        rx.attempts(),
        cap,
        "no more connections than slots reached the receiver"
    );
    let fds = open_fds(kerf.pid());
    assert!(fds < 200, "the hub holds {fds} descriptors");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channels_are_capped_per_fleet_and_per_team() {
    let dir = DataDir::new();
    let admin = dir.token("ops-admin", "admin");
    let kerf = Kerf::builder(dir.path())
        .envs(&[
            ("KERF_NOTIFICATIONS__MAX_CHANNELS", "3"),
            ("KERF_NOTIFICATIONS__MAX_CHANNELS_PER_TEAM", "1"),
        ])
        .start();
    let api = kerf.api(&admin);
    let (s, team) = api
        .call("POST", "/v1/admin/teams", Some(json!({"name": "shop"})))
        .await;
    assert_eq!(s, 201, "{team}");
    let team_id: i64 = team["id"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .or_else(|| team["id"].as_i64())
        .expect("a team id");
    let hook = |name: &str, team: Option<i64>| {
        json!({"name": name, "type": "webhook", "url": "http://127.0.0.1:9/hook",
               "signingSecret": "0123456789abcdef", "teamId": team})
    };
    let create = |body: serde_json::Value| {
        let api = api.clone();
        async move {
            api.call("POST", "/v1/notifications/channels", Some(body))
                .await
        }
    };
    let (s, v) = create(hook("team-1", Some(team_id))).await;
    assert_eq!(s, 201, "{v}");
    let (s, v) = create(hook("team-2", Some(team_id))).await;
    assert_eq!(s, 409, "{v}");
    assert!(v.to_string().contains("max_channels_per_team"), "{v}");
    assert_eq!(create(hook("fleet-1", None)).await.0, 201);
    assert_eq!(create(hook("fleet-2", None)).await.0, 201);
    let (s, v) = create(hook("fleet-3", None)).await;
    assert_eq!(s, 409, "{v}");
    assert!(v.to_string().contains("notifications.max_channels"), "{v}");
}

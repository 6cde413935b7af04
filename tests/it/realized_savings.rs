//! What kerf applied shows at once, and its money is counted once (issue 27, defects 2
//! and 3). After one run, the agent reports three changes: one workload's CPU only (a
//! partial change), another's whole recommendation, and a third's, then rolled back.
//! With usage unchanged (no run in between), realized plus available equals what was
//! available before anything was applied, in the workload totals the overview shows and
//! in the digest preview; each changed workload shows its change, on its page and in
//! the list; the rolled-back one shows none and offers its saving again.

use serde_json::{json, Value};

use crate::support::hub::{at, hub_after_run, Hub, T0};
use crate::support::uuid;

const CLUSTER: &str = "demo-east";

/// One request of a container plan as a quantity: `current` or `recommended`.
fn quantity(setting: &Value, resource: &str, which: &str) -> Option<String> {
    let v = setting[which].as_f64()?;
    Some(match resource {
        "cpu" => format!("{}m", v.round() as u64),
        _ => format!("{}", v.round() as u64),
    })
}

/// An applied (or rolled_back) event changing `resources` of `w`'s containers from their
/// current requests to the recommended ones (or back, `back`).
fn event(w: &Value, resources: &[&str], back: bool, t: i64) -> Value {
    let containers: Vec<Value> = w["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|c| {
            let (mut from, mut to) = (json!({}), json!({}));
            for r in resources {
                let request = &c[*r]["request"];
                if let (Some(now), Some(next)) = (
                    quantity(request, r, "current"),
                    quantity(request, r, "recommended"),
                ) {
                    let (a, b) = if back { (next, now) } else { (now, next) };
                    from[*r] = json!(a);
                    to[*r] = json!(b);
                }
            }
            (to.as_object().is_some_and(|o| !o.is_empty())).then(
                || json!({"name": c["name"], "from": {"requests": from}, "to": {"requests": to}}),
            )
        })
        .collect();
    assert!(!containers.is_empty(), "{w}");
    let (kind, reason) = if back {
        ("rolled_back", "OOMKills")
    } else {
        ("applied", "RecommendationApplied")
    };
    json!({"id": uuid(), "type": kind, "reason": reason, "time": at(t), "strategy": "in-place",
        "recommendationID": w["latestRecommendationId"],
        "workload": {"namespace": w["namespace"], "kind": w["kind"], "name": w["name"]},
        "containers": containers})
}

async fn send(h: &Hub, events: Vec<Value>) {
    let path = format!("/v1/clusters/{CLUSTER}/events");
    let n = events.len() as i64;
    let (s, v) = h
        .as_token(&h.agent)
        .call("POST", &path, Some(Value::Array(events)))
        .await;
    assert_eq!((s, v["accepted"].as_i64()), (200, Some(n)), "{v}");
}

async fn get(h: &Hub, path: &str) -> Value {
    let (s, v) = h.as_token(&h.admin).call("GET", path, None).await;
    assert_eq!(s, 200, "{path}: {v}");
    v
}

/// A saving workload whose recommendation lowers both CPU and memory requests.
fn lowers_both(w: &Value) -> bool {
    let lowers = |r: &str| {
        w["resources"].as_array().is_some_and(|cs| {
            cs.iter().any(|c| {
                let q = &c[r]["request"];
                matches!((q["current"].as_f64(), q["recommended"].as_f64()),
                    (Some(a), Some(b)) if b < a - 1.0)
            })
        })
    };
    w["estimatedMonthlyCostDelta"]
        .as_f64()
        .is_some_and(|d| d < -1.0)
        && lowers("cpu")
        && lowers("memory")
        && w["resources"].as_array().is_some_and(|cs| {
            cs.iter().all(|c| {
                ["cpu", "memory"].iter().all(|r| {
                    let q = &c[*r]["request"];
                    q["recommended"].is_null() || q["recommended"].as_f64() <= q["current"].as_f64()
                })
            })
        })
}

#[tokio::test(flavor = "multi_thread")]
async fn applied_changes_show_at_once_and_realized_plus_available_is_what_was_available() {
    let h = hub_after_run(CLUSTER).await;
    let (s, channel) = h
        .as_token(&h.admin)
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(json!({"name": "ops", "type": "slack", "url": "https://hooks.slack.com/services/T/B/x"})),
        )
        .await;
    assert_eq!(s, 201, "{channel}");
    let digest = format!("/v1/notifications/channels/{}/digest", channel["id"]);
    let before = get(&h, "/v1/workloads/summary").await["total"].clone();
    let available_before = before["monthlySavings"].as_f64().expect("savings");
    assert_eq!(before["realized"]["sinceInstall"], 0.0, "{before}");
    let preview = get(&h, &digest).await["preview"]["savings"].clone();
    assert_eq!(
        preview["availableMonthly"], before["monthlySavings"],
        "{preview}"
    );
    assert_eq!(preview["realizedMonthly"], 0.0);

    let list = get(&h, "/v1/workloads?sort=savings&limit=500").await;
    let picked: Vec<Value> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|w| lowers_both(w))
        .take(3)
        .cloned()
        .collect();
    assert_eq!(
        picked.len(),
        3,
        "three workloads that save on CPU and memory"
    );
    let (partial, whole, undone) = (&picked[0], &picked[1], &picked[2]);
    let t = T0 + 60_000;
    send(
        &h,
        vec![
            event(partial, &["cpu"], false, t),
            event(whole, &["cpu", "memory"], false, t),
            event(undone, &["cpu", "memory"], false, t),
        ],
    )
    .await;
    send(
        &h,
        vec![event(undone, &["cpu", "memory"], true, t + 60_000)],
    )
    .await;
    // The agent reported them; the hub's clock has moved on (the digest reads up to now).
    h.clock.set(t + 120_000);

    let after = get(&h, "/v1/workloads/summary").await["total"].clone();
    let available = after["monthlySavings"].as_f64().expect("savings");
    let realized = &after["realized"];
    let since = realized["sinceInstall"].as_f64().expect("realized");
    assert!(since > 0.0 && available < available_before, "{after}");
    assert!(
        (since + available - available_before).abs() <= 0.03,
        "realized {since} + available {available} = {}, before {available_before}",
        since + available
    );
    assert_eq!(realized["thisWeek"], realized["sinceInstall"], "{realized}");
    assert_eq!(
        realized["workloads"], 2,
        "the rolled-back one has no live change"
    );
    let preview = get(&h, &digest).await["preview"]["savings"].clone();
    let (r, a) = (
        preview["realizedMonthly"].as_f64().expect("realized"),
        preview["availableMonthly"].as_f64().expect("available"),
    );
    assert!(
        (r + a - available_before).abs() <= 0.03,
        "digest: realized {r} + available {a}, before {available_before}"
    );
    assert!(
        (r - since).abs() < 0.01,
        "the digest counts as the overview: {r} vs {since}"
    );

    // Each changed workload shows its change at once, on its page and in the list.
    let listed = get(&h, "/v1/workloads?sort=savings&limit=500").await;
    let item = |id: &Value| {
        listed["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|w| w["id"] == *id)
            .cloned()
            .expect("listed")
    };
    for (w, resources) in [(partial, 1), (whole, 2)] {
        let page = get(
            &h,
            &format!("/v1/workloads/{}", w["id"].as_str().expect("id")),
        )
        .await;
        for shown in [&page["applied"], &item(&w["id"])["applied"]] {
            assert_eq!(shown["by"], "policy", "{shown}");
            assert_eq!(shown["at"], at(t));
            assert_eq!(shown["afterRecommendation"], true);
            assert!(
                shown["realizedMonthly"].as_f64().is_some_and(|m| m > 0.0),
                "{shown}"
            );
            let live: usize = shown["chain"]["inForce"]
                .as_object()
                .expect("in force")
                .values()
                .map(|v| v.as_object().map_or(0, |o| o.len()))
                .sum();
            assert!(live >= resources, "{shown}");
        }
        let left = page["estimatedMonthlyCostDelta"].as_f64().expect("delta");
        let was = w["estimatedMonthlyCostDelta"].as_f64().expect("delta");
        match resources {
            1 => assert!(
                left < -0.005 && left > was,
                "the memory part is left: {left} of {was}"
            ),
            _ => assert!(left.abs() < 0.02, "nothing is left to save: {left}"),
        }
    }
    let back = item(&undone["id"]);
    assert!(back["applied"].is_null(), "{back}");
    assert!(
        (back["estimatedMonthlyCostDelta"].as_f64().expect("delta")
            - undone["estimatedMonthlyCostDelta"].as_f64().expect("delta"))
        .abs()
            < 0.01,
        "rolled back: its saving is available again"
    );
}

/// Issue 27: a change someone else makes after kerf's is seen by the next run. Here the
/// demo source keeps serving the requests from before kerf's change, as a cluster does
/// when a person (or a deployment tool) puts them back: a run reading them within
/// `SETTLE_MS` of the change keeps it (its pods may still be rolling); a run reading
/// them later drops it, and its saving is available again.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_reads_other_requests_than_kerf_set_ends_the_live_change() {
    let h = hub_after_run(CLUSTER).await;
    let list = get(&h, "/v1/workloads?sort=savings&limit=500").await;
    let w = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|w| lowers_both(w))
        .cloned()
        .expect("a workload that saves on CPU and memory");
    let id = w["id"].as_str().expect("id").to_string();
    let t = T0 + 60_000;
    send(&h, vec![event(&w, &["cpu", "memory"], false, t)]).await;
    let page = async || get(&h, &format!("/v1/workloads/{id}")).await;
    assert!(page().await["applied"].is_object(), "applied at once");

    let settle = kerf::runs::live_check::SETTLE_MS;
    let run = async |h: &Hub, now: i64| {
        h.clock.set(now);
        let r = h
            .runs
            .run_to_end(CLUSTER, kerf::runs::Trigger::Manual)
            .await
            .expect("run");
        assert_eq!(r.status.as_str(), "succeeded", "{:?}", r.errors);
    };
    run(&h, t + settle / 2).await;
    let soon = page().await;
    assert!(
        soon["applied"]["realizedMonthly"]
            .as_f64()
            .is_some_and(|m| m > 0.0),
        "read too soon after kerf's change to judge it: {}",
        soon["applied"]
    );

    run(&h, t + 6 * settle).await;
    let later = page().await;
    assert!(
        later["applied"].is_null(),
        "the cluster holds other requests: {}",
        later["applied"]
    );
    let total = get(&h, "/v1/workloads/summary").await["total"].clone();
    assert_eq!(total["realized"]["sinceInstall"], 0.0, "{total}");
    let again = later["estimatedMonthlyCostDelta"].as_f64().expect("delta");
    assert!(
        again < -0.005,
        "the saving is offered again, from the requests in force: {again}"
    );
}

//! The agents' feeds by change, over HTTP as a remote agent reads them: a reader at
//! version N gets, after K changes, exactly those K (entries replaced and ids deleted,
//! including a policy that changes many workloads' effective policy and a workload the
//! hub forgets); "nothing changed" is a few hundred bytes; a version the hub no longer
//! has (another hub process, or older than its oldest tombstone) gets the whole feed.

use std::collections::BTreeMap;

use kerf::clock::Clock;
use serde_json::{json, Value};

use crate::support::hub::{hub_after_run, Hub};

const CLUSTER: &str = "demo-east";
const DAY: i64 = 86_400_000;

/// GET as the cluster's agent; the body and its size in bytes.
async fn get(h: &Hub, path: &str) -> (Value, usize) {
    let (s, v) = h.as_token(&h.agent).call("GET", path, None).await;
    assert_eq!(s, 200, "{path}: {v}");
    let bytes = serde_json::to_vec(&v).expect("json").len();
    (v, bytes)
}

/// One feed as an agent holds it: its entries by workload id and its version.
#[derive(Debug, Clone, PartialEq)]
struct Held {
    entries: BTreeMap<String, Value>,
    version: String,
}

fn by_id(list: &Value) -> BTreeMap<String, Value> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|e| {
            (
                e["workloadId"].as_str().expect("workloadId").to_string(),
                e.clone(),
            )
        })
        .collect()
}

/// The whole config feed.
async fn config(h: &Hub) -> Held {
    let (v, _) = get(h, &format!("/v1/clusters/{CLUSTER}/config")).await;
    assert_eq!(v.get("since"), None, "a whole feed has no since: {v}");
    Held {
        entries: by_id(&v["workloads"]),
        version: v["version"].as_str().expect("version").into(),
    }
}

/// The whole recommendation feed, paged through two items at a time.
async fn recommendations(h: &Hub) -> Held {
    let base = format!("/v1/clusters/{CLUSTER}/recommendations?limit=2");
    let (first, _) = get(h, &base).await;
    let version = first["version"].as_str().expect("version").to_string();
    let mut entries = by_id(&first["items"]);
    let mut next = first["next"].as_str().map(str::to_string);
    while let Some(cursor) = next {
        let (page, _) = get(h, &format!("{base}&next={cursor}")).await;
        entries.extend(by_id(&page["items"]));
        next = page["next"].as_str().map(str::to_string);
    }
    Held { entries, version }
}

/// What changed from `before` to `after`: (ids whose entry is new or differs, ids gone).
fn diff(before: &Held, after: &Held) -> (Vec<String>, Vec<String>) {
    let changed = after
        .entries
        .iter()
        .filter(|(id, e)| before.entries.get(*id) != Some(e))
        .map(|(id, _)| id.clone())
        .collect();
    let gone = before
        .entries
        .keys()
        .filter(|id| !after.entries.contains_key(*id))
        .cloned()
        .collect();
    (changed, gone)
}

/// Asks `path` for what changed since `held` and checks it is exactly `after`'s
/// difference, and that applying it to `held` gives `after`.
async fn delta_is_exactly(h: &Hub, feed: &str, list: &str, held: &Held, after: &Held) {
    let path = format!("/v1/clusters/{CLUSTER}/{feed}?since={}", held.version);
    let (v, _) = get(h, &path).await;
    assert_eq!(
        v["since"],
        json!(held.version),
        "{feed}: a change answer: {v}"
    );
    assert_eq!(v["version"], json!(after.version), "{feed}");
    let (changed, gone) = diff(held, after);
    let sent = by_id(&v[list]);
    assert_eq!(
        sent.keys().cloned().collect::<Vec<_>>(),
        changed,
        "{feed}: the changed entries"
    );
    let deleted: Vec<String> = serde_json::from_value(v["deleted"].clone()).unwrap_or_default();
    assert_eq!(deleted, gone, "{feed}: the deleted ids");
    let mut applied = held.entries.clone();
    for id in &deleted {
        applied.remove(id);
    }
    applied.extend(sent);
    assert_eq!(
        applied, after.entries,
        "{feed}: the held feed brought up to date"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reader_at_version_n_gets_exactly_the_changes_since_and_a_forgotten_version_the_whole_feed(
) {
    let h = hub_after_run(CLUSTER).await;
    let (config0, recs0) = (config(&h).await, recommendations(&h).await);
    assert!(config0.entries.len() >= 6, "{:?}", config0.entries.keys());

    // Nothing changed: the heads alone, well under 1 KiB for both feeds together.
    let (c, c_bytes) = get(
        &h,
        &format!("/v1/clusters/{CLUSTER}/config?since={}", config0.version),
    )
    .await;
    let (r, r_bytes) = get(
        &h,
        &format!(
            "/v1/clusters/{CLUSTER}/recommendations?since={}",
            recs0.version
        ),
    )
    .await;
    assert_eq!(
        (c["workloads"].clone(), r["items"].clone()),
        (json!([]), json!([]))
    );
    assert_eq!(
        (&c["version"], &r["version"]),
        (&json!(config0.version), &json!(recs0.version))
    );
    assert!(
        c_bytes + r_bytes <= 1024,
        "{c_bytes} + {r_bytes} bytes: {c} {r}"
    );

    // K changes. A policy for the namespace with the most workloads (many effective
    // policies change), an override of a workload elsewhere, an approval of a third,
    // and a workload that left the cluster long enough ago for the hub to forget it.
    let mut namespaces: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (id, w) in &config0.entries {
        let ns = w["namespace"].as_str().expect("namespace").to_string();
        namespaces.entry(ns).or_default().push(id.clone());
    }
    let (busiest, in_busiest) = namespaces
        .iter()
        .max_by_key(|(_, ids)| ids.len())
        .map(|(ns, ids)| (ns.clone(), ids.clone()))
        .expect("a namespace");
    assert!(in_busiest.len() >= 3, "{namespaces:?}");
    let others: Vec<&String> = recs0
        .entries
        .keys()
        .filter(|id| !in_busiest.contains(id))
        .collect();
    let (overridden, approved, forgotten) = (others[0], others[1], others[2]);

    let body = json!({"mode": {"memory": "off"}, "reason": "a hand-tuned cache"});
    let path = format!("/v1/workloads/{overridden}/override");
    let (s, v) = h.as_token(&h.admin).call("PUT", &path, Some(body)).await;
    assert_eq!(s, 200, "{v}");
    let rec = recs0.entries[approved.as_str()]["recommendationId"].clone();
    let path = format!("/v1/workloads/{approved}/approve");
    let body = json!({"recommendationId": rec, "reason": "once"});
    let (s, v) = h.as_token(&h.admin).call("POST", &path, Some(body)).await;
    assert_eq!(s, 201, "{v}");

    // Those two touch one workload each: the hub rebuilds only their entries.
    let (config_a, recs_a) = (config(&h).await, recommendations(&h).await);
    assert_eq!(diff(&config0, &config_a).0, vec![overridden.to_string()]);
    let (changed, _) = diff(&recs0, &recs_a);
    assert!(
        changed.contains(approved) && changed.contains(overridden),
        "{changed:?}"
    );
    delta_is_exactly(&h, "config", "workloads", &config0, &config_a).await;
    delta_is_exactly(&h, "recommendations", "items", &recs0, &recs_a).await;

    let policy = json!({"name": "busiest-off", "selector": {"namespaces": [busiest]},
                        "mode": {"cpu": "off", "memory": "off"}});
    let (s, v) = h
        .as_token(&h.admin)
        .call("POST", "/v1/policies", Some(policy))
        .await;
    assert_eq!(s, 201, "{v}");
    forget(&h, forgotten).await;

    let (config1, recs1) = (config(&h).await, recommendations(&h).await);
    let (changed, gone) = diff(&config0, &config1);
    assert!(
        changed.len() > in_busiest.len(),
        "the policy and the override: {changed:?}"
    );
    assert!(
        in_busiest.iter().all(|id| changed.contains(id)),
        "{changed:?}"
    );
    assert!(changed.contains(overridden), "{changed:?}");
    assert_eq!(gone, vec![forgotten.to_string()]);
    let (changed, gone) = diff(&recs0, &recs1);
    assert!(
        changed.contains(approved) && changed.contains(overridden),
        "{changed:?}"
    );
    assert_eq!(gone, vec![forgotten.to_string()]);

    delta_is_exactly(&h, "config", "workloads", &config0, &config1).await;
    delta_is_exactly(&h, "recommendations", "items", &recs0, &recs1).await;
    delta_is_exactly(&h, "config", "workloads", &config_a, &config1).await;
    delta_is_exactly(&h, "recommendations", "items", &recs_a, &recs1).await;

    // A version from another hub process (a restart, another replica): the whole feed.
    let (_, epoch_n) = config0.version.rsplit_once('.').expect("epoch.n");
    let foreign = format!("0123456789ab.{epoch_n}");
    let (v, _) = get(
        &h,
        &format!("/v1/clusters/{CLUSTER}/config?since={foreign}"),
    )
    .await;
    assert_eq!(v.get("since"), None, "{v}");
    assert_eq!(by_id(&v["workloads"]), config1.entries);

    // A day later the tombstone of the forgotten workload is gone, and with it the
    // hub's means to tell a reader at version 0 about it: that reader resyncs whole.
    h.clock.advance(DAY + 60_000);
    let (v, _) = get(
        &h,
        &format!(
            "/v1/clusters/{CLUSTER}/recommendations?since={}",
            recs0.version
        ),
    )
    .await;
    assert_eq!(v.get("since"), None, "{v}");
    assert_eq!(v["next"], Value::Null, "one page of the default size");
    assert_eq!(by_id(&v["items"]), recs1.entries);
    // A reader at the version after the deletion still gets a change answer.
    let (v, _) = get(
        &h,
        &format!("/v1/clusters/{CLUSTER}/config?since={}", config1.version),
    )
    .await;
    assert_eq!(v["since"], json!(config1.version), "{v}");
}

/// Marks workload `id` gone (as a run that no longer sees it does) and lets the
/// retention job forget it once it has been gone for longer than the history is kept.
async fn forget(h: &Hub, id: &str) {
    let w = h
        .store
        .reading({
            let id = id.to_string();
            move |r| r.workload(&id)
        })
        .await
        .expect("read")
        .expect("the workload");
    let now = h.clock.now_ms();
    let chunk = kerf::store::ChunkWrite {
        run_id: "gone".into(),
        now_ms: now,
        analyzed: Vec::new(),
        failed: vec![(w.seen, kerf::runs::engine::ABSENT_REASON.into())],
    };
    h.store
        .writing(move |tx| tx.write_chunk(&chunk))
        .await
        .expect("stale");
    let settings = h.runs.recommender().await.expect("settings");
    let gone_for = settings
        .retention_ms()
        .max(kerf::runs::retention::GONE_AT_LEAST_MS);
    h.clock.advance(gone_for + 60_000);
    kerf::runs::retention::prune(&h.store, h.clock.now_ms(), settings.retention_ms()).await;
    let left = h
        .store
        .reading({
            let id = id.to_string();
            move |r| r.workload(&id)
        })
        .await
        .expect("read");
    assert!(left.is_none(), "forgotten");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_poll_answers_with_the_change_it_waited_for_and_a_wait_past_20_s_is_refused() {
    let h = hub_after_run(CLUSTER).await;
    let before = config(&h).await;
    let path = format!(
        "/v1/clusters/{CLUSTER}/config?since={}&wait=20",
        before.version
    );
    let agent = h.as_token(&h.agent);
    let poll = tokio::spawn(async move { agent.call("GET", &path, None).await });
    // Whether the poll is already waiting or not yet asked, it answers this change.
    let id = before.entries.keys().next().expect("a workload").clone();
    let body = json!({"mode": {"cpu": "off"}, "reason": "hold"});
    let (s, v) = h
        .as_token(&h.admin)
        .call("PUT", &format!("/v1/workloads/{id}/override"), Some(body))
        .await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = poll.await.expect("the poll");
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["since"], json!(before.version), "{v}");
    assert_eq!(
        by_id(&v["workloads"]).keys().collect::<Vec<_>>(),
        [&id],
        "{v}"
    );

    let path = format!(
        "/v1/clusters/{CLUSTER}/config?since={}&wait=21",
        before.version
    );
    let (s, v) = h.as_token(&h.agent).call("GET", &path, None).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_query")),
        "{v}"
    );
}

/// Issue 35: the feed cache does not keep a cluster nobody reads. A cluster idle for
/// `EVICT_AFTER_MS` leaves the hub's cache when another cluster's agent reads; its own
/// agent, back with the version it held, gets the whole feed at a version above every
/// one handed out before, so no old version is ever read as a delta of new feeds.
#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_nobody_reads_leaves_the_feed_cache_and_its_old_version_gets_the_whole_feed() {
    let h = hub_after_run(CLUSTER).await;
    let west = kerf::fleet::clusters::register(
        &h.store,
        h.clock.now_ms(),
        kerf::commands::operator("test"),
        "demo-west".into(),
        Default::default(),
    )
    .await
    .expect("cluster")
    .token;
    let held = config(&h).await;
    assert_eq!(h.state.fleet.feeds.held_clusters(), 1);

    h.clock
        .advance(kerf::fleet::feed_cache::EVICT_AFTER_MS + 60_000);
    let (s, v) = h
        .as_token(&west)
        .call("GET", "/v1/clusters/demo-west/config", None)
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        h.state.fleet.feeds.held_clusters(),
        1,
        "demo-east's feeds were dropped, demo-west's are held"
    );

    let path = format!("/v1/clusters/{CLUSTER}/config?since={}", held.version);
    let (back, _) = get(&h, &path).await;
    assert_eq!(back.get("since"), None, "the whole feed: {back}");
    assert_eq!(by_id(&back["workloads"]).len(), held.entries.len());
    let number = |v: &str| -> u64 {
        v.rsplit_once('.')
            .and_then(|(_, n)| n.parse().ok())
            .expect("a version")
    };
    let now = back["version"].as_str().expect("version");
    assert!(
        number(now) > number(&held.version),
        "{now} after {}",
        held.version
    );
    let (again, _) = get(&h, &format!("/v1/clusters/{CLUSTER}/config?since={now}")).await;
    assert_eq!(
        again["since"],
        json!(now),
        "the new version is a delta base: {again}"
    );
}

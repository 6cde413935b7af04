//! `GET /v1/policies/presets` and `POST /v1/policies/backtest` over HTTP on a hub
//! reading the demo fleet: a preset's backtest of one namespace adds its workloads up,
//! a policy document takes its own selector and analysis, the hub's default analysis is
//! the fleet default, and every bad field is a 400 naming it.

use serde_json::{json, Value};

use crate::support::hub::hub;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presets_and_backtests_over_http() {
    let h = hub("demo-east", true).await;
    let (s, presets) = h
        .as_token(&h.admin)
        .call("GET", "/v1/policies/presets", None)
        .await;
    assert_eq!(s, 200, "{presets}");
    let items = presets["items"].as_array().expect("items");
    let names: Vec<&str> = items.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(
        names,
        ["cost-saving", "balanced", "conservative", "engine-default"]
    );
    let fleet: Vec<&Value> = items.iter().filter(|p| p["fleetDefault"] == true).collect();
    assert_eq!(fleet.len(), 1);

    let body = json!({ "preset": "conservative", "selector": { "namespaces": ["payments"] } });
    let (s, r) = h
        .as_token(&h.admin)
        .call("POST", "/v1/policies/backtest", Some(body))
        .await;
    assert_eq!(s, 200, "{r}");
    let workloads = r["workloads"].as_array().expect("workloads");
    assert!(!workloads.is_empty());
    assert!(workloads
        .iter()
        .all(|w| w["namespace"] == "payments" && w["cluster"] == "demo-east"));
    let cost: f64 = workloads
        .iter()
        .filter_map(|w| w["inSample"]["costChange"].as_f64())
        .sum();
    assert!((r["inSample"]["costChange"].as_f64().expect("cost") - cost).abs() < 1e-6);
    let ooms: u64 = workloads
        .iter()
        .filter_map(|w| w["outOfSample"]["wouldBeOomKills"].as_u64())
        .sum();
    assert_eq!(r["outOfSample"]["wouldBeOomKills"].as_u64(), Some(ooms));
    assert_eq!(r["analysis"], items[2]["analysis"], "the preset's policy");
    assert!(r["span"]["split"].as_str().expect("split") < r["span"]["end"].as_str().expect("end"));
    // The OOM-killed ledger is there, with its recorded kills.
    let ledger = workloads
        .iter()
        .find(|w| w["name"] == "ledger")
        .expect("ledger");
    assert!(
        ledger["inSample"]["recordedOomKills"].as_u64() > Some(0),
        "{ledger}"
    );

    // A policy document: its selector and its analysis; without one, the hub's default.
    let doc = json!({ "policy": { "name": "draft", "selector": { "names": ["catalog"] },
        "analysis": { "cpu": { "headroomCoefficient": 2 } } } });
    let (s, r) = h
        .as_token(&h.admin)
        .call("POST", "/v1/policies/backtest", Some(doc))
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["workloads"].as_array().map(Vec::len), Some(1));
    assert_eq!(r["analysis"]["cpu"]["headroomCoefficient"], 2.0);
    let (s, r) = h
        .as_token(&h.admin)
        .call(
            "POST",
            "/v1/policies/backtest",
            Some(json!({ "selector": { "names": ["catalog"] } })),
        )
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["analysis"], fleet[0]["analysis"]);

    for (body, field) in [
        (json!({ "preset": "cheap" }), "preset"),
        (json!({ "split": 1.5 }), "split"),
        (json!({ "limit": 100000 }), "limit"),
        (
            json!({ "analysis": { "memory": { "strategy": "p99" } } }),
            "analysis",
        ),
        (json!({ "selector": { "nodes": ["a"] } }), "selector"),
        (json!({ "surprise": true }), "surprise"),
        // The body rules of every route: the whole body is the field "".
        (json!([1, 2]), ""),
        (json!({ "selector": [] }), "selector"),
        (json!({ "preset": null }), "preset"),
    ] {
        let (s, v) = h
            .as_token(&h.admin)
            .call("POST", "/v1/policies/backtest", Some(body.clone()))
            .await;
        assert_eq!(s, 400, "{body}: {v}");
        let named = v["error"]["details"]["field"].as_str().unwrap_or_default();
        assert!(named.starts_with(field), "{body}: {v}");
    }
}

//! Team roles read workloads only inside their namespaces: the list is filtered, and a
//! workload outside is answered as if it did not exist (through `kerf demo`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{client, Demo};

async fn get(http: &reqwest::Client, url: String, token: &str) -> (u16, Value) {
    let r = http.get(url).bearer_auth(token).send().await.expect("send");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn post(http: &reqwest::Client, url: String, token: &str, body: Value) -> Value {
    let r = http
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("send");
    assert!(r.status().is_success(), "{}", r.status());
    r.json().await.expect("json")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_team_viewer_reads_only_the_workloads_of_its_namespaces() {
    let demo = Demo::start(None);
    let (http, base, admin) = (client(), demo.kerf.url(""), demo.token.clone());
    let deadline = Instant::now() + Duration::from_secs(90);
    let all = loop {
        let (s, body) = get(&http, format!("{base}/v1/workloads?limit=500"), &admin).await;
        assert_eq!(s, 200, "{body}");
        let items = body["items"].as_array().cloned().unwrap_or_default();
        if items.iter().any(|w| w["namespace"] == "shop")
            && items.iter().any(|w| w["namespace"] != "shop")
        {
            break items;
        }
        assert!(Instant::now() < deadline, "demo workloads never appeared");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let team = post(
        &http,
        format!("{base}/v1/admin/teams"),
        &admin,
        json!({"name": "shop-readers", "namespaces": [{"cluster": "*", "namespace": "shop"}]}),
    )
    .await;
    let token = post(
        &http,
        format!("{base}/v1/admin/tokens"),
        &admin,
        json!({"name": "shop-viewer", "role": "team-viewer", "team": team["id"]}),
    )
    .await;
    let viewer = token["token"]
        .as_str()
        .or_else(|| token["value"].as_str())
        .expect("token value")
        .to_string();

    let (s, body) = get(&http, format!("{base}/v1/workloads?limit=500"), &viewer).await;
    assert_eq!(s, 200, "{body}");
    let seen = body["items"].as_array().expect("items");
    let expected = all.iter().filter(|w| w["namespace"] == "shop").count();
    assert_eq!(seen.len(), expected, "only shop workloads: {body}");
    assert!(seen.iter().all(|w| w["namespace"] == "shop"));

    let inside = seen[0]["id"].as_str().expect("id");
    let outside = all
        .iter()
        .find(|w| w["namespace"] != "shop")
        .expect("other")["id"]
        .as_str()
        .expect("id");
    for path in ["", "/recommendations"] {
        let (s, _) = get(
            &http,
            format!("{base}/v1/workloads/{inside}{path}"),
            &viewer,
        )
        .await;
        assert_eq!(s, 200, "inside{path}");
        let (s, body) = get(
            &http,
            format!("{base}/v1/workloads/{outside}{path}"),
            &viewer,
        )
        .await;
        assert_eq!(s, 404, "outside{path}: {body}");
    }
    let (s, _) = get(
        &http,
        format!("{base}/v1/workloads/{outside}/usage?resource=cpu"),
        &viewer,
    )
    .await;
    assert_eq!(s, 404);
}

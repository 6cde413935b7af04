//! Team roles read workloads only inside their namespaces: the list is filtered, and a
//! workload outside is answered as if it did not exist (through `kerf demo`).

use serde_json::json;

use crate::support::{eventually, secs, Demo};

#[tokio::test(flavor = "multi_thread")]
async fn a_team_viewer_reads_only_the_workloads_of_its_namespaces() {
    let demo = Demo::start(None);
    let api = demo.api();
    let all = eventually("the demo's workloads", secs(90), async || {
        let (s, body) = api.get("/v1/workloads?limit=500").await;
        assert_eq!(s, 200, "{body}");
        let items = body["items"].as_array().cloned().unwrap_or_default();
        if items.iter().any(|w| w["namespace"] == "shop")
            && items.iter().any(|w| w["namespace"] != "shop")
        {
            Ok(items)
        } else {
            Err(body)
        }
    })
    .await;
    let team = api
        .post_ok(
            "/v1/admin/teams",
            json!({"name": "shop-readers", "namespaces": [{"cluster": "*", "namespace": "shop"}]}),
        )
        .await;
    let token = api
        .post_ok(
            "/v1/admin/tokens",
            json!({"name": "shop-viewer", "role": "team-viewer", "team": team["id"]}),
        )
        .await;
    let viewer = token["token"]
        .as_str()
        .or_else(|| token["value"].as_str())
        .expect("token value")
        .to_string();

    let (s, body) = api.as_token(&viewer).get("/v1/workloads?limit=500").await;
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
        let (s, _) = api
            .as_token(&viewer)
            .get(&format!("/v1/workloads/{inside}{path}"))
            .await;
        assert_eq!(s, 200, "inside{path}");
        let (s, body) = api
            .as_token(&viewer)
            .get(&format!("/v1/workloads/{outside}{path}"))
            .await;
        assert_eq!(s, 404, "outside{path}: {body}");
    }
    let (s, _) = api
        .as_token(&viewer)
        .get(&format!("/v1/workloads/{outside}/usage?resource=cpu"))
        .await;
    assert_eq!(s, 404);
}

//! Pointing a cluster at a datasource is a configuration change like any other: one
//! `DatasourceUpdated` row naming the datasource, whose `clusters` go from without the
//! cluster to with it, carrying the caller's reason (and never a secret).

use serde_json::json;

use crate::support::hub::hub;

#[tokio::test(flavor = "multi_thread")]
async fn linking_a_cluster_to_a_datasource_is_audited() {
    let h = hub("prod", false).await;
    let body = json!({"name": "metrics", "type": "prometheus", "url": "http://127.0.0.1:9",
        "auth": {"type": "bearer", "token": "link-audit-secret-token"}});
    let (s, ds) = h
        .as_token(&h.admin)
        .call("POST", "/v1/datasources", Some(body))
        .await;
    assert_eq!(s, 201, "{ds}");
    let id = ds["id"].as_i64().expect("id");
    let link = json!({"datasourceId": id, "reason": "move prod to the new Prometheus"});
    let (s, v) = h
        .as_token(&h.admin)
        .call("PUT", "/v1/clusters/prod/datasource", Some(link))
        .await;
    assert_eq!(s, 200, "{v}");
    let rows = h.changes("DatasourceUpdated").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    assert_eq!(r["target"]["id"], id.to_string());
    assert_eq!(r["reason"], "move prod to the new Prometheus");
    assert_eq!(r["before"]["clusters"], json!([]));
    assert_eq!(r["after"]["clusters"], json!(["prod"]));
    assert!(!r.to_string().contains("link-audit-secret-token"), "{r}");

    let unknown = json!({"datasourceId": id + 100});
    let (s, _) = h
        .as_token(&h.admin)
        .call("PUT", "/v1/clusters/prod/datasource", Some(unknown))
        .await;
    assert_eq!(s, 404);
    assert_eq!(
        h.changes("DatasourceUpdated").await.len(),
        1,
        "a refusal is not audited"
    );
}

//! The answer, taken out of kerf (through `kerf demo`): the workload list carries
//! current → recommended values and sorts every workload by its signed saving; the
//! summary adds up to the list; the recommendations export (CSV, JSON, YAML) holds what
//! the list holds, only a team's namespaces for a team token; the workload page's apply
//! configuration is a Kubernetes object the typed API reads.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::PodSpec;
use serde_json::{json, Value};

use crate::support::{client, Api, Demo};

async fn get(http: &reqwest::Client, url: String, token: &str) -> (u16, String, String) {
    let r = http.get(url).bearer_auth(token).send().await.expect("send");
    let status = r.status().as_u16();
    let ctype = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (status, ctype, r.text().await.expect("body"))
}

async fn get_json(http: &reqwest::Client, url: String, token: &str) -> Value {
    let (s, _, body) = get(http, url, token).await;
    assert_eq!(s, 200, "{body}");
    serde_json::from_str(&body).expect("json")
}

fn saving(w: &Value) -> f64 {
    -w["estimatedMonthlyCostDelta"].as_f64().unwrap_or(0.0)
}

/// The pod spec of an apply configuration, read with the Kubernetes API's own types
/// (`None` for kinds other than the apps/v1 ones).
fn pod_spec(yaml: &str) -> Option<PodSpec> {
    let doc: Value = yaml_serde::from_str(yaml).expect("yaml");
    let spec = match doc["kind"].as_str().expect("kind") {
        "Deployment" => serde_json::from_value::<Deployment>(doc.clone())
            .expect("a Deployment")
            .spec
            .and_then(|s| s.template.spec),
        "StatefulSet" => serde_json::from_value::<StatefulSet>(doc.clone())
            .expect("a StatefulSet")
            .spec
            .and_then(|s| s.template.spec),
        "DaemonSet" => serde_json::from_value::<DaemonSet>(doc.clone())
            .expect("a DaemonSet")
            .spec
            .and_then(|s| s.template.spec),
        _ => return None,
    };
    Some(spec.expect("a pod template"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_list_summary_export_and_apply_configuration_tell_the_same_answer() {
    let demo = Demo::start(None);
    let (http, base, admin) = (client(), demo.kerf.url(""), demo.token.clone());
    let all = Api::new(&base, &admin).analysed().await;

    // Values on the list: some workload shows a current and a recommended value.
    let changed = all
        .iter()
        .filter(|w| w["hasRecommendation"] == true && w["kind"] == "Deployment")
        .find(|w| {
            w["resources"].as_array().into_iter().flatten().any(|c| {
                ["cpu", "memory"].iter().any(|r| {
                    let s = &c[r]["request"];
                    s["current"].is_number() && s["recommended"].is_number()
                })
            })
        })
        .expect("a workload with current → recommended requests");

    // Savings orders every workload, the extra spend last; prefix and glob filters.
    let by_savings = get_json(
        &http,
        format!("{base}/v1/workloads?limit=500&sort=savings"),
        &admin,
    )
    .await;
    let items = by_savings["items"].as_array().expect("items");
    assert_eq!(items.len(), all.len());
    assert!(items.windows(2).all(|p| saving(&p[0]) >= saving(&p[1])));
    let namespace = changed["namespace"].as_str().expect("namespace");
    for pattern in [&namespace[..2], &format!("{}*", &namespace[..1])] {
        let page = get_json(
            &http,
            format!("{base}/v1/workloads?limit=500&namespace={pattern}"),
            &admin,
        )
        .await;
        let got = page["items"].as_array().expect("items");
        assert!(got.iter().any(|w| w["namespace"] == namespace), "{pattern}");
        assert!(got.iter().all(|w| w["namespace"]
            .as_str()
            .expect("ns")
            .starts_with(&namespace[..1])));
    }

    // The summary adds up to the list, by namespace too; net is extra spend − savings.
    let summary = get_json(
        &http,
        format!("{base}/v1/workloads/summary?by=namespace"),
        &admin,
    )
    .await;
    let total = &summary["total"];
    assert_eq!(total["workloads"], json!(all.len()));
    let savings: f64 = all.iter().map(|w| saving(w).max(0.0)).sum();
    assert!((total["monthlySavings"].as_f64().expect("savings") - savings).abs() < 0.05);
    let net = total["monthlyExtraSpend"].as_f64().expect("extra")
        - total["monthlySavings"].as_f64().expect("s");
    assert!((total["monthlyNet"].as_f64().expect("net") - net).abs() < 0.011);
    let groups = summary["groups"].as_array().expect("groups");
    let counted: i64 = groups
        .iter()
        .map(|g| g["workloads"].as_i64().expect("n"))
        .sum();
    assert_eq!(counted, all.len() as i64);
    assert!(groups
        .iter()
        .all(|g| g["cluster"].is_string() && g["namespace"].is_string()));

    // The export holds the list; CSV has a row per container; YAML one object per change.
    let export = get_json(
        &http,
        format!("{base}/v1/recommendations?format=json"),
        &admin,
    )
    .await;
    assert_eq!(export["count"], json!(all.len()));
    let (s, ctype, csv) = get(
        &http,
        format!("{base}/v1/recommendations?format=csv"),
        &admin,
    )
    .await;
    assert_eq!((s, ctype.as_str()), (200, "text/csv; charset=utf-8"));
    let containers: usize = all
        .iter()
        .map(|w| w["resources"].as_array().map_or(1, |c| c.len().max(1)))
        .sum();
    assert_eq!(
        csv.lines().count(),
        containers + 1,
        "header and one row per container"
    );
    assert!(csv.starts_with("cluster,namespace,kind,name,container,"));
    let (s, _, yaml) = get(
        &http,
        format!("{base}/v1/recommendations?format=yaml"),
        &admin,
    )
    .await;
    assert_eq!(s, 200);
    let docs = yaml.split("\n---\n").count();
    assert!(
        docs >= 1
            && docs
                <= all
                    .iter()
                    .filter(|w| w["hasRecommendation"] == true)
                    .count()
    );
    for doc in yaml.split("\n---\n") {
        assert!(doc.contains("\nkind: "), "{doc}");
        if let Some(spec) = pod_spec(doc) {
            assert!(!spec.containers.is_empty(), "{doc}");
        }
    }

    // The workload page's apply configuration names the changing container's resources.
    let id = changed["id"].as_str().expect("id");
    let page = get_json(&http, format!("{base}/v1/workloads/{id}"), &admin).await;
    let yaml = page["apply"]["yaml"].as_str().expect("apply yaml");
    let spec = pod_spec(yaml).expect("a Deployment");
    let resources = spec.containers[0].resources.as_ref().expect("resources");
    assert!(resources.requests.as_ref().is_some_and(|r| !r.is_empty()));
    let command = page["apply"]["command"].as_str().expect("command");
    assert!(command.starts_with("kubectl apply --server-side --field-manager=kerf-manual"));
    assert!(command.contains(yaml));

    // Bad input names what is wrong.
    for (query, param) in [
        ("format=xml", "format"),
        ("limit=5", "limit"),
        ("sort=size", "sort"),
    ] {
        let (s, _, body) = get(&http, format!("{base}/v1/recommendations?{query}"), &admin).await;
        assert_eq!(s, 400, "{query}: {body}");
        assert!(body.contains(param), "{query}: {body}");
    }
    let (s, _, body) = get(
        &http,
        format!("{base}/v1/workloads/summary?by=colour"),
        &admin,
    )
    .await;
    assert_eq!(s, 400, "{body}");
    assert!(body.contains("by"), "{body}");

    // A team token exports only its namespaces.
    let team: Value = http
        .post(format!("{base}/v1/admin/teams"))
        .bearer_auth(&admin)
        .json(&json!({"name": "one-ns", "namespaces": [{"cluster": "*", "namespace": namespace}]}))
        .send()
        .await
        .expect("team")
        .json()
        .await
        .expect("team json");
    let token: Value = http
        .post(format!("{base}/v1/admin/tokens"))
        .bearer_auth(&admin)
        .json(&json!({"name": "one-ns-viewer", "role": "team-viewer", "team": team["id"]}))
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("token json");
    let viewer = token["token"]
        .as_str()
        .or_else(|| token["value"].as_str())
        .expect("token value");
    let scoped = get_json(
        &http,
        format!("{base}/v1/recommendations?format=json"),
        viewer,
    )
    .await;
    let expected = all.iter().filter(|w| w["namespace"] == namespace).count();
    assert_eq!(scoped["count"], json!(expected));
    assert!(scoped["items"]
        .as_array()
        .expect("items")
        .iter()
        .all(|w| w["namespace"] == namespace));
    let (_, _, csv) = get(
        &http,
        format!("{base}/v1/recommendations?format=csv"),
        viewer,
    )
    .await;
    assert!(csv
        .lines()
        .skip(1)
        .all(|l| l.split(',').nth(1) == Some(namespace)));
    let totals = get_json(&http, format!("{base}/v1/workloads/summary"), viewer).await;
    assert_eq!(totals["total"]["workloads"], json!(expected));
}

/// The cells of CSV `text` (RFC 4180 quoting), row by row.
fn csv_cells(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let (mut row, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => row.push(std::mem::take(&mut cell)),
            ('\r', false) => {}
            ('\n', false) => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (c, _) => cell.push(c),
        }
    }
    rows
}

#[tokio::test(flavor = "multi_thread")]
async fn text_a_spreadsheet_would_run_as_a_formula_is_neutralized_in_the_csv_export() {
    let h = crate::support::hub::hub("sheet", false).await;
    let hostile = crate::support::hub::Seeded {
        cluster: "sheet",
        namespace: "=cmd|' /C calc'!A0",
        kind: "@SUM(1+1)",
        name: "+HYPERLINK(\"http://evil.example\",\"x\")",
        container: "-2+3",
        notices: ",=1+1,",
    };
    let now = kerf::clock::Clock::now_ms(h.clock.as_ref());
    hostile.store(&h.store, now).await;
    let (status, _, text) = get(
        &client(),
        format!("{}/v1/recommendations?format=csv", h.base),
        &h.admin,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let rows = csv_cells(&text);
    assert_eq!(rows.len(), 2, "header and one container row:\n{text}");
    let (header, row) = (&rows[0], &rows[1]);
    assert_eq!(header.len(), row.len(), "{text}");
    let cell = |name: &str| row[header.iter().position(|h| h == name).expect(name)].clone();
    for (column, sent) in [
        ("namespace", hostile.namespace),
        ("kind", hostile.kind),
        ("name", hostile.name),
        ("container", hostile.container),
        ("notices", "=1+1"),
    ] {
        assert_eq!(
            cell(column),
            format!("'{sent}"),
            "{column} is quoted as text"
        );
    }
    // Only numbers may start with a formula character (a negative cost delta).
    for c in row {
        if c.starts_with(['=', '+', '-', '@', '\t', '\r']) {
            assert!(c.parse::<f64>().is_ok(), "{c:?} would run as a formula");
        }
    }
    assert_eq!(cell("workload_monthly_cost_delta"), "-3.5");
}

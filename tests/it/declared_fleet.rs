//! The fleet declared in kerf.toml (`[fleet]`), black-box with the real binary: applied at
//! start through the API's operations (audited as "kerf.toml"), secrets only from files
//! and variables and never shown, a restart with the same file writes nothing, the API
//! refuses to change what the file declares and leaves the rest alone, a removed
//! declaration deletes nothing, and a bad declaration stops the start (exit 2, one line)
//! before anything is written.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::prometheus::{OpenMetrics, Prometheus, BASIC_AUTH_PASSWORD, BASIC_AUTH_USER};
use crate::support::{error_code, Api, DataDir, Kerf};

const HEADER_SECRET: &str = "declared-Header-Secret-91c4";

fn token(n: u8) -> String {
    format!("kerf_ct_{}", format!("{n:02x}").repeat(32))
}

/// A data dir, its admin token and a directory for the config file and secrets.
struct Setup {
    data: DataDir,
    admin: String,
    etc: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let data = DataDir::new();
        let admin = data.admin_token();
        Setup {
            data,
            admin,
            etc: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.etc.path().join(name);
        std::fs::write(&p, text).expect("write");
        // Private, as a mounted Secret is: kerf refuses secret files others can read.
        let private = std::fs::Permissions::from_mode(0o600);
        std::fs::set_permissions(&p, private).expect("chmod");
        p
    }

    fn config(&self, text: &str) -> PathBuf {
        self.file("kerf.toml", text)
    }

    fn start(&self, config: &Path) -> Kerf {
        let c = config.display().to_string();
        Kerf::builder(self.data.path())
            .envs(&[("PROM_HEADER", HEADER_SECRET)])
            .args(&["--config", &c])
            .start()
    }
}

/// A datasource on `url` (basic auth from a file, a secret header from a variable) and
/// cluster `east` linked to it with its token from a file.
fn fleet_toml(s: &Setup, url: &str, token_n: u8) -> String {
    let password = s.file("prom-password", &format!("{BASIC_AUTH_PASSWORD}\n"));
    let token = s.file("east-token", &token(token_n));
    format!(
        r#"
[[fleet.datasources]]
name = "prom"
url = "{url}"
cluster_label = "cluster"
auth = {{ type = "basic", username = "{BASIC_AUTH_USER}", password_file = "{}" }}
headers = [{{ name = "X-Scope-OrgID", value_env = "PROM_HEADER" }}]

[[fleet.clusters]]
name = "east"
display_name = "East"
labels = {{ env = "prod" }}
datasource = "prom"
token_file = "{}"
"#,
        password.display(),
        token.display()
    )
}

async fn changes(kerf: &Kerf, admin: &str) -> Vec<Value> {
    let (s, v) = kerf
        .api(admin)
        .call("GET", "/v1/audit/config?limit=500", None)
        .await;
    assert_eq!(s, 200, "{v}");
    v["items"].as_array().expect("items").clone()
}

fn prometheus() -> Prometheus {
    let mut om = OpenMetrics::new();
    om.sample(
        "kube_pod_owner",
        &[
            ("cluster", "east"),
            ("namespace", "a"),
            ("pod", "p"),
            ("uid", "u"),
        ],
        1.0,
        1_760_000_000_000,
    );
    Prometheus::with_data(&om, true)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declared_fleet_is_applied_at_start_and_a_restart_with_the_same_file_writes_nothing() {
    let prom = prometheus();
    let s = Setup::new();
    let config = s.config(&fleet_toml(&s, &prom.url, 1));
    let kerf = s.start(&config);
    let base = kerf.url("");
    let (st, list) = Api::new(&base, &s.admin)
        .call("GET", "/v1/datasources", None)
        .await;
    assert_eq!(st, 200, "{list}");
    let ds = &list["items"][0];
    assert_eq!(ds["name"], "prom");
    assert_eq!(ds["auth"]["passwordSet"], true, "{ds}");
    assert_eq!(ds["headers"][0]["valueSet"], true, "{ds}");
    assert_eq!(ds["clusters"], json!(["east"]), "{ds}");
    let id = ds["id"].as_i64().expect("id");
    // The password read from the file is the one Prometheus accepts.
    let path = format!("/v1/datasources/{id}/test");
    let (st, report) = Api::new(&base, &s.admin).call("POST", &path, None).await;
    assert_eq!(st, 200, "{report}");
    assert_eq!(report["reachable"], true, "{report}");
    assert_eq!(report["authenticated"], true, "{report}");
    let (st, c) = Api::new(&base, &s.admin)
        .call("GET", "/v1/clusters/east", None)
        .await;
    assert_eq!(st, 200, "{c}");
    assert_eq!(
        (c["displayName"].clone(), c["labels"].clone()),
        (json!("East"), json!({"env": "prod"}))
    );
    // The declared token is the agent's.
    let (st, feed) = Api::new(&base, token(1))
        .call("GET", "/v1/clusters/east/config", None)
        .await;
    assert_eq!(st, 200, "{feed}");

    let rows = changes(&kerf, &s.admin).await;
    let by_file: Vec<&Value> = rows
        .iter()
        .filter(|r| r["actor"]["type"] == "system" && r["actor"]["name"] == "kerf.toml")
        .collect();
    let mut actions: Vec<&str> = by_file
        .iter()
        .filter_map(|r| r["action"].as_str())
        .collect();
    actions.sort_unstable();
    assert_eq!(
        actions,
        ["ClusterCreated", "DatasourceCreated", "DatasourceUpdated"],
        "{rows:?}"
    );
    let secrets = [BASIC_AUTH_PASSWORD, HEADER_SECRET, &token(1)];
    for text in [
        serde_json::to_string(&rows).expect("json"),
        list.to_string(),
        kerf.log_text(),
    ] {
        for secret in secrets {
            assert!(!text.contains(secret), "a secret leaked: {text}");
        }
    }
    assert_eq!(kerf.stop(), Some(0));

    let kerf = s.start(&config);
    let again = changes(&kerf, &s.admin).await;
    assert_eq!(again.len(), rows.len(), "a restart wrote: {again:?}");
    assert!(
        kerf.log_text()
            .contains("declared fleet: already as the config file says"),
        "{}",
        kerf.log_text()
    );
    let (_, c2) = kerf
        .api(&s.admin)
        .call("GET", "/v1/clusters/east", None)
        .await;
    assert_eq!(c2["updatedAt"], c["updatedAt"]);
    assert_eq!(kerf.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_refuses_to_change_what_the_file_declares_and_leaves_the_rest_alone() {
    let s = Setup::new();
    let config = s.config(&fleet_toml(&s, "http://127.0.0.1:9", 2));
    let kerf = s.start(&config);
    let base = kerf.url("");
    let (_, list) = Api::new(&base, &s.admin)
        .call("GET", "/v1/datasources", None)
        .await;
    let id = list["items"][0]["id"].as_i64().expect("id");
    let doc = json!({"name": "prom", "type": "prometheus", "url": "http://127.0.0.1:10"});
    let refused: [(&str, String, Option<Value>); 6] = [
        ("PUT", format!("/v1/datasources/{id}"), Some(doc)),
        ("DELETE", format!("/v1/datasources/{id}"), None),
        (
            "PATCH",
            "/v1/clusters/east".into(),
            Some(json!({"displayName": "X"})),
        ),
        ("DELETE", "/v1/clusters/east".into(), None),
        ("POST", "/v1/clusters/east/token".into(), Some(json!({}))),
        (
            "PUT",
            "/v1/clusters/east/datasource".into(),
            Some(json!({"datasourceId": id})),
        ),
    ];
    for (method, path, body) in refused {
        let (st, v) = Api::new(&base, &s.admin).call(method, &path, body).await;
        assert_eq!(st, 409, "{method} {path}: {v}");
        assert_eq!(error_code(&v), "declared_in_config", "{v}");
        let message = v["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains("change it there and restart kerf"), "{v}");
    }
    // What the API made is the API's.
    let other = json!({"name": "other", "type": "prometheus", "url": "http://127.0.0.1:11"});
    let (st, v) = Api::new(&base, &s.admin)
        .call("POST", "/v1/datasources", Some(other))
        .await;
    assert_eq!(st, 201, "{v}");
    let other_id = v["id"].as_i64().expect("id");
    let west = json!({"name": "west"});
    let (st, v) = Api::new(&base, &s.admin)
        .call("POST", "/v1/clusters", Some(west))
        .await;
    assert_eq!(st, 201, "{v}");
    let link = json!({"datasourceId": other_id});
    let (st, v) = Api::new(&base, &s.admin)
        .call("PUT", "/v1/clusters/west/datasource", Some(link))
        .await;
    assert_eq!(st, 200, "{v}");
    let before = changes(&kerf, &s.admin).await.len();
    assert_eq!(kerf.stop(), Some(0));

    let kerf = s.start(&config);
    let base = kerf.url("");
    assert_eq!(changes(&kerf, &s.admin).await.len(), before);
    let (_, west) = Api::new(&base, &s.admin)
        .call("GET", "/v1/clusters/west", None)
        .await;
    assert_eq!(west["state"], "active", "{west}");
    let (st, v) = Api::new(&base, &s.admin)
        .call("DELETE", &format!("/v1/datasources/{other_id}"), None)
        .await;
    assert_eq!(st, 409, "still linked to west: {v}");
    assert_eq!(error_code(&v), "conflict", "{v}");
    assert_eq!(kerf.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn changing_or_removing_a_declaration_takes_effect_at_the_next_start() {
    let s = Setup::new();
    let config = s.config(&fleet_toml(&s, "http://127.0.0.1:9", 3));
    let kerf = s.start(&config);
    let before = changes(&kerf, &s.admin).await.len();
    assert_eq!(kerf.stop(), Some(0));

    // A new URL and a rotated token: one update each, audited, the old token refused.
    s.config(&fleet_toml(&s, "http://127.0.0.1:19", 4));
    let kerf = s.start(&config);
    let base = kerf.url("");
    let rows = changes(&kerf, &s.admin).await;
    let fresh: Vec<(&str, &str)> = rows[..rows.len() - before]
        .iter()
        .map(|r| {
            (
                r["action"].as_str().unwrap_or(""),
                r["actor"]["name"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        fresh.len(),
        2,
        "a datasource update and a token change: {fresh:?}"
    );
    assert!(
        fresh.contains(&("DatasourceUpdated", "kerf.toml")),
        "{fresh:?}"
    );
    assert!(
        fresh.contains(&("ClusterUpdated", "kerf.toml")),
        "{fresh:?}"
    );
    let (_, list) = Api::new(&base, &s.admin)
        .call("GET", "/v1/datasources", None)
        .await;
    assert_eq!(list["items"][0]["url"], "http://127.0.0.1:19");
    let (st, _) = Api::new(&base, token(3))
        .call("GET", "/v1/clusters/east/config", None)
        .await;
    assert_eq!(st, 401, "the old token is refused");
    let (st, _) = Api::new(&base, token(4))
        .call("GET", "/v1/clusters/east/config", None)
        .await;
    assert_eq!(st, 200, "the declared token works");
    assert_eq!(kerf.stop(), Some(0));

    // Declarations removed: everything stays, and the API manages it again.
    s.config("");
    let kerf = s.start(&config);
    let base = kerf.url("");
    let (_, list) = Api::new(&base, &s.admin)
        .call("GET", "/v1/datasources", None)
        .await;
    assert_eq!(list["items"][0]["clusters"], json!(["east"]), "{list}");
    let patch = json!({"displayName": "East, by hand"});
    let (st, v) = Api::new(&base, &s.admin)
        .call("PATCH", "/v1/clusters/east", Some(patch))
        .await;
    assert_eq!(st, 200, "{v}");
    let (st, _) = Api::new(&base, token(4))
        .call("GET", "/v1/clusters/east/config", None)
        .await;
    assert_eq!(st, 200, "the token stays");
    assert_eq!(kerf.stop(), Some(0));
}

/// Runs `kerf --config FILE --listen 127.0.0.1:0 ARGS` to its end.
fn run(s: &Setup, config: &Path, args: &[&str]) -> std::process::Output {
    let c = config.display().to_string();
    let mut all = vec!["--config", c.as_str(), "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    s.data.run_env(&all, &[("KERF_LOG", "warn")])
}

fn refusal(out: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let last = stderr.lines().last().unwrap_or("").to_string();
    assert!(last.starts_with("kerf: "), "{stderr}");
    last
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_declaration_stops_the_start_with_exit_2_and_one_line_and_writes_nothing() {
    let s = Setup::new();
    let good_ds = "[[fleet.datasources]]\nname = \"prom\"\nurl = \"http://127.0.0.1:9\"\n";
    let cases = [
        (
            format!(
                "{good_ds}auth = {{ type = \"bearer\", token_file = \"/nonexistent/kerf-t\" }}\n"
            ),
            "fleet.datasources.prom.auth.token_file /nonexistent/kerf-t",
        ),
        (
            format!("{good_ds}timeout_seconds = 0\n"),
            "fleet.datasources.prom: timeout_seconds: must be an integer from 1 to 600",
        ),
        (
            format!("{good_ds}[[fleet.clusters]]\nname = \"east\"\ndatasource = \"nope\"\n"),
            "fleet.clusters.east.datasource: \"nope\" is not declared in [[fleet.datasources]]",
        ),
        (
            format!(
                "{good_ds}[[fleet.clusters]]\nname = \"east\"\ntoken_env = \"NO_SUCH_KERF_VAR\"\n"
            ),
            "fleet.clusters.east.token_env: the environment variable NO_SUCH_KERF_VAR is unset",
        ),
        (
            "[[fleet.clusters]]\nname = \"east\"\npassword = \"x\"\n".to_string(),
            "unknown field `password`",
        ),
    ];
    for (text, expected) in &cases {
        let config = s.config(text);
        for args in [&["serve"][..], &["config", "check"][..]] {
            let line = refusal(&run(&s, &config, args));
            assert!(line.contains(expected), "{args:?}: {line}");
        }
    }
    // Nothing was written by any of the failed starts.
    let kerf = s.start(&s.config(""));
    let (_, list) = kerf
        .api(&s.admin)
        .call("GET", "/v1/datasources", None)
        .await;
    assert_eq!(list["items"], json!([]), "{list}");
    // A retired name cannot be declared again.
    let (st, _) = kerf
        .api(&s.admin)
        .call("POST", "/v1/clusters", Some(json!({"name": "old"})))
        .await;
    assert_eq!(st, 201);
    let (st, _) = kerf
        .api(&s.admin)
        .call("DELETE", "/v1/clusters/old", None)
        .await;
    assert_eq!(st, 204);
    assert_eq!(kerf.stop(), Some(0));
    let config = s.config("[[fleet.clusters]]\nname = \"old\"\n");
    let line = refusal(&run(&s, &config, &["serve"]));
    assert!(
        line.contains("fleet.clusters.old: cluster \"old\" is retired"),
        "{line}"
    );
    // One token per cluster: among the declared ones, and against the stored ones.
    let t = s.file("shared-token", &token(9));
    let declare = |name: &str| {
        format!(
            "[[fleet.clusters]]\nname = \"{name}\"\ntoken_file = \"{}\"\n",
            t.display()
        )
    };
    let config = s.config(&format!("{}{}", declare("a"), declare("b")));
    let line = refusal(&run(&s, &config, &["config", "check"]));
    assert!(
        line.contains("fleet.clusters.b: its token is also another declared cluster's"),
        "{line}"
    );
    drop(s.start(&s.config(&declare("a"))));
    let config = s.config(&format!("{good_ds}{}", declare("b")));
    let line = refusal(&run(&s, &config, &["serve"]));
    assert!(
        line.contains("fleet.clusters.b: its token is cluster \"a\"'s"),
        "{line}"
    );
    let kerf = s.start(&s.config(""));
    let (_, list) = kerf
        .api(&s.admin)
        .call("GET", "/v1/datasources", None)
        .await;
    assert_eq!(
        list["items"],
        json!([]),
        "nothing written before the refusal: {list}"
    );
    assert_eq!(kerf.stop(), Some(0));

    let config = s.config(&format!(
        "{good_ds}[[fleet.clusters]]\nname = \"east\"\ndatasource = \"prom\"\n"
    ));
    let out = run(&s, &config, &["config", "check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed
            .contains("(mode hub, listen 127.0.0.1:0, declares 1 datasource(s) and 1 cluster(s))"),
        "{printed}"
    );
}

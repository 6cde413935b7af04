//! `kerf backup` keeps what a restored hub needs to open its sealed secrets: the
//! database (online, while serving) and the data dir's `secret.key`. Restored into an
//! empty data dir with `kerf restore`, the hub's datasource secrets still open (the
//! datasource test authenticates against a real Prometheus behind basic auth) and a run
//! still collects. A backup without its key is refused on restore, naming the key.

use serde_json::json;

use crate::support::prometheus::{OpenMetrics, Prometheus, BASIC_AUTH_PASSWORD, BASIC_AUTH_USER};
use crate::support::series::deployment;
use crate::support::DataDir;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_hub_opens_its_datasource_secrets_and_collects() {
    let now = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
    let mut om = OpenMetrics::new();
    deployment(&mut om, "api", now);
    let prom = Prometheus::with_data(&om, true);
    let data = DataDir::new();
    data.create_cluster("east");
    let admin = data.admin_token();
    let kerf = data.start();
    let api = kerf.api(&admin);
    let body = json!({"name": "prom", "type": "prometheus", "url": prom.url,
        "clusterLabel": "cluster",
        "auth": {"type": "basic", "username": BASIC_AUTH_USER, "password": BASIC_AUTH_PASSWORD}});
    let (s, ds) = api.post("/v1/datasources", body).await;
    assert_eq!(s, 201, "{ds}");
    let id = ds["id"].as_i64().expect("id");
    let link = json!({"datasourceId": id});
    let (s, v) = api.put("/v1/clusters/east/datasource", link).await;
    assert_eq!(s, 200, "{v}");

    // Online backup while serving.
    let backups = tempfile::tempdir().expect("tempdir");
    let file = backups.path().join("kerf-backup.db");
    let out = data.run(&["backup", "--to", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = backups.path().join("kerf-backup.db.secret.key");
    assert!(
        key.exists(),
        "the secret key is backed up beside the database"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the key backup is private");
    }
    assert_eq!(kerf.stop(), Some(0));

    // Restore into an empty data dir and serve from it.
    let restored = DataDir::new();
    let out = restored.run(&["restore", "--from", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = restored.run(&["restore", "--from", file.to_str().unwrap()]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "a data dir with a database is not overwritten"
    );
    let kerf = restored.start();
    let api = kerf.api(&admin);
    let (s, ds) = api.get(&format!("/v1/datasources/{id}")).await;
    assert_eq!(s, 200, "{ds}");
    assert_eq!(ds["auth"]["passwordSet"], true, "{ds}");
    let test = format!("/v1/datasources/{id}/test");
    let (s, report) = api.call("POST", &test, None).await;
    assert_eq!(s, 200, "{report}");
    assert_eq!(
        report["authenticated"], true,
        "the sealed password opened: {report}"
    );
    let run = api.run_to_end("east").await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert!(run["recommendations"].as_i64().unwrap_or(0) >= 1, "{run}");
    drop(kerf);

    // A backup whose key went missing is refused, naming the key.
    std::fs::remove_file(&key).expect("remove key");
    let empty = DataDir::new();
    let out = empty.run(&["restore", "--from", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("secret.key"), "{stderr}");
    assert!(
        !empty.path().join("kerf.db").exists(),
        "nothing half-restored"
    );
}

//! The appliance's operations through the real binary: readiness, modes, migrations,
//! backups, config, health check, graceful shutdown and TLS.

use serde_json::Value;

use crate::support::{client, event, uuid, DataDir, Kerf};

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_data_dir_becomes_ready_and_reports_health() {
    let data = DataDir::new();
    let kerf = data.start();
    let http = client();
    let ready = http.get(kerf.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let health = http.get(kerf.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let metrics = kerf.metrics_text().await;
    assert!(
        metrics.contains("kerf_events_duplicates_total 0"),
        "{metrics}"
    );
    assert!(metrics.contains("kerf_http_requests_total"), "{metrics}");
    let out = std::process::Command::new(crate::support::bin())
        .args(["healthcheck", "--listen", &kerf.addr.to_string()])
        .env_remove("KERF_CONFIG")
        .output()
        .expect("run kerf healthcheck");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn agent_modes_missing_something_refuse_to_start_with_one_line_and_exit_code_2() {
    let none = "/nonexistent/kubeconfig";
    let cases: [(&[(&str, &str)], &str); 5] = [
        (&[("KERF_MODE", "all-in-one")], "agent.cluster"),
        (
            &[
                ("KERF_MODE", "all-in-one"),
                ("KERF_AGENT__CLUSTER", "prod"),
                ("KUBECONFIG", none),
            ],
            "Kubernetes",
        ),
        (
            &[("KERF_MODE", "agent"), ("KERF_AGENT__CLUSTER", "prod")],
            "agent.hub_url",
        ),
        (
            &[
                ("KERF_MODE", "agent"),
                ("KERF_AGENT__CLUSTER", "prod"),
                ("KERF_AGENT__HUB_URL", "https://hub.example"),
            ],
            "KERF_AGENT_TOKEN",
        ),
        // The cluster token would go in clear to a hub that is not on loopback.
        (
            &[
                ("KERF_MODE", "agent"),
                ("KERF_AGENT__CLUSTER", "prod"),
                ("KERF_AGENT__HUB_URL", "http://10.1.2.3:8080"),
                ("KERF_AGENT_TOKEN", "kerf_ct_secret"),
            ],
            "agent.allow_insecure_hub",
        ),
    ];
    for (env, names) in cases {
        let data = DataDir::new();
        let out = data.run_env(&["--listen", "127.0.0.1:0", "serve"], env);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{env:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(names), "{env:?} names {names}: {err}");
    }
}

#[test]
fn bad_configuration_exits_2_with_the_key_named() {
    let data = DataDir::new();
    let out = data.run_env(
        &["config", "check"],
        &[("KERF_HTTP__MAX_BODY_BYTES", "lots")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KERF_HTTP__MAX_BODY_BYTES"));
    let printed = data.run_env(&["config", "print"], &[("KERF_STORE__READERS", "7")]);
    let text = String::from_utf8_lossy(&printed.stdout);
    assert!(text.contains("readers = 7"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn backup_while_serving_holds_every_acknowledged_event() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let kerf = data.start();
    let batch: Vec<Value> = (0..50).map(|_| event(&uuid())).collect();
    assert_eq!(
        kerf.api(&token)
            .post_events("prod", &Value::Array(batch))
            .await
            .0,
        200
    );
    let copy = data.path().join("copy.db");
    let out = data.run(&["backup", "--to", copy.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = data.run(&["backup", "--to", copy.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2), "refuses to overwrite");
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let n: i64 = conn
        .query_row(
            // `kerf clusters create` adds its own ClusterCreated config change.
            "SELECT COUNT(*) FROM audit_events WHERE type != 'config_changed'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 50);
}

#[test]
fn a_database_from_a_newer_kerf_is_refused_and_left_untouched() {
    let data = DataDir::new();
    assert!(data.run(&["migrate"]).status.success());
    let db = data.path().join("kerf.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations VALUES (9999, 'future', 'x', 0)",
            [],
        )
        .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let status = data.run(&["migrate", "--status"]);
    assert_eq!(status.status.code(), Some(2));
    let out = data.run(&["--listen", "127.0.0.1:0", "serve"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("9999") && err.contains("newer"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn migrate_status_lists_applied_and_pending_migrations() {
    let data = DataDir::new();
    let pending = data.run(&["migrate", "--status"]);
    assert!(String::from_utf8_lossy(&pending.stdout).contains("pending"));
    assert!(data.run(&["migrate"]).status.success());
    let applied = data.run(&["migrate", "--status"]);
    let text = String::from_utf8_lossy(&applied.stdout);
    assert!(text.contains("applied  0001_init"), "{text}");
    assert!(!text.contains("pending"));
}

#[test]
fn tokens_are_printed_once_and_only_their_hashes_are_stored() {
    let data = DataDir::new();
    let cluster_token = data.create_cluster("prod");
    let admin = data.admin_token();
    assert!(cluster_token.starts_with("kerf_ct_") && admin.starts_with("kerf_at_"));
    let dup = data.run(&["clusters", "create", "prod"]);
    assert_eq!(dup.status.code(), Some(2));
    let bad = data.run(&["clusters", "create", "Not_A_Name"]);
    assert_eq!(bad.status.code(), Some(2));
    let db = std::fs::read(data.path().join("kerf.db")).unwrap();
    let wal = std::fs::read(data.path().join("kerf.db-wal")).unwrap_or_default();
    for secret in [&cluster_token, &admin] {
        let needle = secret.as_bytes();
        assert!(!db.windows(needle.len()).any(|w| w == needle));
        assert!(!wal.windows(needle.len()).any(|w| w == needle));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_finishes_cleanly_and_checkpoints_the_database() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let kerf = data.start();
    let batch: Vec<Value> = (0..20).map(|_| event(&uuid())).collect();
    assert_eq!(
        kerf.api(&token)
            .post_events("prod", &Value::Array(batch))
            .await
            .0,
        200
    );
    let logs = kerf.logs.clone();
    assert_eq!(kerf.stop(), Some(0));
    assert!(logs
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("checkpointed")));
    let wal = data.path().join("kerf.db-wal");
    assert!(
        std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0) == 0,
        "WAL folded back"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_serves_https_with_the_configured_certificate() {
    let data = DataDir::new();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert_path = data.path().join("tls.crt");
    let key_path = data.path().join("tls.key");
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    let kerf = Kerf::builder(data.path())
        .envs(&[
            ("KERF_TLS__CERT_FILE", cert_path.to_str().unwrap()),
            ("KERF_TLS__KEY_FILE", key_path.to_str().unwrap()),
        ])
        .start();
    kerf::tls::install_crypto_provider();
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(cert.cert.pem().as_bytes()).unwrap())
        .resolve("localhost", kerf.addr)
        .build()
        .unwrap();
    let url = format!("https://localhost:{}/readyz", kerf.addr.port());
    let resp = http.get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let plain = client().get(kerf.url("/readyz")).send().await;
    assert!(
        plain.is_err() || plain.unwrap().status() != 200,
        "plain HTTP is not served"
    );
}

//! Issue 18: secrets that stay put. The data dir and every file kerf writes there (and
//! its backups) are private whatever the umask (defect 10), files an older kerf left
//! readable are tightened at start with a warning, and sealed datasource secrets are
//! bound to their record: a blob moved to another datasource does not open, and blobs
//! sealed before binding are re-sealed bound at start. Issue 36: a `[fleet]` secret
//! file others can read stops the start unless the config allows it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{bin, client, stdout_line, DataDir, Kerf};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Creates a datasource with a secret header; returns its id.
async fn datasource(kerf: &Kerf, admin: &str, name: &str, port: u16) -> i64 {
    let body = json!({"name": name, "type": "prometheus", "url": format!("http://127.0.0.1:{port}"),
        "headers": [{"name": "X-Api-Key", "value": format!("key-of-{name}"), "secret": true}]});
    let r = client()
        .post(kerf.url("/v1/datasources"))
        .bearer_auth(admin)
        .json(&body)
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 201);
    r.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id")
}

async fn get_status(kerf: &Kerf, admin: &str, id: i64) -> u16 {
    client()
        .get(kerf.url(&format!("/v1/datasources/{id}")))
        .bearer_auth(admin)
        .send()
        .await
        .expect("get")
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_data_dir_and_everything_kerf_writes_in_it_are_private_whatever_the_umask() {
    let root = DataDir::new();
    let dir = root.path().join("data");
    let kerf = Kerf::builder(&dir).under_shell("umask 000").start();
    let admin = stdout_line(
        &Command::new(bin())
            .arg("--data-dir")
            .arg(&dir)
            .args(["token", "create", "--name", "t", "--role", "admin"])
            .output()
            .expect("token"),
    );
    datasource(&kerf, &admin, "a", 1).await;
    assert_eq!(mode(&dir), 0o700, "data dir");
    for f in ["kerf.db", "kerf.db-wal", "kerf.db-shm", "secret.key"] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }
    let to = root.path().join("copies/kerf-backup.db");
    let out = Command::new("sh")
        .args(["-c", "umask 000 && exec \"$@\"", "sh"])
        .arg(bin())
        .arg("--data-dir")
        .arg(&dir)
        .arg("backup")
        .arg("--to")
        .arg(&to)
        .output()
        .expect("backup");
    stdout_line(&out);
    assert_eq!(mode(&to), 0o600, "the backup");
    assert_eq!(
        mode(to.parent().expect("dir")),
        0o700,
        "the dir made for it"
    );
    kerf.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn files_left_readable_by_others_are_tightened_at_start_with_a_warning() {
    let data = DataDir::new();
    data.admin_token();
    let db = data.path().join("kerf.db");
    for f in [db.clone(), data.path().to_path_buf()] {
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let kerf = data.start();
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&data.path().join("kerf.db-wal")), 0o600);
    let logs = kerf.log_text();
    assert!(logs.contains("was readable by others; now 0600"), "{logs}");
    assert!(logs.contains("the data dir is open to others"), "{logs}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sealed_secret_moved_to_another_datasource_does_not_open_there() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let a = datasource(&kerf, &admin, "a", 1).await;
    let b = datasource(&kerf, &admin, "b", 2).await;
    assert_eq!(kerf.stop(), Some(0));
    // Someone with write access to the database file (not to the key) moves A's
    // credentials to B, whose URL they control.
    let conn = rusqlite::Connection::open(data.path().join("kerf.db")).expect("open");
    conn.execute(
        "UPDATE datasources SET secrets_sealed = (SELECT secrets_sealed FROM datasources WHERE id = ?1) WHERE id = ?2",
        [a, b],
    )
    .expect("move the blob");
    drop(conn);
    let kerf = data.start();
    assert_eq!(get_status(&kerf, &admin, a).await, 200);
    assert_ne!(
        get_status(&kerf, &admin, b).await,
        200,
        "A's secrets opened for B"
    );
    let test = client()
        .post(kerf.url(&format!("/v1/datasources/{b}/test")))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("test");
    assert_ne!(test.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_sealed_before_binding_are_sealed_again_bound_at_start() {
    use chacha20poly1305::aead::{Aead, KeyInit};
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let a = datasource(&kerf, &admin, "a", 1).await;
    assert_eq!(kerf.stop(), Some(0));
    // The blob format of earlier kerf: nonce || ciphertext, no binding.
    let key = std::fs::read(data.path().join("secret.key")).expect("key");
    let cipher = chacha20poly1305::ChaCha20Poly1305::new_from_slice(&key).expect("cipher");
    let nonce = [5u8; 12];
    let plain = br#"{"headers":{"X-Api-Key":"key-of-a"}}"#;
    let ct = cipher
        .encrypt(
            chacha20poly1305::Nonce::from_slice(&nonce),
            plain.as_slice(),
        )
        .expect("seal");
    let old: Vec<u8> = nonce.iter().copied().chain(ct).collect();
    let db = data.path().join("kerf.db");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute(
        "UPDATE datasources SET secrets_sealed = ?1 WHERE id = ?2",
        rusqlite::params![old, a],
    )
    .expect("write the old blob");
    drop(conn);
    let kerf = data.start();
    assert!(kerf
        .log_text()
        .contains("bound stored secrets to their records"));
    assert_eq!(get_status(&kerf, &admin, a).await, 200);
    let conn = rusqlite::Connection::open(&db).expect("open");
    let now: Vec<u8> = conn
        .query_row(
            "SELECT secrets_sealed FROM datasources WHERE id = ?1",
            [a],
            |r| r.get(0),
        )
        .expect("blob");
    assert_ne!(now, old, "re-sealed");
    assert!(now.starts_with(b"\xffks1"), "in the bound format");
}

#[tokio::test(flavor = "multi_thread")]
async fn rotating_the_secret_key_seals_every_secret_again_and_survives_a_crash_midway() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let a = datasource(&kerf, &admin, "a", 1).await;
    let channel = client()
        .post(kerf.url("/v1/notifications/channels"))
        .bearer_auth(&admin)
        .json(
            &json!({"name": "ops", "type": "webhook", "url": "http://127.0.0.1:9/hook",
                      "signingSecret": "a-signing-secret-of-some-length"}),
        )
        .send()
        .await
        .expect("channel");
    assert_eq!(channel.status(), 201);
    let channel: Value = channel.json().await.expect("json");
    let channel = channel["id"].as_i64().expect("id");
    assert_eq!(kerf.stop(), Some(0));
    let key = data.path().join("secret.key");
    let before = std::fs::read(&key).expect("key");
    stdout_line(&data.run(&["secrets", "rotate-key"]));
    let after = std::fs::read(&key).expect("key");
    assert_ne!(before, after, "a new key");
    assert_eq!(mode(&key), 0o600);
    let kept: Vec<_> = std::fs::read_dir(data.path())
        .expect("dir")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("secret.key.old-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "the old key is kept");
    assert_eq!(std::fs::read(kept[0].path()).expect("old"), before);
    assert_eq!(mode(&kept[0].path()), 0o600);
    // A crash after the transaction, before the renames: the new key waits beside.
    std::fs::rename(&key, data.path().join("secret.key.new")).expect("mv");
    std::fs::copy(kept[0].path(), &key).expect("old back");
    stdout_line(&data.run(&["secrets", "rotate-key"]));
    assert_eq!(
        std::fs::read(&key).expect("key"),
        after,
        "finished with the new key"
    );
    let kerf = data.start();
    assert_eq!(
        get_status(&kerf, &admin, a).await,
        200,
        "the datasource opens"
    );
    // Replacing a channel without its secrets keeps (so opens) the stored ones.
    let kept_secrets = client()
        .put(kerf.url(&format!("/v1/notifications/channels/{channel}")))
        .bearer_auth(&admin)
        .json(&json!({"name": "ops-renamed", "type": "webhook"}))
        .send()
        .await
        .expect("replace");
    assert_eq!(
        kept_secrets.status(),
        200,
        "{:?}",
        kept_secrets.text().await
    );
}

/// Issue 36: a `[fleet]` secret file others can read is refused at start (exit 2, one
/// line naming the file and its mode) unless `[fleet] allow_readable_secret_files` says
/// so, and then only warned about.
#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_secret_file_readable_by_others_is_refused_unless_allowed() {
    let data = DataDir::new();
    let etc = tempfile::tempdir().expect("tempdir");
    let token = etc.path().join("east-token");
    std::fs::write(&token, format!("kerf_ct_{}\n", "5a".repeat(32))).expect("token");
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let password = etc.path().join("prom-password");
    std::fs::write(&password, "s3cret\n").expect("password");
    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o604)).expect("chmod");
    let fleet = |allow: &str, datasource: bool| {
        let mut text = format!(
            "{allow}[[fleet.clusters]]\nname = \"east\"\ntoken_file = \"{}\"\n",
            token.display()
        );
        if datasource {
            text.push_str(&format!(
                "[[fleet.datasources]]\nname = \"prom\"\nurl = \"http://127.0.0.1:9\"\n\
                 auth = {{ type = \"basic\", username = \"u\", password_file = \"{}\" }}\n",
                password.display()
            ));
        }
        let path = etc.path().join("kerf.toml");
        std::fs::write(&path, text).expect("config");
        path.display().to_string()
    };
    let refused = |out: std::process::Output, file: &Path, mode: &str| {
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let last = stderr.lines().last().unwrap_or("").to_string();
        assert!(last.contains(&file.display().to_string()), "{stderr}");
        assert!(last.contains(mode), "{stderr}");
        assert!(last.contains("allow_readable_secret_files"), "{stderr}");
    };

    let config = fleet("", true);
    let check = ["--config", config.as_str(), "config", "check"];
    refused(data.run(&check), &password, "0604");
    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    refused(data.run(&check), &token, "0644");
    // `serve` stops at start, before listening.
    let config = fleet("", false);
    let mut serve = Command::new(bin())
        .args(["--data-dir", data.path().to_str().expect("utf-8")])
        .args(["--config", &config, "--listen", "127.0.0.1:0", "serve"])
        .env_remove("KERF_CONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve");
    let code = crate::support::binary::exit_code(&mut serve, std::time::Duration::from_secs(30));
    let mut stderr = Vec::new();
    std::io::Read::read_to_end(&mut serve.stderr.take().expect("stderr"), &mut stderr)
        .expect("read stderr");
    let stderr = String::from_utf8_lossy(&stderr);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&token.display().to_string()), "{stderr}");
    assert!(stderr.contains("mode 0644"), "{stderr}");

    // Private, it is accepted; readable but allowed, it is accepted with a warning.
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o400)).expect("chmod");
    assert_eq!(
        Kerf::builder(data.path())
            .args(&["--config", &config])
            .start()
            .stop(),
        Some(0)
    );
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let config = fleet("[fleet]\nallow_readable_secret_files = true\n\n", false);
    let kerf = Kerf::builder(data.path())
        .args(&["--config", &config])
        .start();
    let logs = kerf.log_text();
    assert!(logs.contains("is world-readable"), "{logs}");
    assert_eq!(kerf.stop(), Some(0));
}

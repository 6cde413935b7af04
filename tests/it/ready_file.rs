//! `--ready-file`, black-box: the file appears once `kerf serve` listens, holds the
//! bound address and the pid as JSON (the demo's also its URL, never its token), is
//! written whole (no temp file left beside it) and removed on exit; a stale file is
//! removed at start, so a start that fails (a bad config) leaves none; and a command
//! that does not serve refuses the flag.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{bin, DataDir, Demo};

fn read(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the ready file");
    serde_json::from_str(&text).expect("the ready file is JSON")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ready_file_names_the_bound_address_once_serving_and_goes_on_exit() {
    let data = DataDir::new();
    let kerf = data.start();
    let path = kerf.ready_file().to_path_buf();
    let doc = read(&path);
    assert_eq!(doc["addr"], kerf.addr.to_string(), "{doc}");
    assert_ne!(
        kerf.addr.port(),
        0,
        "the port actually bound, not the 0 asked for"
    );
    assert_eq!(doc["pid"], kerf.pid(), "{doc}");
    assert!(doc.get("url").is_none(), "{doc}");
    let dir: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("read dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(dir, ["ready.json"], "the temp file was renamed into place");
    let health = reqwest::get(format!(
        "http://{}/healthz",
        doc["addr"].as_str().expect("addr")
    ))
    .await
    .expect("the address serves");
    assert_eq!(health.status(), 200);
    assert_eq!(kerf.stop(), Some(0));
    assert!(!path.exists(), "a stopped hub is not ready");
}

#[test]
fn a_stale_ready_file_is_removed_at_start_and_a_bad_config_writes_none() {
    let data = DataDir::new();
    let spare = tempfile::tempdir().expect("tempdir");
    let path = spare.path().join("ready.json");
    std::fs::write(&path, r#"{"addr":"127.0.0.1:1","pid":1}"#).expect("stale file");
    let out = Command::new(bin())
        .arg("--data-dir")
        .arg(data.path())
        .arg("serve")
        .arg("--ready-file")
        .arg(&path)
        .env("KERF_STORE__READERS", "many")
        .env_remove("KERF_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run kerf");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!path.exists(), "no ready file for a hub that never served");
}

#[test]
fn the_demo_s_ready_file_has_its_url_and_not_its_token() {
    let demo = Demo::start(None);
    let text = std::fs::read_to_string(demo.kerf.ready_file()).expect("the ready file");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(doc["url"], format!("http://{}/", demo.kerf.addr), "{doc}");
    assert!(
        !text.contains(&demo.token),
        "the admin token stays on stdout"
    );
    assert!(demo
        .stdout
        .iter()
        .any(|l| l == &format!("admin token: {}", demo.token)));
}

#[test]
fn only_the_serving_commands_take_the_flag_and_their_help_names_it() {
    for args in [&["serve", "--help"][..], &["demo", "--help"][..]] {
        let out = Command::new(bin()).args(args).output().expect("run kerf");
        assert!(String::from_utf8_lossy(&out.stdout).contains("--ready-file <FILE>"));
    }
    let out = Command::new(bin())
        .args(["--ready-file", "/tmp/never", "migrate", "--status"])
        .env_remove("KERF_CONFIG")
        .output()
        .expect("run kerf");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "kerf: --ready-file does not apply to `kerf migrate`"
    );
}

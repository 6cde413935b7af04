//! Issue 36, defect 6: with its disk full every write of the hub failed, yet `/readyz`
//! said "ready" and agents got 500s. The hub's data dir here is a real 16 MiB tmpfs of
//! its own (a user and mount namespace, `unshare -rm`), filled and freed from inside
//! that namespace (`nsenter`): `/readyz` says `degraded` with the reason while writes
//! fail, agents get 503 with `Retry-After` (they back off), reads still answer, and all
//! of it clears with the first write that succeeds once there is room again.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{client, DataDir, Kerf};

/// Runs `script` in the mount namespace of `kerf` (where its data dir is the tmpfs).
fn inside(kerf: &Kerf, script: &str) -> std::process::Output {
    let pid = kerf.pid().to_string();
    Command::new("nsenter")
        .args(["-t", &pid, "-U", "-m", "--preserve-credentials", "--"])
        .args(["sh", "-c", script])
        .output()
        .expect("run nsenter (util-linux)")
}

/// `kerf serve` on `data`, a 16 MiB tmpfs mounted in a namespace of its own and seeded
/// with what `seed` holds.
fn start_on_tmpfs(data: &Path, seed: &Path) -> Kerf {
    let probe = Command::new("unshare")
        .args([
            "-rm",
            "sh",
            "-c",
            "mount -t tmpfs -o size=1m kerf-probe \"$0\"",
        ])
        .arg(data)
        .output()
        .expect("run unshare (util-linux)");
    assert!(
        probe.status.success(),
        "this test mounts a small tmpfs in a user and mount namespace of its own \
         (`unshare -rm`), which this machine refuses: {}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let script = format!(
        "exec unshare -rm sh -c 'mount -t tmpfs -o size=16m,mode=0700 kerf-full \"$0\" \
         && cp -a \"$1\"/. \"$0\"/ && shift && exec \"$@\"' '{}' '{}' \"$@\"",
        data.display(),
        seed.display()
    );
    Kerf::builder(data).under_shell(&script).start()
}

async fn readyz(kerf: &Kerf) -> (u16, Value) {
    let r = client()
        .get(kerf.url("/readyz"))
        .send()
        .await
        .expect("readyz");
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// A heartbeat: status, `Retry-After` and body.
async fn heartbeat(kerf: &Kerf, token: &str) -> (u16, Option<String>, Value) {
    let body = json!({"agentVersion": "0.1.0", "kubernetesVersion": "v1.33.1"});
    let r = client()
        .post(kerf.url("/v1/clusters/prod/heartbeat"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("heartbeat");
    let retry = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().expect("ASCII").to_string());
    (
        r.status().as_u16(),
        retry,
        r.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_makes_readyz_degraded_and_agents_back_off_until_there_is_room() {
    let seed = DataDir::new();
    let agent = seed.create_cluster("prod");
    let admin = seed.admin_token();
    let root = tempfile::tempdir().expect("tempdir");
    let data = root.path().join("data");
    std::fs::create_dir(&data).expect("mount point");
    let kerf = start_on_tmpfs(&data, seed.path());
    let (s, ready) = readyz(&kerf).await;
    assert_eq!((s, &ready["status"]), (200, &json!("ready")), "{ready}");
    let (s, _, v) = heartbeat(&kerf, &agent).await;
    assert_eq!(s, 200, "{v}");

    let filler = data.join("filler");
    let fill = inside(
        &kerf,
        &format!("dd if=/dev/zero of='{}' bs=64k", filler.display()),
    );
    assert!(
        String::from_utf8_lossy(&fill.stderr).contains("No space left"),
        "the tmpfs is full: {}",
        String::from_utf8_lossy(&fill.stderr)
    );

    // Writes fail: the agent is told to come back later, and readiness says why. A
    // write may still fit where SQLite reuses its write-ahead log from the start after a
    // checkpoint (no new space needed), so heartbeats go on until one needs room.
    let (retry, v) = crate::support::eventually(
        "a heartbeat refused for the full disk",
        std::time::Duration::from_secs(60),
        async || {
            let (s, retry, v) = heartbeat(&kerf, &agent).await;
            if s == 503 {
                Ok((retry, v))
            } else {
                Err((s, v))
            }
        },
    )
    .await;
    assert_eq!(v["error"]["code"], "store_unavailable", "{v}");
    assert_eq!(v["error"]["details"]["fault"], "disk_full", "{v}");
    assert!(retry.expect("Retry-After").parse::<u64>().expect("seconds") > 0);
    let (s, ready) = readyz(&kerf).await;
    assert_eq!((s, &ready["status"]), (200, &json!("degraded")), "{ready}");
    let reasons = ready["reasons"].to_string();
    assert!(reasons.contains("disk is full"), "{ready}");
    // Reads still answer.
    let r = client()
        .get(kerf.url("/v1/clusters"))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("clusters");
    assert_eq!(r.status(), 200);

    // Room again: the next write succeeds and clears it.
    let freed = inside(&kerf, &format!("rm '{}'", filler.display()));
    assert!(freed.status.success(), "{freed:?}");
    let (s, _, v) = heartbeat(&kerf, &agent).await;
    assert_eq!(s, 200, "{v}");
    let (s, ready) = readyz(&kerf).await;
    assert_eq!((s, &ready["status"]), (200, &json!("ready")), "{ready}");
    assert_eq!(kerf.stop(), Some(0));
}

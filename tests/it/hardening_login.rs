//! Issue 18, defect 5: the login lock-out can be neither abused nor raced. A guesser
//! locks an account only for the address it guesses from (the whole 127/8 is loopback,
//! so each test client binds its own address), concurrent guesses get no more password
//! checks than the limit, a much-guessed account is slowed but its owner signs in from
//! an address it used before, and locks survive a restart.

use std::net::IpAddr;
use std::time::Duration;

use serde_json::json;

use crate::support::{client, error_code, eventually, secs, DataDir, Kerf};

/// A client whose connections come from `127.0.0.<n>`.
fn from(n: u8) -> reqwest::Client {
    kerf::tls::install_crypto_provider();
    reqwest::Client::builder()
        .local_address(IpAddr::from([127, 0, 0, n]))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

async fn login(
    http: &reqwest::Client,
    kerf: &Kerf,
    user: &str,
    password: &str,
) -> (u16, serde_json::Value) {
    let r = http
        .post(kerf.url("/v1/auth/login"))
        .json(&json!({"username": user, "password": password}))
        .send()
        .await
        .expect("send");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_guesser_locks_the_account_only_for_its_own_address() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let kerf = data.start_for_logins(&[("KERF_AUTH__LOGIN_MAX_FAILURES", "3")]);
    let (guesser, owner) = (from(2), from(3));
    for _ in 0..3 {
        assert_eq!(
            login(&guesser, &kerf, "alice", "not-the-password").await.0,
            401
        );
    }
    for name in ["alice", "ALICE", "Alice"] {
        let (status, body) = login(&guesser, &kerf, name, &password).await;
        assert_eq!(status, 429, "{name}: {body}");
        assert_eq!(error_code(&body), "too_many_attempts");
    }
    let (status, body) = login(&owner, &kerf, "alice", &password).await;
    assert_eq!(status, 200, "the owner elsewhere is not locked out: {body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_guesses_get_no_more_password_checks_than_the_limit() {
    let data = DataDir::new();
    data.bootstrap_admin("alice");
    let kerf = data.start_for_logins(&[
        ("KERF_AUTH__LOGIN_MAX_FAILURES", "5"),
        ("KERF_AUTH__MAX_CONCURRENT_PASSWORD_CHECKS", "4"),
    ]);
    let guesser = from(4);
    let guesses = (0..30).map(|i| {
        let (g, k) = (guesser.clone(), &kerf);
        async move { login(&g, k, "alice", &format!("guess-{i}")).await.0 }
    });
    let statuses = futures_util::future::join_all(guesses).await;
    let checked = statuses.iter().filter(|s| **s == 401).count();
    assert!(
        checked <= 5,
        "{checked} password checks past a limit of 5: {statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| [401, 429, 503].contains(s)),
        "{statuses:?}"
    );
    // And the limit still holds afterwards.
    assert_eq!(login(&guesser, &kerf, "alice", "one-more").await.0, 429);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_account_guessed_from_many_addresses_is_slowed_not_locked() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let kerf = data.start_for_logins(&[
        ("KERF_AUTH__LOGIN_MAX_FAILURES", "2"),
        ("KERF_AUTH__LOGIN_ACCOUNT_SLOWDOWN_AFTER", "6"),
        ("KERF_AUTH__LOGIN_ACCOUNT_SLOWDOWN_SECONDS", "2"),
    ]);
    let usual = from(20);
    assert_eq!(login(&usual, &kerf, "alice", &password).await.0, 200);
    for n in 21..24 {
        for _ in 0..2 {
            assert_eq!(login(&from(n), &kerf, "alice", "guess").await.0, 401);
        }
    }
    // Six failures from three addresses: slowed for new addresses.
    let newcomer = from(30);
    assert_eq!(login(&newcomer, &kerf, "alice", "guess").await.0, 401);
    let (status, body) = login(&newcomer, &kerf, "alice", &password).await;
    assert_eq!(status, 429, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("slowed"),
        "{body}"
    );
    // The owner's usual address is not slowed at all.
    assert_eq!(login(&usual, &kerf, "alice", &password).await.0, 200);
    // And a newcomer gets through once the slot comes round: slowed, never locked.
    let what = "a slowed account to let its owner in";
    eventually(what, secs(20), async || {
        let (status, _) = login(&from(31), &kerf, "alice", &password).await;
        if status == 200 {
            Ok(())
        } else {
            Err(status)
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lock_survives_a_restart() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let env = [("KERF_AUTH__LOGIN_MAX_FAILURES", "2")];
    let kerf = data.start_for_logins(&env);
    let guesser = from(5);
    for _ in 0..2 {
        assert_eq!(login(&guesser, &kerf, "alice", "guess").await.0, 401);
    }
    assert_eq!(login(&guesser, &kerf, "alice", &password).await.0, 429);
    assert_eq!(kerf.stop(), Some(0));
    let kerf = data.start_for_logins(&env);
    let (status, body) = login(&guesser, &kerf, "alice", &password).await;
    assert_eq!(status, 429, "the lock was kept: {body}");
    assert_eq!(login(&client(), &kerf, "alice", &password).await.0, 200);
}

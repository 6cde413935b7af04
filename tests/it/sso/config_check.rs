//! `kerf config check` validates `[auth.oidc]` offline (each problem one line naming the
//! key, exit 2) and, with `--online`, reaches the provider's discovery document and keys.

use super::CLIENT_SECRET;
use crate::support::oidc_provider;
use crate::support::DataDir;

fn check(dir: &DataDir, config: &str, online: bool) -> (i32, String, String) {
    let file = dir.path().join("check.toml");
    std::fs::write(&file, config).expect("write config");
    let mut args = vec!["--config", file.to_str().unwrap(), "config", "check"];
    if online {
        args.push("--online");
    }
    let out = dir.run_env(&args, &[("KERF_OIDC_CLIENT_SECRET", CLIENT_SECRET)]);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn oidc(issuer: &str, extra: &str) -> String {
    format!("[auth.oidc]\nissuer = \"{issuer}\"\nclient_id = \"kerf\"\n{extra}\n")
}

#[tokio::test]
async fn the_oidc_block_is_checked_offline_and_the_provider_reached_online() {
    let idp = oidc_provider::start().await;
    let dir = DataDir::new();
    let (code, out, err) = check(&dir, &oidc(idp.url(), ""), true);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("identity provider {} answers", idp.url())),
        "{out}"
    );
    assert!(out.contains("RP-initiated logout supported"), "{out}");
    assert!(!out.contains(CLIENT_SECRET) && !err.contains(CLIENT_SECRET));

    // Offline, a provider nobody answers at is not looked for; online it is one line.
    let gone = "http://127.0.0.1:9";
    assert_eq!(check(&dir, &oidc(gone, ""), false).0, 0);
    let (code, _, err) = check(&dir, &oidc(gone, ""), true);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("could not be reached"), "{err}");

    for (config, says) in [
        (oidc("http://idp.corp.example", ""), "auth.oidc.issuer"),
        (
            oidc(idp.url(), "recheck_seconds = 1"),
            "auth.oidc.recheck_seconds",
        ),
        (
            oidc(
                idp.url(),
                "[[auth.oidc.groups]]\ngroup = \"ops\"\nrole = \"root\"",
            ),
            "auth.oidc.groups[0]: role must be admin, editor or viewer",
        ),
        (
            oidc(idp.url(), "client_secret_file = \"/nonexistent/secret\""),
            "auth.oidc.client_secret_file",
        ),
        (
            "[auth]\npassword_login = \"break-glass-only\"\n".to_string(),
            "needs [auth.oidc]",
        ),
    ] {
        let (code, _, err) = check(&dir, &config, false);
        assert_eq!(code, 2, "{config}: {err}");
        assert!(err.contains(says), "{says}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[tokio::test]
async fn a_provider_that_cannot_be_reached_starts_no_sign_in_and_the_page_is_told_why() {
    let dir = DataDir::new();
    let file = dir.path().join("kerf.toml");
    std::fs::write(&file, oidc("http://127.0.0.1:9", "")).expect("write config");
    // kerf starts without the provider: it is reached at the first sign-in.
    let kerf = crate::support::Kerf::builder(dir.path())
        .args(&["--config", file.to_str().unwrap()])
        .env("KERF_OIDC_CLIENT_SECRET", CLIENT_SECRET)
        .start();
    kerf::tls::install_crypto_provider();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = browser
        .get(kerf.url("/v1/auth/oidc/login?return=/workloads"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 303);
    assert_eq!(
        resp.headers()["location"],
        "/login?sso_error=provider_unreachable"
    );
    assert!(
        resp.headers().get("set-cookie").is_none(),
        "no sign-in started"
    );
    // The log line is read from kerf's output as it comes, maybe after the answer.
    let logged = || {
        kerf.log_text().lines().any(|l| {
            l.contains("single sign-on refused")
                && l.contains("provider_unreachable")
                && l.contains("127.0.0.1:9")
        })
    };
    crate::support::eventually("the refusal logged", crate::support::secs(10), async || {
        logged().then_some(()).ok_or_else(|| kerf.log_text())
    })
    .await;
}

//! What kerf refuses at the callback, each opening no session: ID tokens that fail
//! verification (forged, expired, for another audience, without the nonce, from
//! another issuer, signed with a key the provider rotated out), a state used twice or
//! brought by another browser, and the provider's own refusal. The log says why in one
//! line and never holds a code or a token.

use super::World;

#[tokio::test]
async fn id_tokens_that_fail_verification_open_no_session() {
    let w = World::start("").await;
    w.person("dee", &["kerf-viewers"]).await;
    let mut codes = Vec::new();
    for kind in [
        "wrong-aud",
        "expired",
        "no-nonce",
        "wrong-iss",
        "foreign-key",
    ] {
        w.idp.tamper_next(kind).await;
        let (authorize, browser) = w.begin("/").await;
        let back = w.idp.login(&authorize, "dee", super::IDP_PASSWORD).await;
        codes.push(query_value(&back, "code"));
        let landed = w.callback(&back, Some(&browser)).await;
        assert_eq!(
            landed.location, "/login?sso_error=invalid_id_token",
            "{kind}"
        );
        assert!(landed.session.is_none(), "{kind} opened a session");
    }
    // The provider rotates its keys: kerf fetches the new one and signs people in...
    w.idp.rotate_keys(false).await;
    let fine = w.sign_in("dee").await;
    assert_eq!(fine.location, "/workloads");
    assert!(
        fine.session.is_some(),
        "a token signed with the new key is accepted"
    );
    // ...and a token signed with the key rotated out is refused.
    w.idp.tamper_next("old-key").await;
    let old = w.sign_in("dee").await;
    assert_eq!(old.location, "/login?sso_error=invalid_id_token");
    assert!(old.session.is_none());

    // Lines are read from kerf's output as they come, maybe after the answers.
    let count = || {
        let log = w.kerf.log_text();
        log.lines()
            .filter(|l| l.contains("single sign-on refused"))
            .count()
    };
    crate::support::eventually(
        "six refusals logged",
        crate::support::secs(10),
        async || (count() >= 6).then_some(()).ok_or_else(count),
    )
    .await;
    let log = w.kerf.log_text();
    let refusals: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("single sign-on refused"))
        .collect();
    assert_eq!(
        refusals.len(),
        6,
        "one line per refusal:\n{}",
        refusals.join("\n")
    );
    for (line, why) in
        refusals
            .iter()
            .zip(["audience", "expired", "nonce", "issuer", "signature", "key"])
    {
        assert!(line.to_lowercase().contains(why), "{why}: {line}");
        assert!(line.contains("code=\"invalid_id_token\""), "{line}");
    }
    assert!(!log.contains("eyJ"), "a token reached the log");
    for code in &codes {
        assert!(
            !log.contains(code.as_str()),
            "an authorization code reached the log"
        );
    }
    // Nobody was created by a refused sign-in... but by the accepted one.
    let created = w.audit("UserCreated").await;
    assert_eq!(created.len(), 1);
}

#[tokio::test]
async fn a_state_is_used_once_by_the_browser_that_started_it() {
    let w = World::start("").await;
    w.person("eli", &["kerf-viewers"]).await;
    let (authorize, browser) = w.begin("/").await;
    let back = w.idp.login(&authorize, "eli", super::IDP_PASSWORD).await;
    assert!(w.callback(&back, Some(&browser)).await.session.is_some());
    // Replayed: refused, even by the same browser.
    let replay = w.callback(&back, Some(&browser)).await;
    assert_eq!(replay.location, "/login?sso_error=invalid_state");
    assert!(replay.session.is_none());

    // Another browser brings the answer (login CSRF, a stolen redirect): no cookie, or
    // another sign-in's cookie. Either burns the state.
    let (authorize, _mine) = w.begin("/").await;
    let back = w.idp.login(&authorize, "eli", super::IDP_PASSWORD).await;
    let (_, theirs) = w.begin("/").await;
    let other = w.callback(&back, Some(&theirs)).await;
    assert_eq!(other.location, "/login?sso_error=other_browser");
    assert!(other.session.is_none());
    let (authorize, _mine) = w.begin("/").await;
    let back = w.idp.login(&authorize, "eli", super::IDP_PASSWORD).await;
    let none = w.callback(&back, None).await;
    assert_eq!(none.location, "/login?sso_error=other_browser");
    assert!(none.session.is_none());

    // The provider says no (the user cancelled): its error comes back as a code only.
    let (authorize, browser) = w.begin("/").await;
    let state = query_value(&authorize, "state");
    let url = w.kerf.url(&format!(
        "/v1/auth/oidc/callback?error=access_denied&error_description=%3Cscript%3E&state={state}"
    ));
    let denied = w.callback(&url, Some(&browser)).await;
    assert_eq!(denied.location, "/login?sso_error=provider_refused");
    assert!(denied.session.is_none());
    // An unknown state.
    let made_up = w
        .callback(
            &w.kerf.url("/v1/auth/oidc/callback?code=x&state=made-up"),
            Some(&browser),
        )
        .await;
    assert_eq!(made_up.location, "/login?sso_error=invalid_state");
}

/// The value of query parameter `key` in `url`.
fn query_value(url: &str, key: &str) -> String {
    reqwest::Url::parse(url)
        .expect("url")
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("no {key} in {url}"))
}

//! A session opened through the provider lives only while the provider vouches for the
//! person: it is re-checked every `recheck_seconds` (5 s here) with the refresh token,
//! ends when the provider ended theirs or they left every mapped group, and follows
//! their groups otherwise. Logout ends kerf's session and offers the provider's.

use serde_json::json;

use super::World;
use crate::support::{eventually, secs, Cred};

#[tokio::test]
async fn a_session_ends_when_the_provider_ends_the_persons_session() {
    let w = World::start("").await;
    w.person("fio", &["kerf-viewers"]).await;
    let session = w.sign_in("fio").await.session.expect("a session");
    assert_eq!(w.me(&session).await["name"], "fio");
    w.idp.end_sessions("fio").await;
    eventually("the session to end at its re-check", secs(30), async || {
        w.me(&session).await.is_null()
    })
    .await;
    eventually("the end logged", secs(10), async || {
        w.kerf.log_text().lines().any(|l| {
            l.contains("single sign-on session ended at its re-check") && l.contains("refused")
        })
    })
    .await;
}

#[tokio::test]
async fn a_session_follows_the_groups_and_ends_when_none_is_mapped() {
    let w = World::start("").await;
    w.person("gus", &["kerf-viewers"]).await;
    let session = w.sign_in("gus").await.session.expect("a session");
    assert_eq!(w.me(&session).await["role"], "viewer");
    w.person("gus", &["kerf-admins"]).await;
    eventually(
        "the new group's role at the re-check",
        secs(30),
        async || {
            let role = w.me(&session).await["role"].clone();
            (role == "admin").then_some(()).ok_or(role)
        },
    )
    .await;
    w.person("gus", &["unmapped"]).await;
    eventually(
        "the session to end once no group is mapped",
        secs(30),
        async || w.me(&session).await.is_null(),
    )
    .await;
}

#[tokio::test]
async fn logout_ends_the_session_here_and_sends_the_browser_to_end_the_providers() {
    let w = World::start("").await;
    w.person("hal", &["kerf-viewers"]).await;
    let session = w.sign_in("hal").await.session.expect("a session");
    let r = w
        .admin
        .call_as("POST", "/v1/auth/logout", Cred::Session(&session), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let url = r.body["providerLogoutUrl"]
        .as_str()
        .expect("providerLogoutUrl")
        .to_string();
    let parsed = reqwest::Url::parse(&url).unwrap();
    assert!(url.starts_with(w.idp.url()), "{url}");
    let params: std::collections::HashMap<_, _> = parsed.query_pairs().into_owned().collect();
    assert_eq!(params["post_logout_redirect_uri"], w.kerf.url("/login"));
    assert!(params["id_token_hint"].starts_with("eyJ"));
    assert!(w.me(&session).await.is_null(), "kerf's session ended");
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = browser.get(&url).send().await.unwrap();
    assert!(resp.status().is_redirection(), "{}", resp.status());
    let back = resp.headers()["location"].to_str().unwrap();
    assert!(
        back.starts_with(&w.kerf.url("/login")),
        "back to kerf: {back}"
    );
    // A password session logs out as before: 204, nothing to follow.
    let root = w.dir.bootstrap_admin("root");
    let (_, local) = w.admin.login("root", &root).await;
    let r = w
        .admin
        .call_as(
            "POST",
            "/v1/auth/logout",
            Cred::Session(&local.unwrap()),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
}

#[tokio::test]
async fn a_user_disabled_in_kerf_loses_their_session_and_cannot_sign_in() {
    let w = World::start("").await;
    w.person("ida", &["kerf-viewers"]).await;
    let session = w.sign_in("ida").await.session.expect("a session");
    let id = w.me(&session).await["id"].as_str().unwrap().to_string();
    let (s, b) = w
        .admin
        .call(
            "PATCH",
            &format!("/v1/admin/users/{id}"),
            Some(json!({"disabled": true})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert!(w.me(&session).await.is_null());
    let again = w.sign_in("ida").await;
    assert_eq!(again.location, "/login?sso_error=user_disabled");
    assert!(again.session.is_none());
}

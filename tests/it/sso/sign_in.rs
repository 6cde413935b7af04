//! Signing in through the provider: the user made just in time and audited, the groups
//! deciding roles at every sign-in, the UI's mappings beside the config file's, a
//! return path on this host only, and the options the login page is given.

use serde_json::json;

use super::World;
use crate::support::Cred;

#[tokio::test]
async fn a_first_sign_in_creates_the_user_and_the_groups_decide_fleet_and_team_roles() {
    let w = World::start("").await;
    let shop = w.team("shop").await;
    // A team mapping set in the UI, audited; the config file's are listed beside it.
    let (s, b) = w
        .admin
        .call(
            "PUT",
            "/v1/admin/sso/mappings?reason=shop%20devs",
            Some(json!({"mappings": [{"group": "shop-devs", "team": "shop", "teamRole": "team-editor"}]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let sources: Vec<_> = b
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["group"].as_str().unwrap(), m["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        sources,
        [
            ("kerf-admins", "config"),
            ("kerf-viewers", "config"),
            ("shop-devs", "ui")
        ]
    );
    let changed = w.audit("SsoMappingsUpdated").await;
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["after"]["mappings"][0]["team"], "shop");
    assert_eq!(changed[0]["reason"], "shop devs");

    w.person("ana", &["kerf-viewers", "shop-devs", "unmapped"])
        .await;
    let landed = w.sign_in("ana").await;
    assert_eq!(
        landed.location, "/workloads",
        "back where the sign-in started"
    );
    let session = landed.session.expect("a session");
    let me = w.me(&session).await;
    assert_eq!(me["type"], "user");
    assert_eq!(me["name"], "ana");
    assert_eq!(me["role"], "viewer");
    assert_eq!(
        me["teams"],
        json!([{"id": shop, "name": "shop", "role": "team-editor", "namespaces": [{"cluster": "*", "namespace": "shop"}]}])
    );

    // Created just in time by the system, naming the provider; no password works for it.
    let created = w.audit("UserCreated").await;
    let ana = created
        .iter()
        .find(|r| r["target"]["name"] == "ana")
        .expect("UserCreated ana");
    assert_eq!(ana["actor"]["type"], "system");
    assert_eq!(ana["actor"]["name"], "single sign-on (Test IdP)");
    assert_eq!(ana["after"]["role"], "viewer");
    assert_eq!(ana["after"]["teams"][0]["role"], "team-editor");
    // Not even the provider's password opens it here.
    let (r, none) = w.admin.login("ana", super::IDP_PASSWORD).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "invalid_credentials");
    assert!(none.is_none());

    // Groups are read again at the next sign-in: promoted to admin, out of shop-devs.
    w.person("ana", &["kerf-admins"]).await;
    let again = w.sign_in("ana").await.session.expect("a session");
    let me = w.me(&again).await;
    assert_eq!(
        (me["role"].as_str(), me["teams"].as_array().map(Vec::len)),
        (Some("admin"), Some(0))
    );
    let updated = w.audit("UserUpdated").await;
    let change = updated
        .iter()
        .find(|r| r["target"]["name"] == "ana")
        .expect("UserUpdated ana");
    assert_eq!(
        (
            change["before"]["role"].as_str(),
            change["after"]["role"].as_str()
        ),
        (Some("viewer"), Some("admin"))
    );
    assert_eq!(change["after"]["teams"], json!([]));
    // The same person, not a second user.
    let (_, users) = w.admin.call("GET", "/v1/admin/users", None).await;
    let anas = users["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["username"] == "ana")
        .count();
    assert_eq!(anas, 1, "{users}");

    // Out of every mapped group: refused, and no session is opened.
    w.person("ana", &["unmapped"]).await;
    let refused = w.sign_in("ana").await;
    assert_eq!(refused.location, "/login?sso_error=no_mapped_group");
    assert!(refused.session.is_none());
}

#[tokio::test]
async fn the_return_path_stays_on_this_host_and_the_login_page_is_told_the_provider() {
    let w = World::start("").await;
    let r = w
        .admin
        .call_as("GET", "/v1/auth/sign-in-options", Cred::None, None)
        .await;
    let options = r.body;
    assert_eq!(r.status, 200);
    assert_eq!(
        options,
        json!({"oidc": {"name": "Test IdP", "loginUrl": "/v1/auth/oidc/login"}, "passwordLogin": "everyone"})
    );
    w.person("bo", &["kerf-viewers"]).await;
    for hostile in [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
    ] {
        let (authorize, browser) = w.begin(hostile).await;
        let back = w.idp.login(&authorize, "bo", super::IDP_PASSWORD).await;
        let landed = w.callback(&back, Some(&browser)).await;
        assert_eq!(landed.location, "/", "{hostile} is not followed");
        assert!(landed.session.is_some());
    }
    // The admin's view names the URIs to register and never the client secret.
    let (s, settings) = w.admin.call("GET", "/v1/admin/sso", None).await;
    assert_eq!(s, 200);
    assert_eq!(
        settings["provider"]["redirectUri"],
        w.kerf.url("/v1/auth/oidc/callback")
    );
    assert_eq!(
        settings["provider"]["postLogoutRedirectUri"],
        w.kerf.url("/login")
    );
    assert!(!settings.to_string().contains(super::CLIENT_SECRET));
    // A mapping naming no team is refused, naming the field; nothing is stored.
    let (s, b) = w
        .admin
        .call(
            "PUT",
            "/v1/admin/sso/mappings",
            Some(json!({"mappings": [{"group": "g", "team": "nope", "teamRole": "team-viewer"}]})),
        )
        .await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["error"]["details"]["field"], "mappings[0].team");
    let (s, b) = w
        .admin
        .call(
            "PUT",
            "/v1/admin/sso/mappings",
            Some(json!({"mappings": [{"group": "g", "role": "root"}]})),
        )
        .await;
    assert_eq!(s, 400, "{b}");
    assert!(w.audit("SsoMappingsUpdated").await.is_empty());
}

#[tokio::test]
async fn break_glass_only_keeps_password_sign_in_for_named_admins_alone() {
    let w =
        World::start("password_login = \"break-glass-only\"\nbreak_glass_users = [\"root\"]").await;
    let root = w.dir.bootstrap_admin("root");
    let other = w.dir.bootstrap_admin("carol");
    let (r, session) = w.admin.login("root", &root).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(session.is_some());
    let (r, session) = w.admin.login("carol", &other).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "password_login_disabled");
    assert!(r.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Test IdP"));
    assert!(session.is_none());
    let options = w
        .admin
        .call_as("GET", "/v1/auth/sign-in-options", Cred::None, None)
        .await
        .body;
    assert_eq!(options["passwordLogin"], "break-glass-only");
}

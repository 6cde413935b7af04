//! Single sign-on against a real OpenID Connect provider (tests/oidc-provider, built
//! from zitadel/oidc's certified OP library), driven the way a browser drives it: no
//! cookie jar and no automatic redirects, every hop checked. kerf is the real binary,
//! configured with `[auth.oidc]` in a config file.

mod config_check;
mod refusals;
mod sessions;
mod sign_in;

use reqwest::header::SET_COOKIE;
use serde_json::{json, Value};

use crate::support::oidc_provider::{self, OidcProvider, UserSpec};
use crate::support::{Api, Cred, DataDir, Kerf, Session};

/// The client secret kerf and the provider share.
pub const CLIENT_SECRET: &str = "kerf-client-Secret-4471";
/// Everyone's password at the provider.
pub const IDP_PASSWORD: &str = "Idp-Pass-9931-Heron";

/// A provider, a kerf configured to sign in through it, and an admin token.
pub struct World {
    pub idp: OidcProvider,
    pub kerf: Kerf,
    pub admin: Api,
    pub dir: DataDir,
    browser: reqwest::Client,
}

/// Where a callback sent the browser, and the session it got (if any).
#[derive(Debug)]
pub struct Landing {
    pub location: String,
    pub session: Option<Session>,
}

impl World {
    /// kerf with `[auth]` extra keys `auth_extra` (TOML lines), the provider mapping
    /// `kerf-admins` to admin and `kerf-viewers` to viewer in the config file, and
    /// sessions re-checked every 5 s.
    pub async fn start(auth_extra: &str) -> World {
        let idp = oidc_provider::start().await;
        let dir = DataDir::new();
        let secret = dir.path().join("oidc-client-secret");
        std::fs::write(&secret, CLIENT_SECRET).expect("write secret");
        let config = dir.path().join("kerf.toml");
        std::fs::write(
            &config,
            format!(
                r#"[auth]
argon2_iterations = 1
{auth_extra}

[auth.oidc]
issuer = "{issuer}"
name = "Test IdP"
client_id = "kerf"
client_secret_file = "{secret}"
scopes = ["openid", "profile", "email", "offline_access"]
recheck_seconds = 5

[[auth.oidc.groups]]
group = "kerf-admins"
role = "admin"

[[auth.oidc.groups]]
group = "kerf-viewers"
role = "viewer"
"#,
                issuer = idp.url(),
                secret = secret.display()
            ),
        )
        .expect("write config");
        let token = dir.admin_token();
        let kerf = Kerf::builder(dir.path())
            .args(&["--config", config.to_str().expect("utf-8 path")])
            .env("KERF_LOG", "debug")
            .start();
        idp.put_client(
            "kerf",
            CLIENT_SECRET,
            &[&kerf.url("/v1/auth/oidc/callback")],
            &[&kerf.url("/login")],
        )
        .await;
        let admin = kerf.api(&token);
        kerf::tls::install_crypto_provider();
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        World {
            idp,
            kerf,
            admin,
            dir,
            browser,
        }
    }

    /// A person at the provider in `groups`.
    pub async fn person(&self, name: &str, groups: &[&str]) {
        let spec = UserSpec {
            email: format!("{name}@corp.example"),
            name: format!("{name} Example"),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserSpec::new(IDP_PASSWORD)
        };
        self.idp.put_user(name, &spec).await;
    }

    /// Starts a sign-in at kerf: the provider URL it redirects to and the browser
    /// cookie it set.
    pub async fn begin(&self, return_to: &str) -> (String, String) {
        let resp = self
            .browser
            .get(format!(
                "{}?{}",
                self.kerf.url("/v1/auth/oidc/login"),
                serde_urlencoded::to_string([("return", return_to)]).expect("query")
            ))
            .send()
            .await
            .expect("GET login");
        assert_eq!(resp.status().as_u16(), 303, "the login redirects");
        let location = header(&resp, "location").expect("Location");
        assert!(
            location.starts_with(self.idp.url()),
            "to the provider: {location}"
        );
        let cookie = cookie(&resp, "kerf_sso").expect("the browser cookie");
        (location, cookie)
    }

    /// The provider's answer delivered to kerf's callback, with the browser cookie
    /// `browser` (if any).
    pub async fn callback(&self, url: &str, browser: Option<&str>) -> Landing {
        let mut req = self.browser.get(url);
        if let Some(b) = browser {
            req = req.header("cookie", format!("kerf_sso={b}"));
        }
        let resp = req.send().await.expect("GET callback");
        assert_eq!(resp.status().as_u16(), 303, "the callback redirects");
        let location = header(&resp, "location").expect("Location");
        let session = match cookie(&resp, "kerf_session") {
            Some(value) => {
                let probe = Session {
                    cookie: value.clone(),
                    csrf: String::new(),
                };
                let me = self.me(&probe).await;
                Some(Session {
                    cookie: value,
                    csrf: me["csrfToken"].as_str().unwrap_or_default().to_string(),
                })
            }
            None => None,
        };
        Landing { location, session }
    }

    /// A whole sign-in of `name` through the provider, returning to `/workloads`.
    pub async fn sign_in(&self, name: &str) -> Landing {
        let (authorize, browser) = self.begin("/workloads").await;
        let back = self.idp.login(&authorize, name, IDP_PASSWORD).await;
        self.callback(&back, Some(&browser)).await
    }

    /// `GET /v1/me` as `session`: the body, or null when refused.
    pub async fn me(&self, session: &Session) -> Value {
        let r = self
            .admin
            .call_as("GET", "/v1/me", Cred::CookieOnly(session), None)
            .await;
        if r.status == 200 {
            r.body
        } else {
            Value::Null
        }
    }

    /// A team named `name` owning namespace `name` in every cluster.
    pub async fn team(&self, name: &str) -> String {
        let (s, b) = self
            .admin
            .call(
                "POST",
                "/v1/admin/teams",
                Some(json!({"name": name, "namespaces": [{"cluster": "*", "namespace": name}]})),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        b["id"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| b["id"].to_string())
    }

    /// The config-change audit rows of `action`.
    pub async fn audit(&self, action: &str) -> Vec<Value> {
        let (s, b) = self
            .admin
            .call("GET", &format!("/v1/audit/config?action={action}"), None)
            .await;
        assert_eq!(s, 200, "{b}");
        b["items"].as_array().cloned().unwrap_or_default()
    }
}

fn header(resp: &reqwest::Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The value `resp` sets for cookie `name` (not a clearing one).
fn cookie(resp: &reqwest::Response, name: &str) -> Option<String> {
    resp.headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|c| c.split(';').next()?.split_once('='))
        .find(|(k, v)| *k == name && !v.is_empty())
        .map(|(_, v)| v.to_string())
}

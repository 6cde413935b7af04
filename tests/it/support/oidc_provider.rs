//! A real OpenID Connect provider for the sign-in tests: `kerf-oidc-provider`
//! (tests/oidc-provider, zitadel/oidc's certified op library over an in-memory store),
//! built once by `scripts/ensure-oidc-provider.sh`, started on a free loopback port
//! per test and killed on drop. Its control API registers clients and users, ends a
//! user's sessions, rotates the signing key and arms a tampered ID token; `login`
//! plays the browser through its login page.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use reqwest::{Method, Url};
use serde_json::{json, Value};

use super::wait::{secs, within};

/// `OIDC_PROVIDER_BIN`, else what `scripts/ensure-oidc-provider.sh` prints (it builds
/// the provider once per source version, cached).
pub fn bin() -> PathBuf {
    if let Ok(bin) = std::env::var("OIDC_PROVIDER_BIN") {
        return PathBuf::from(bin);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ensure-oidc-provider.sh");
    let out = Command::new("bash")
        .arg(script)
        .output()
        .expect("run scripts/ensure-oidc-provider.sh");
    assert!(
        out.status.success(),
        "scripts/ensure-oidc-provider.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    PathBuf::from(text.lines().last().expect("a path").trim())
}

/// Starts a provider and waits until it listens.
pub async fn start() -> OidcProvider {
    let dir = tempfile::tempdir().expect("tempdir");
    let ready = dir.path().join("ready");
    let log = dir.path().join("provider.log");
    let out = File::create(&log).expect("create the provider's log");
    let bin = bin();
    let mut child = Command::new(&bin)
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--ready-file")
        .arg(&ready)
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("log file"))
        .stderr(out)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()));
    let waited = within("the OIDC provider's ready file", secs(30), async || {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "kerf-oidc-provider exited ({status}) before it was ready:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        match std::fs::read_to_string(&ready) {
            Ok(text) if text.ends_with('\n') => Ok(text.trim().to_string()),
            other => Err(other.map_err(|e| e.kind())),
        }
    })
    .await;
    let url = match waited {
        Ok(url) => url,
        Err(timed_out) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{timed_out}\nprovider log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
    };
    OidcProvider {
        child,
        url,
        http: super::client(),
        _dir: dir,
    }
}

/// A running provider; killed on drop (its temp dir, with its log, removed).
pub struct OidcProvider {
    child: Child,
    url: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// A user as `put_user` stores it. `UserSpec::new(password)` gives an enabled user
/// with no email, name or groups; set the fields to taste.
#[derive(Clone, Debug, Default)]
pub struct UserSpec {
    pub password: String,
    pub email: String,
    pub name: String,
    pub groups: Vec<String>,
    pub disabled: bool,
}

impl UserSpec {
    /// An enabled user with this password and nothing else.
    pub fn new(password: &str) -> UserSpec {
        UserSpec {
            password: password.to_string(),
            ..UserSpec::default()
        }
    }
}

impl OidcProvider {
    /// The issuer: the provider's base URL, `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Registers (or replaces) a confidential web client: client_secret_basic or
    /// client_secret_post, authorization_code and refresh_token grants.
    pub async fn put_client(
        &self,
        id: &str,
        secret: &str,
        redirect_uris: &[&str],
        post_logout: &[&str],
    ) {
        let body = json!({
            "secret": secret,
            "redirectUris": redirect_uris,
            "postLogoutRedirectUris": post_logout,
        });
        self.control(Method::PUT, &format!("clients/{id}"), body)
            .await;
    }

    /// Creates or replaces a user (its `sub` stays `u-<username>`); returns the `sub`.
    /// Changes show in the next token issued (sign-in or refresh).
    pub async fn put_user(&self, username: &str, user: &UserSpec) -> String {
        let body = json!({
            "password": user.password,
            "email": user.email,
            "name": user.name,
            "groups": user.groups,
            "disabled": user.disabled,
        });
        let out = self
            .control(Method::PUT, &format!("users/{username}"), body)
            .await;
        out["sub"].as_str().expect("sub").to_string()
    }

    /// Revokes all the user's access and refresh tokens and browser sessions: the next
    /// refresh is `invalid_grant`, userinfo 401.
    pub async fn end_sessions(&self, username: &str) {
        let path = format!("users/{username}/end-sessions");
        self.control(Method::POST, &path, json!({})).await;
    }

    /// A fresh signing key becomes the active one; returns (active kid, retired kid).
    /// `keep_old` keeps the keys published so far in the JWKS; otherwise it holds only
    /// the new key (the retired one stays known for the `old-key` tamper).
    pub async fn rotate_keys(&self, keep_old: bool) -> (String, String) {
        let out = self
            .control(Method::POST, "rotate-keys", json!({ "keepOld": keep_old }))
            .await;
        let kid = |k: &str| out[k].as_str().expect(k).to_string();
        (kid("activeKid"), kid("retiredKid"))
    }

    /// Arms a flaw in the next authorization_code response's ID token, once:
    /// `wrong-aud`, `expired`, `no-nonce`, `wrong-iss`, `foreign-key` (an unpublished
    /// key under the active kid) or `old-key` (the retired key; needs a rotation first).
    pub async fn tamper_next(&self, kind: &str) {
        self.control(Method::POST, "tamper-next", json!({ "kind": kind }))
            .await;
    }

    /// Calls `/_control/<path>`; panics on a non-2xx answer.
    async fn control(&self, method: Method, path: &str, body: Value) -> Value {
        let url = format!("{}/_control/{path}", self.url);
        let resp = self
            .http
            .request(method.clone(), &url)
            .json(&body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "OIDC provider control {method} {url} {body}: {status}: {text}"
        );
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// Plays the browser (no cookies, no automatic redirects): GETs `authorize_url`,
    /// follows the provider's redirects to its login page, submits the form, and
    /// follows redirects while they stay on the provider; returns the first redirect
    /// that leaves it (the client's redirect_uri with `code` and `state`, or with
    /// `error` when the provider refused the request). Panics with the page's message
    /// when the sign-in fails.
    pub async fn login(&self, authorize_url: &str, username: &str, password: &str) -> String {
        kerf::tls::install_crypto_provider();
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(secs(30))
            .build()
            .expect("client");
        let provider = Url::parse(&self.url).expect("provider url");
        let mut url = Url::parse(authorize_url).expect("authorize url");
        let mut submitted = false;
        for _ in 0..10 {
            let resp = browser
                .get(url.clone())
                .send()
                .await
                .unwrap_or_else(|e| panic!("GET {url}: {e}"));
            let resp = if resp.status().is_success() && url.path() == "/login" && !submitted {
                submitted = true;
                let id = url
                    .query_pairs()
                    .find(|(k, _)| k == "authRequestID")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_else(|| panic!("no authRequestID in {url}"));
                let form = serde_urlencoded::to_string([
                    ("authRequestID", id.as_str()),
                    ("username", username),
                    ("password", password),
                ])
                .expect("form");
                url = url.join("/login").expect("login url");
                browser
                    .post(url.clone())
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .body(form)
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("POST {url}: {e}"))
            } else {
                resp
            };
            if !resp.status().is_redirection() {
                let status = resp.status();
                let page = resp.text().await.unwrap_or_default();
                panic!(
                    "OIDC sign-in of {username} stopped at {url} with {status}: {}",
                    page_error(&page).unwrap_or(&page)
                );
            }
            let location = resp
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .unwrap_or_else(|| panic!("a redirect without Location from {url}"));
            let next = url.join(location).expect("redirect url");
            if next.origin() != provider.origin() {
                return next.to_string();
            }
            url = next;
        }
        panic!("OIDC sign-in of {username}: too many redirects within the provider, last {url}");
    }
}

/// The message the login page shows (`<p id="error" ...>MSG</p>`), if any.
fn page_error(page: &str) -> Option<&str> {
    let start = page.find(r#"id="error""#)?;
    let text = &page[start..];
    let open = text.find('>')? + 1;
    let close = text[open..].find('<')?;
    Some(&text[open..open + close])
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

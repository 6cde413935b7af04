//! The one HTTP client of the tests: `Api { base, token }` speaks JSON to a hub (the
//! real binary or the in-process `support::hub::Hub`), as a bearer token, a session
//! (cookie and CSRF header) or nobody, and answers status, headers and body.

use std::sync::{Arc, Mutex};

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::wait::{eventually, secs};

/// An HTTP client for tests (30 s per request).
pub fn client() -> reqwest::Client {
    kerf::tls::install_crypto_provider();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// A hub's API as one principal.
#[derive(Clone)]
pub struct Api {
    /// `http://IP:PORT`, without a trailing slash.
    pub base: String,
    /// The bearer token requests carry unless they say otherwise.
    pub token: String,
    pub http: reqwest::Client,
    /// Every response body, when [`Api::recording`] asked for them (the hygiene checks).
    seen: Option<Arc<Mutex<Vec<String>>>>,
}

/// How a request authenticates.
#[derive(Clone, Copy)]
pub enum Cred<'a> {
    None,
    Bearer(&'a str),
    Session(&'a Session),
    /// The cookie without the CSRF header.
    CookieOnly(&'a Session),
}

/// A signed-in browser's session.
#[derive(Clone, Debug)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

/// What a request got back.
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    /// The JSON body, or null when there was none (or it was not JSON).
    pub body: Value,
}

impl Reply {
    /// The `ETag` header.
    pub fn etag(&self) -> Option<String> {
        let v = self.headers.get("etag")?;
        Some(v.to_str().expect("an ETag is ASCII").to_string())
    }
}

/// A method as `&str` ("GET") or `reqwest::Method`.
pub trait Verb {
    fn method(self) -> reqwest::Method;
}

impl Verb for &str {
    fn method(self) -> reqwest::Method {
        reqwest::Method::from_bytes(self.as_bytes()).expect("an HTTP method")
    }
}

impl Verb for reqwest::Method {
    fn method(self) -> reqwest::Method {
        self
    }
}

/// One request being put together: [`Api::request`], then `.cred`, `.json`,
/// `.if_match`, `.header`, then `.send()`.
pub struct Request<'a> {
    api: &'a Api,
    rb: reqwest::RequestBuilder,
    authed: bool,
}

impl Request<'_> {
    pub fn cred(mut self, cred: Cred<'_>) -> Self {
        self.authed = true;
        self.rb = match cred {
            Cred::None => self.rb,
            Cred::Bearer(t) => self.rb.bearer_auth(t),
            Cred::Session(s) => self
                .rb
                .header("cookie", format!("kerf_session={}", s.cookie))
                .header("x-csrf-token", &s.csrf),
            Cred::CookieOnly(s) => self
                .rb
                .header("cookie", format!("kerf_session={}", s.cookie)),
        };
        self
    }

    pub fn json(mut self, body: &Value) -> Self {
        self.rb = self.rb.json(body);
        self
    }

    /// `If-Match: "VERSION"` (optimistic concurrency).
    pub fn if_match(mut self, version: i64) -> Self {
        self.rb = self.rb.header("if-match", format!("\"{version}\""));
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.rb = self.rb.header(name, value);
        self
    }

    pub async fn send(self) -> Reply {
        self.try_send().await.expect("send")
    }

    /// As [`Request::send`], but a request that cannot be sent (the hub is down) is an
    /// error, not a panic.
    pub async fn try_send(self) -> Result<Reply, reqwest::Error> {
        let rb = if self.authed {
            self.rb
        } else {
            self.rb.bearer_auth(&self.api.token)
        };
        let resp = rb.send().await?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await?;
        if let Some(seen) = &self.api.seen {
            seen.lock().expect("seen lock").push(text.clone());
        }
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Reply {
            status,
            headers,
            body,
        })
    }
}

impl Api {
    pub fn new(base: impl Into<String>, token: impl Into<String>) -> Api {
        Api {
            base: base.into().trim_end_matches('/').to_string(),
            token: token.into(),
            http: client(),
            seen: None,
        }
    }

    /// Sends through `http` (e.g. a client that trusts a test CA).
    pub fn with_http(mut self, http: reqwest::Client) -> Api {
        self.http = http;
        self
    }

    /// The same hub as another principal (bodies are still recorded, if they were).
    pub fn as_token(&self, token: &str) -> Api {
        Api {
            token: token.into(),
            ..self.clone()
        }
    }

    /// Keeps every response body from now on (see [`Api::seen`]).
    pub fn recording(mut self) -> Api {
        self.seen = Some(Default::default());
        self
    }

    /// Every response body recorded so far.
    pub fn seen(&self) -> Vec<String> {
        let seen = self.seen.as_ref().expect("Api::recording() first");
        seen.lock().expect("seen lock").clone()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request with the bearer token unless `.cred` says otherwise.
    pub fn request(&self, method: impl Verb, path: &str) -> Request<'_> {
        Request {
            api: self,
            rb: self.http.request(method.method(), self.url(path)),
            authed: false,
        }
    }

    /// `method path` with an optional JSON body; (status, JSON body or null).
    pub async fn call(&self, method: impl Verb, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.request(method, path);
        if let Some(b) = &body {
            req = req.json(b);
        }
        let r = req.send().await;
        (r.status, r.body)
    }

    /// `method path` as `cred`, with an optional JSON body; the whole reply.
    pub async fn call_as(
        &self,
        method: impl Verb,
        path: &str,
        cred: Cred<'_>,
        body: Option<Value>,
    ) -> Reply {
        let mut req = self.request(method, path).cred(cred);
        if let Some(b) = &body {
            req = req.json(b);
        }
        req.send().await
    }

    /// As [`Api::call`], but (0, null) when the hub cannot be reached (a test that
    /// stops it on purpose).
    pub async fn try_call(
        &self,
        method: impl Verb,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self.request(method, path);
        if let Some(b) = &body {
            req = req.json(b);
        }
        match req.try_send().await {
            Ok(r) => (r.status, r.body),
            Err(_) => (0, Value::Null),
        }
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call("GET", path, None).await
    }

    /// GET that must answer 200; its body.
    pub async fn get_ok(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("POST", path, Some(body)).await
    }

    /// POST that must succeed (2xx); its body.
    pub async fn post_ok(&self, path: &str, body: Value) -> Value {
        let (status, answer) = self.post(path, body).await;
        assert!(
            (200..300).contains(&status),
            "POST {path}: {status} {answer}"
        );
        answer
    }

    /// Creates Prometheus datasource `name` at `url` (series labelled `cluster`) and
    /// links `cluster` to it, as an admin does; returns the datasource.
    pub async fn link_prometheus(&self, cluster: &str, name: &str, url: &str) -> Value {
        let body = serde_json::json!({"name": name, "type": "prometheus", "url": url, "clusterLabel": "cluster"});
        let ds = self.post_ok("/v1/datasources", body).await;
        let link = serde_json::json!({"datasourceId": ds["id"]});
        let (s, v) = self
            .put(&format!("/v1/clusters/{cluster}/datasource"), link)
            .await;
        assert_eq!(s, 200, "link {cluster} to {name}: {v}");
        ds
    }

    pub async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("PUT", path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("PATCH", path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> (u16, Value) {
        self.call("DELETE", path, None).await
    }

    /// Logs in with a password; the reply and the session it set, if any.
    pub async fn login(&self, user: &str, password: &str) -> (Reply, Option<Session>) {
        let body = serde_json::json!({"username": user, "password": password});
        let r = self
            .request("POST", "/v1/auth/login")
            .cred(Cred::None)
            .json(&body)
            .send()
            .await;
        let session = r.headers.get("set-cookie").map(|c| {
            let c = c.to_str().expect("ascii");
            Session {
                cookie: c
                    .split(';')
                    .next()
                    .expect("pair")
                    .trim_start_matches("kerf_session=")
                    .to_string(),
                csrf: r.body["csrfToken"].as_str().unwrap_or_default().to_string(),
            }
        });
        (r, session)
    }

    /// Posts a batch of agent events (as this token); (status, body).
    pub async fn post_events(&self, cluster: &str, body: &Value) -> (u16, Value) {
        self.post(&format!("/v1/clusters/{cluster}/events"), body.clone())
            .await
    }

    /// Starts a manual run of `cluster` and waits until it is no longer running; the run.
    pub async fn run_to_end(&self, cluster: &str) -> Value {
        let (s, run) = self
            .call("POST", &format!("/v1/clusters/{cluster}/runs"), None)
            .await;
        assert_eq!(s, 202, "{run}");
        let path = format!("/v1/runs/{}", run["id"].as_str().expect("run id"));
        let what = format!("{path} to finish");
        eventually(&what, secs(90), async || {
            let (_, r) = self.get(&path).await;
            if r["status"] != "running" {
                Ok(r)
            } else {
                Err(r)
            }
        })
        .await
    }

    /// Every workload (up to 500), once every cluster has a finished run and none is
    /// running (e.g. the demo's first runs).
    pub async fn analysed(&self) -> Vec<Value> {
        eventually("the runs to finish", secs(120), async || {
            let clusters = self.get_ok("/v1/clusters").await;
            let names: Vec<Value> = clusters["items"]
                .as_array()
                .or(clusters.as_array())
                .into_iter()
                .flatten()
                .map(|c| c["name"].clone())
                .collect();
            let done = self.get_ok("/v1/runs?status=succeeded&limit=500").await;
            let running = self.get_ok("/v1/runs?status=running").await;
            let finished = |c: &Value| {
                done["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| &r["cluster"] == c)
            };
            let idle = running["items"].as_array().is_some_and(|a| a.is_empty());
            if names.is_empty() || !idle || !names.iter().all(finished) {
                return Err(format!("succeeded: {done}; running: {running}"));
            }
            let body = self.get_ok("/v1/workloads?limit=500").await;
            Ok(body["items"].as_array().cloned().expect("items"))
        })
        .await
    }

    /// Every configuration change with `action`, newest first (up to 500).
    pub async fn changes(&self, action: &str) -> Vec<Value> {
        let path = format!("/v1/audit/config?action={action}&limit=500");
        let page = self.get_ok(&path).await;
        page["items"].as_array().expect("items").clone()
    }

    /// Walks `/v1/audit` with `query` to the end; returns every item.
    pub async fn audit_all(&self, query: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let mut path = format!("/v1/audit?limit=500{query}");
            if let Some(n) = &next {
                path.push_str(&format!("&next={n}"));
            }
            let page = self.get_ok(&path).await;
            items.extend(page["items"].as_array().expect("items").iter().cloned());
            match page["next"].as_str() {
                Some(n) => next = Some(n.to_string()),
                None => return items,
            }
        }
    }
}

/// Resends `batch` of `prod`'s agent events until the hub, wherever `url` says it
/// listens now (a test restarts it), acknowledges it.
pub async fn send_until_acked(
    http: &reqwest::Client,
    url: &tokio::sync::watch::Receiver<String>,
    token: &str,
    batch: &Value,
) {
    // Callers send from spawned tasks.
    super::wait::eventually_sent("the batch to be acknowledged", secs(120), || {
        let base = url.borrow().clone();
        async move {
            let r = http
                .post(format!("{base}/v1/clusters/prod/events"))
                .bearer_auth(token)
                .json(batch)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if r.status() != 200 {
                return Err(r.status().to_string());
            }
            r.json::<Value>().await.map(drop).map_err(|e| e.to_string())
        }
    })
    .await
}

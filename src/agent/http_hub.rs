//! The hub over HTTP(S), for `mode = "agent"`: rustls with the ring provider, the hub's
//! CA configurable (`[agent] hub_ca_file`, else the system's roots), the cluster token as
//! a bearer token. Transport failures, 5xx answers and answers that do not parse are
//! [`HubError::Unreachable`]; refusals keep the hub's error code.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::hub::{refusal, FeedPage, Hub, HubError};
use crate::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness};

/// A remote hub.
pub struct HttpHub {
    http: reqwest::Client,
    /// `https://hub.example/v1/clusters/<cluster>`.
    base: String,
    token: String,
}

impl std::fmt::Debug for HttpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token never appears in logs.
        f.debug_struct("HttpHub").field("base", &self.base).finish()
    }
}

impl HttpHub {
    /// A client for the hub at `url` as cluster `cluster`; `ca_pem` replaces the system
    /// roots when given.
    pub fn new(
        url: &str,
        cluster: &str,
        token: String,
        ca_pem: Option<&str>,
        timeout: Duration,
    ) -> Result<HttpHub, String> {
        crate::tls::install_crypto_provider();
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("agent.hub_url: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() {
            return Err("agent.hub_url must be an http(s) URL".into());
        }
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)));
        if let Some(pem) = ca_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|_| "agent.hub_ca_file is not a PEM bundle".to_string())?;
            if certs.is_empty() {
                return Err("agent.hub_ca_file holds no certificate".into());
            }
            builder = builder.tls_certs_only(certs);
        }
        let http = builder.build().map_err(|e| format!("HTTP client: {e}"))?;
        Ok(HttpHub {
            http,
            base: format!("{}/v1/clusters/{cluster}", url.trim_end_matches('/')),
            token,
        })
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, HubError> {
        let text = self.call_text(method, path, body).await?;
        match serde_json::from_str::<Value>(&text) {
            Ok(v) if !v.is_null() => Ok(v),
            _ => Err(HubError::Unreachable(format!(
                "{path}: the answer is not JSON"
            ))),
        }
    }

    /// The body of a 200 answer, unparsed (the feeds are read straight into their
    /// types); any other status is the hub's refusal.
    async fn call_text(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<String, HubError> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| HubError::Unreachable(e.without_url().to_string()))?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .map_err(|e| HubError::Unreachable(e.without_url().to_string()))?;
        if status == StatusCode::OK {
            return Ok(text);
        }
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        Err(refusal(status.as_u16(), &value))
    }
}

fn unreadable(what: &str, e: serde_json::Error) -> HubError {
    HubError::Unreachable(format!("the {what} does not parse: {e}"))
}

impl Hub for HttpHub {
    async fn config(&self) -> Result<ConfigFeed, HubError> {
        let text = self.call_text(Method::GET, "/config", None).await?;
        ConfigFeed::read(&text).map_err(|e| unreadable("config feed", e))
    }

    async fn recommendations(&self, next: Option<String>) -> Result<FeedPage, HubError> {
        let path = match &next {
            Some(n) => format!("/recommendations?next={}", form_urlencoded_component(n)),
            None => "/recommendations".to_string(),
        };
        let text = self.call_text(Method::GET, &path, None).await?;
        FeedPage::read(&text).map_err(|e| unreadable("recommendation feed", e))
    }

    async fn heartbeat(&self, heartbeat: &Heartbeat) -> Result<Readiness, HubError> {
        let body = serde_json::to_value(heartbeat).map_err(|e| unreadable("heartbeat", e))?;
        let v = self.call(Method::POST, "/heartbeat", Some(&body)).await?;
        serde_json::from_value(v).map_err(|e| unreadable("readiness", e))
    }

    async fn send_events(&self, batch: &[AgentEvent]) -> Result<(), HubError> {
        let body = serde_json::to_value(batch).map_err(|e| unreadable("event batch", e))?;
        self.call(Method::POST, "/events", Some(&body)).await?;
        Ok(())
    }
}

/// Percent-encodes a query value (cursors are base64url, but nothing is assumed).
fn form_urlencoded_component(s: &str) -> String {
    serde_urlencoded::to_string([("", s)])
        .map(|q| q.trim_start_matches('=').to_string())
        .unwrap_or_default()
}

//! The hub over HTTP(S), for `mode = "agent"`: rustls with the ring provider, the hub's
//! CA configurable (`[agent] hub_ca_file`, else the system's roots), the cluster token as
//! a bearer token. Transport failures, 5xx answers and answers that do not parse are
//! [`HubError::Unreachable`]; refusals keep the hub's error code. Collected usage goes
//! as Prometheus remote write 1.0 (snappy protobuf, any 2xx taken as stored, 429 as
//! "later").

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{CONTENT_ENCODING, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::hub::{refusal, FeedPage, Hub, HubError};
use crate::wire::cluster_policies::{ClusterPolicies, ClusterPolicyVerdicts};
use crate::wire::remote_write;
use crate::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness};

/// A remote hub.
pub struct HttpHub {
    http: reqwest::Client,
    /// `https://hub.example/v1/clusters/<cluster>`.
    base: String,
    token: String,
    /// Body bytes of every feed answer read (`feed_bytes`).
    feed_bytes: std::sync::atomic::AtomicU64,
    /// Every request's time limit (a long poll waits less).
    timeout: Duration,
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
        let origin = parsed.origin();
        // A redirect to another origin would take the token and the body there.
        let same_origin = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.url().origin() == origin && attempt.previous().len() < 5 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let mut builder = reqwest::Client::builder()
            .redirect(same_origin)
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
            feed_bytes: Default::default(),
            timeout,
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
    /// Body bytes of the feed answers read so far (what a pass costs on the wire,
    /// before compression).
    pub fn feed_bytes(&self) -> u64 {
        self.feed_bytes.load(std::sync::atomic::Ordering::Relaxed)
    }

    async fn feed_text(&self, path: &str) -> Result<String, HubError> {
        let text = self.call_text(Method::GET, path, None).await?;
        self.feed_bytes
            .fetch_add(text.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(text)
    }

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

/// The refusal of a write: 429 and 5xx are for later, a 400 is for good (whatever its
/// code), the rest keep the hub's error code.
fn write_refusal(status: u16, text: &str) -> HubError {
    let body: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let message = body["error"]["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| text.chars().take(200).collect());
    match status {
        429 | 500..=599 => HubError::Unreachable(format!("{status}: {message}")),
        413 => HubError::TooLarge,
        _ => HubError::Refused {
            status,
            code: body["error"]["code"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            message,
        },
    }
}

fn unreadable(what: &str, e: serde_json::Error) -> HubError {
    HubError::Unreachable(format!("the {what} does not parse: {e}"))
}

impl Hub for HttpHub {
    async fn config(&self, since: Option<String>) -> Result<ConfigFeed, HubError> {
        let path = match &since {
            Some(v) => format!("/config?since={}", form_urlencoded_component(v)),
            None => "/config".to_string(),
        };
        let text = self.feed_text(&path).await?;
        ConfigFeed::read(&text).map_err(|e| unreadable("config feed", e))
    }

    async fn recommendations(
        &self,
        since: Option<String>,
        next: Option<String>,
    ) -> Result<FeedPage, HubError> {
        let path = match (&since, &next) {
            (Some(v), _) => format!("/recommendations?since={}", form_urlencoded_component(v)),
            (None, Some(n)) => format!("/recommendations?next={}", form_urlencoded_component(n)),
            (None, None) => "/recommendations".to_string(),
        };
        let text = self.feed_text(&path).await?;
        FeedPage::read(&text).map_err(|e| unreadable("recommendation feed", e))
    }

    async fn feeds_after(&self, since: &str, wait: Duration) -> Result<Option<String>, HubError> {
        // The answer must come back inside the request's own time limit.
        let seconds = wait
            .min(self.timeout.saturating_sub(Duration::from_secs(2)))
            .as_secs();
        let path = format!(
            "/config?since={}&wait={seconds}",
            form_urlencoded_component(since)
        );
        let text = self.feed_text(&path).await?;
        let feed = ConfigFeed::read(&text).map_err(|e| unreadable("config feed", e))?;
        Ok(feed.version)
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

    async fn write(&self, body: Bytes) -> Result<(), HubError> {
        let resp = self
            .http
            .post(format!("{}/write", self.base))
            .bearer_auth(&self.token)
            .header(CONTENT_ENCODING, remote_write::CONTENT_ENCODING)
            .header(CONTENT_TYPE, remote_write::CONTENT_TYPE)
            .header(remote_write::VERSION_HEADER, remote_write::VERSION)
            .body(body)
            .send()
            .await
            .map_err(|e| HubError::Unreachable(e.without_url().to_string()))?;
        let status = resp.status();
        if status.is_success() {
            return Ok(());
        }
        let text = resp.text().await.unwrap_or_default();
        Err(write_refusal(status.as_u16(), &text))
    }

    async fn report_policies(
        &self,
        report: &ClusterPolicies,
    ) -> Result<ClusterPolicyVerdicts, HubError> {
        let body = serde_json::to_value(report).map_err(|e| unreadable("policy report", e))?;
        let v = self.call(Method::PUT, "/policies", Some(&body)).await?;
        serde_json::from_value(v).map_err(|e| unreadable("policy verdicts", e))
    }
}

/// Percent-encodes a query value (cursors are base64url, but nothing is assumed).
fn form_urlencoded_component(s: &str) -> String {
    serde_urlencoded::to_string([("", s)])
        .map(|q| q.trim_start_matches('=').to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;
    use crate::wire::remote_write::{decode, encode, series, WriteRequest};

    /// One HTTP/1.1 exchange on `listener`: the request's head (lowercased) and body,
    /// answered with `status` and `body`.
    async fn exchange(listener: TcpListener, status: u16, body: &'static str) -> (String, Vec<u8>) {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut got = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            let n = socket.read(&mut chunk).await.expect("read");
            assert!(n > 0, "the request ended early");
            got.extend_from_slice(&chunk[..n]);
            if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while got.len() < head_end + length {
            let n = socket.read(&mut chunk).await.expect("read body");
            assert!(n > 0, "the body ended early");
            got.extend_from_slice(&chunk[..n]);
        }
        let answer = format!(
            "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(answer.as_bytes()).await.expect("answer");
        (head, got[head_end..].to_vec())
    }

    async fn write_answered(
        status: u16,
        answer: &'static str,
    ) -> (Result<(), HubError>, String, Vec<u8>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let server = tokio::spawn(exchange(listener, status, answer));
        let hub = HttpHub::new(&url, "edge", "tok-1".into(), None, Duration::from_secs(5))
            .expect("client");
        let labels = [("__name__".to_string(), "m".to_string())].into();
        let request = WriteRequest {
            timeseries: vec![series(&labels, &[(1_000, 2.5)])],
        };
        let result = hub
            .write(Bytes::from(encode(&request).expect("encode")))
            .await;
        let (head, body) = server.await.expect("server");
        (result, head, body)
    }

    #[tokio::test]
    async fn a_write_is_a_snappy_protobuf_post_with_the_remote_write_headers_and_the_token() {
        let (result, head, body) = write_answered(204, "").await;
        assert_eq!(result, Ok(()));
        assert!(
            head.starts_with("post /v1/clusters/edge/write http/1.1\r\n"),
            "{head}"
        );
        for line in [
            "authorization: bearer tok-1",
            "content-encoding: snappy",
            "content-type: application/x-protobuf",
            "x-prometheus-remote-write-version: 0.1.0",
        ] {
            assert!(head.contains(line), "{line} in {head}");
        }
        let request = decode(&body).expect("the body is the request");
        assert_eq!(request.timeseries[0].samples[0].timestamp, 1_000);
    }

    #[tokio::test]
    async fn a_400_is_refused_for_good_and_429_and_5xx_are_for_later() {
        let (refused, _, _) = write_answered(
            400,
            r#"{"error":{"code":"out_of_order","message":"sample too old"}}"#,
        )
        .await;
        assert_eq!(
            refused,
            Err(HubError::Refused {
                status: 400,
                code: "out_of_order".into(),
                message: "sample too old".into(),
            })
        );
        for status in [429, 503] {
            let (later, _, _) = write_answered(status, "busy").await;
            assert!(
                matches!(later, Err(HubError::Unreachable(ref m)) if m.contains("busy")),
                "{later:?}"
            );
        }
        assert_eq!(write_answered(413, "").await.0, Err(HubError::TooLarge));
        let away = HttpHub::new(
            "http://127.0.0.1:9",
            "edge",
            "t".into(),
            None,
            Duration::from_secs(2),
        )
        .expect("client")
        .write(Bytes::from_static(b"x"))
        .await;
        assert!(matches!(away, Err(HubError::Unreachable(_))), "{away:?}");
    }

    /// A server that answers every request with a 307 to `location`: its URL, and how
    /// many connections it took.
    async fn redirector(location: String) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let seen = Arc::new(AtomicUsize::new(0));
        let count = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let mut buf = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut buf).await;
                let answer = format!(
                    "HTTP/1.1 307 X\r\nlocation: {location}\r\ncontent-length: 0\r\n\
                     connection: close\r\n\r\n"
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        (url, seen)
    }

    #[tokio::test]
    async fn a_redirect_to_another_origin_is_not_followed_with_the_token_and_body() {
        // The other origin: `localhost` is another host than `127.0.0.1`.
        let (elsewhere, heard) = redirector("http://127.0.0.1:9/".into()).await;
        let elsewhere = elsewhere.replace("127.0.0.1", "localhost");
        let (hub_url, asked) = redirector(format!("{elsewhere}/v1/clusters/edge/heartbeat")).await;
        let hub = HttpHub::new(
            &hub_url,
            "edge",
            "tok-1".into(),
            None,
            Duration::from_secs(5),
        )
        .expect("client");
        let refused = hub.send_events(&[]).await;
        assert!(refused.is_err(), "{refused:?}");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert_eq!(
            heard.load(Ordering::SeqCst),
            0,
            "the other origin heard nothing"
        );
    }
}

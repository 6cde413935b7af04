//! The Prometheus HTTP API client: `query` and `query_range` as POSTed forms (no URL
//! length limit), streamed remote read (`remote_read/http.rs`), auth (basic, bearer, custom
//! headers such as `X-Scope-OrgID`), TLS (CA bundle or explicit insecure), a timeout, a
//! bound on concurrent requests, and retries with backoff for transient failures only.
//! It counts requests, bytes received and samples decoded. Errors never carry a
//! credential: redirects are followed only within the datasource's own origin (with no
//! `Referer`), and the server's error text is cut to one short line with every
//! credential the client sends masked, so a hostile or echoing upstream cannot show
//! them to viewers (readiness reasons, run errors, usage answers).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::Semaphore;

use super::decode;
use crate::analysis::Sample;
use crate::backoff::Backoff;
use crate::datasource::raw::RawSeries;
use crate::datasource::DatasourceError;
use crate::secret::{Secret, MASK};

/// Transient failures are retried this many times after the first attempt.
const RETRIES: u32 = 3;
/// Doubling from 200 ms (three retries: 200, 400, 800 ms).
const BACKOFF: Backoff = Backoff::new(Duration::from_millis(200), 2, Duration::MAX);

/// How to authenticate. Secret values live only in memory, decrypted.
#[derive(Clone, Default)]
pub enum ClientAuth {
    #[default]
    None,
    Basic {
        username: String,
        password: Secret,
    },
    Bearer(Secret),
}

/// Everything the client needs, secrets decrypted.
#[derive(Clone)]
pub struct ClientConfig {
    pub url: String,
    pub auth: ClientAuth,
    /// Extra headers (e.g. `X-Scope-OrgID`); values may be secret.
    pub headers: Vec<(String, String)>,
    /// PEM CA bundle trusted in addition to the platform's roots.
    pub ca_pem: Option<String>,
    /// Skip certificate verification (explicit opt-in only).
    pub insecure_skip_verify: bool,
    pub timeout: Duration,
    pub max_concurrent_queries: usize,
    /// Where the client may connect (`[outbound] datasource_allow`).
    pub outbound: Arc<crate::outbound::Policy>,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("ClientConfig")
            .field("url", &self.url)
            // Not even which kind of auth: the whole of it stands masked.
            .field("auth", &MASK)
            .field("headers", &header_names)
            .field("insecure_skip_verify", &self.insecure_skip_verify)
            .field("timeout", &self.timeout)
            .field("max_concurrent_queries", &self.max_concurrent_queries)
            .finish()
    }
}

/// What a client has done so far (shared by its clones).
#[derive(Debug, Default)]
pub struct Counters {
    /// Requests sent, retries included.
    pub requests: AtomicU64,
    /// Answer body bytes received (as sent on the wire).
    pub bytes: AtomicU64,
    /// Samples decoded from answers (JSON pairs or XOR chunk samples).
    pub samples: AtomicU64,
}

/// A connected client. Cheap to clone; clones share the concurrency bound and counters.
#[derive(Clone)]
pub struct Client {
    pub(in crate::datasource::prometheus) http: reqwest::Client,
    config: Arc<ClientConfig>,
    /// Every credential value this client sends, as sent (base64 forms included).
    secrets: Arc<Vec<String>>,
    pub(in crate::datasource::prometheus) permits: Arc<Semaphore>,
    pub(in crate::datasource::prometheus) counters: Arc<Counters>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.config.fmt(f)
    }
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    metric: std::collections::BTreeMap<String, String>,
    #[serde(default, deserialize_with = "decode::points")]
    values: Vec<Sample>,
    #[serde(default, deserialize_with = "decode::point")]
    value: Option<Sample>,
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Client, DatasourceError> {
        crate::tls::install_crypto_provider();
        let url = reqwest::Url::parse(&config.url)
            .map_err(|e| DatasourceError::Invalid(format!("url: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(DatasourceError::Invalid(
                "url: scheme must be http or https".into(),
            ));
        }
        config
            .outbound
            .check_url(&config.url, crate::outbound::Purpose::Any)
            .map_err(|r| DatasourceError::Invalid(format!("url: {r}")))?;
        let mut builder = reqwest::Client::builder()
            .dns_resolver(Arc::new(crate::outbound::resolver::Vetted {
                policy: config.outbound.clone(),
            }))
            .timeout(config.timeout)
            .pool_max_idle_per_host(config.max_concurrent_queries.max(1))
            .redirect(same_origin_redirects())
            .referer(false);
        if let Some(pem) = &config.ca_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|_| DatasourceError::Invalid("tls.caPem: not a PEM bundle".into()))?;
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        if config.insecure_skip_verify {
            builder = builder.danger_accept_invalid_certs(true);
        }
        let http = builder
            .build()
            .map_err(|e| DatasourceError::Invalid(format!("HTTP client: {}", redact(&e))))?;
        Ok(Client {
            http,
            secrets: Arc::new(credentials(&config)),
            permits: Arc::new(Semaphore::new(config.max_concurrent_queries.max(1))),
            config: Arc::new(config),
            counters: Arc::new(Counters::default()),
        })
    }

    /// The bound on requests in flight.
    pub fn max_concurrent(&self) -> usize {
        self.config.max_concurrent_queries.max(1)
    }

    /// Requests issued so far (retries included).
    pub fn queries(&self) -> u64 {
        self.counters.requests.load(Ordering::Relaxed)
    }

    /// Answer bytes received so far.
    pub fn bytes(&self) -> u64 {
        self.counters.bytes.load(Ordering::Relaxed)
    }

    /// Samples decoded so far.
    pub fn samples(&self) -> u64 {
        self.counters.samples.load(Ordering::Relaxed)
    }

    /// Counts samples decoded outside the client (remote-read streams).
    pub fn count_samples(&self, n: u64) {
        self.counters.samples.fetch_add(n, Ordering::Relaxed);
    }

    /// `GET api/v1/status/<what>`'s `data` (server flags, build information).
    pub async fn status(&self, what: &str) -> Result<serde_json::Value, DatasourceError> {
        let url = self.url(&format!("api/v1/status/{what}"));
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let resp = self
            .authorized(self.http.get(&url))
            .send()
            .await
            .map_err(|e| DatasourceError::Unreachable(redact(&e)))?;
        let status = resp.status().as_u16();
        if status >= 300 {
            return Err(DatasourceError::Query(format!("{what}: HTTP {status}")));
        }
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| DatasourceError::Unreachable(redact(&e)))?;
        self.counters
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let mut value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| DatasourceError::Decode(e.to_string()))?;
        Ok(value["data"].take())
    }

    /// Text from the datasource as kerf shows it (to viewers too): one line of at most
    /// [`SHOWN_CHARS`] characters, every credential this client sends masked, and any
    /// `Basic …`/`Bearer …` value masked whatever it holds.
    pub(in crate::datasource::prometheus) fn shown(&self, raw: &str) -> String {
        let mut text: String = raw.chars().take(4096).collect();
        for secret in self.secrets.iter() {
            text = text.replace(secret.as_str(), MASK);
        }
        let text = mask_auth_values(&text);
        let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        match line.char_indices().nth(SHOWN_CHARS) {
            Some((at, _)) => format!("{}…", &line[..at]),
            None => line,
        }
    }

    pub(in crate::datasource::prometheus) fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.config.url.trim_end_matches('/'))
    }

    /// `req` with the configured credentials and headers.
    pub(in crate::datasource::prometheus) fn authorized(
        &self,
        mut req: reqwest::RequestBuilder,
    ) -> reqwest::RequestBuilder {
        req = match &self.config.auth {
            ClientAuth::None => req,
            ClientAuth::Basic { username, password } => {
                req.basic_auth(username, Some(password.expose()))
            }
            ClientAuth::Bearer(token) => req.bearer_auth(token.expose()),
        };
        for (name, value) in &self.config.headers {
            req = req.header(name.as_str(), value.as_str());
        }
        req
    }

    /// Runs `attempt` until it succeeds, fails for good, or the retries are spent; the
    /// flag of an error says whether a retry may help.
    pub(in crate::datasource::prometheus) async fn with_retries<T, F, Fut>(
        &self,
        mut attempt: F,
    ) -> Result<T, DatasourceError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, (DatasourceError, bool)>>,
    {
        let mut backoff = BACKOFF.streak();
        let mut tries = 0;
        loop {
            self.counters.requests.fetch_add(1, Ordering::Relaxed);
            match attempt().await {
                Ok(v) => return Ok(v),
                Err((err, transient)) if transient && tries < RETRIES => {
                    tracing::debug!(error = %err, attempt = tries, "transient datasource failure; retrying");
                    tokio::time::sleep(backoff.next_delay()).await;
                    tries += 1;
                }
                Err((err, _)) => return Err(err),
            }
        }
    }

    /// An instant query at `time_ms`.
    pub async fn query(
        &self,
        promql: &str,
        time_ms: i64,
    ) -> Result<Vec<RawSeries>, DatasourceError> {
        let form = [("query", promql.to_string()), ("time", seconds(time_ms))];
        self.post("api/v1/query", &form, false).await
    }

    /// An instant query of a range selector (`selector[span]`): the raw samples of each
    /// series in the span ending at `time_ms`. Anything but a matrix is refused.
    pub async fn range_selector(
        &self,
        promql: &str,
        time_ms: i64,
    ) -> Result<Vec<RawSeries>, DatasourceError> {
        let form = [("query", promql.to_string()), ("time", seconds(time_ms))];
        self.post("api/v1/query", &form, true).await
    }

    /// The datasource as messages name it: its URL without credentials.
    pub fn name(&self) -> String {
        match reqwest::Url::parse(&self.config.url) {
            Ok(mut url) => {
                let _ = url.set_username("");
                let _ = url.set_password(None);
                url.to_string()
            }
            Err(_) => "(an unreadable URL)".into(),
        }
    }

    /// A range query; the caller keeps each call within the points-per-series limit.
    pub async fn query_range(
        &self,
        promql: &str,
        start_ms: i64,
        end_ms: i64,
        step_seconds: u32,
    ) -> Result<Vec<RawSeries>, DatasourceError> {
        let form = [
            ("query", promql.to_string()),
            ("start", seconds(start_ms)),
            ("end", seconds(end_ms)),
            ("step", step_seconds.to_string()),
        ];
        self.post("api/v1/query_range", &form, false).await
    }

    /// `GET /api/v1/status/buildinfo`-free reachability: a trivial instant query.
    pub async fn ping(&self, time_ms: i64) -> Result<(), DatasourceError> {
        self.query("vector(1)", time_ms).await.map(|_| ())
    }

    async fn post(
        &self,
        path: &str,
        form: &[(&str, String)],
        matrix: bool,
    ) -> Result<Vec<RawSeries>, DatasourceError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| DatasourceError::Query("client closed".into()))?;
        let url = self.url(path);
        let body = serde_urlencoded::to_string(form)
            .map_err(|e| DatasourceError::Query(format!("cannot encode query: {e}")))?;
        self.with_retries(|| self.attempt(&url, body.clone(), matrix))
            .await
    }

    /// One HTTP attempt; the flag says whether a retry may help.
    async fn attempt(
        &self,
        url: &str,
        body: String,
        matrix: bool,
    ) -> Result<Vec<RawSeries>, (DatasourceError, bool)> {
        let req = self
            .authorized(self.http.post(url))
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        let resp = send(req).await?;
        let status = resp.status().as_u16();
        let transient = status == 429 || status >= 500;
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| (DatasourceError::Unreachable(redact(&e)), true))?;
        self.counters
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let envelope: Envelope = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(_) if status >= 400 => {
                let text = self.shown(&String::from_utf8_lossy(&bytes));
                return Err((
                    DatasourceError::Query(super::status::status_text("", status, &text)),
                    transient,
                ));
            }
            Err(e) => return Err((DatasourceError::Decode(e.to_string()), false)),
        };
        if envelope.status != "success" || status >= 400 {
            let msg = envelope
                .error
                .map_or_else(|| "no error text".into(), |e| self.shown(&e));
            return Err((
                DatasourceError::Query(super::status::status_text("", status, &msg)),
                transient,
            ));
        }
        let data = envelope
            .data
            .ok_or_else(|| (DatasourceError::Decode("answer without data".into()), false))?;
        let series = decode(data, self, matrix).map_err(|e| (e, false))?;
        let samples: usize = series.iter().map(|s| s.samples.len()).sum();
        self.counters
            .samples
            .fetch_add(samples as u64, Ordering::Relaxed);
        Ok(series)
    }
}

/// The series of an answer; with `matrix`, only a matrix of `values` lists is accepted
/// (what a range selector must give).
fn decode(data: Data, client: &Client, matrix: bool) -> Result<Vec<RawSeries>, DatasourceError> {
    let wrong = match data.result_type.as_str() {
        "matrix" => matrix && data.result.iter().any(|i| i.value.is_some()),
        "vector" => matrix,
        _ => true,
    };
    if wrong {
        let what = if matrix {
            "a range selector"
        } else {
            "a query"
        };
        return Err(DatasourceError::Decode(format!(
            "{what} was answered with a {} of the wrong shape",
            client.shown(&data.result_type)
        )));
    }
    Ok(data
        .result
        .into_iter()
        .map(|item| {
            let mut samples = item.values;
            samples.extend(item.value);
            RawSeries {
                labels: item.metric,
                samples,
            }
        })
        .collect())
}

fn seconds(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

/// A reqwest error without its URL (a URL can carry userinfo).
/// Sends `req`; refused credentials are final, a failed connection may be retried.
pub(in crate::datasource::prometheus) async fn send(
    req: reqwest::RequestBuilder,
) -> Result<reqwest::Response, (DatasourceError, bool)> {
    let resp = req
        .send()
        .await
        .map_err(|e| (DatasourceError::Unreachable(redact(&e)), true))?;
    match resp.status().as_u16() {
        code @ (401 | 403) => Err((DatasourceError::Unauthorized(code), false)),
        // Only a redirect the policy refused (to another origin) is left unfollowed.
        300..=399 => {
            let to = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|l| resp.url().join(l).ok())
                .map_or_else(|| "an unnamed location".into(), |u| origin(&u));
            Err((DatasourceError::Redirected(to), false))
        }
        _ => Ok(resp),
    }
}

/// Characters of upstream text kerf shows.
pub const SHOWN_CHARS: usize = 160;

/// `scheme://host[:port]` of `url`: no path, query or userinfo.
fn origin(url: &reqwest::Url) -> String {
    url.origin().ascii_serialization()
}

/// Redirects are followed (at most 5) only to the origin of the first request: the
/// request carries the datasource's credentials, custom headers included, which
/// reqwest would otherwise send to any host a redirect names.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(reqwest::Url::origin);
        if attempt.previous().len() > 5 {
            attempt.error("more than 5 redirects")
        } else if first == Some(attempt.url().origin()) {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Every credential value `config` makes the client send, as it appears on the wire.
fn credentials(config: &ClientConfig) -> Vec<String> {
    use base64::Engine;
    let mut out: Vec<String> = config.headers.iter().map(|(_, v)| v.clone()).collect();
    match &config.auth {
        ClientAuth::None => {}
        ClientAuth::Basic { username, password } => {
            let pair = format!("{username}:{}", password.expose());
            out.push(base64::engine::general_purpose::STANDARD.encode(&pair));
            out.push(password.expose().to_string());
        }
        ClientAuth::Bearer(token) => out.push(token.expose().to_string()),
    }
    // Longest first, so a secret containing another is masked whole; short values
    // (a tenant id of 1-3 characters) would mask ordinary words and are left.
    out.retain(|s| s.chars().count() >= 4);
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// True when `rest` starts with a token of 8 or more credential characters (so "a basic
/// query" keeps its words).
fn credential_like(rest: &str) -> bool {
    rest.bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || b"+/=._~-".contains(b))
        .count()
        >= 8
}

/// `text` with the credential-looking value after every `Basic ` / `Bearer ` (any
/// case) masked.
fn mask_auth_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let scheme = ["basic ", "bearer "]
            .iter()
            .find(|s| lower[i..].starts_with(**s))
            .map(|s| s.len());
        match scheme {
            Some(len) if credential_like(&text[i + len..]) => {
                out.push_str(&text[i..i + len]);
                out.push_str(MASK);
                i += len;
                while i < text.len() && !text.as_bytes()[i].is_ascii_whitespace() {
                    i += 1;
                }
            }
            _ => {
                let c = text[i..].chars().next().expect("inside the text");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

pub(in crate::datasource::prometheus) fn redact(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "reading the answer failed"
    } else {
        "request failed"
    };
    let mut source = std::error::Error::source(e);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {detail}")
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;

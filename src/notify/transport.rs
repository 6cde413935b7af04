//! Sending one rendered message to one channel: an HTTP POST (Slack, Teams, signed
//! webhook) or an SMTP submission (lettre: STARTTLS or TLS, AUTH). Every attempt ends in
//! an [`Outcome`] that says what the receiver answered, whether it is worth retrying, and
//! never contains a secret (URLs, signing secrets and passwords are scrubbed).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use lettre::message::{header::ContentType, Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use super::channel::{ChannelKind, ChannelSecrets, EmailSettings, SmtpSecurity, ValidChannel};
use super::message::Message;
use super::FieldError;
use super::{render, sign};
use crate::outbound::resolver::{self, Vetted};
use crate::outbound::{Policy, Purpose};
use crate::secret::destination::is_loopback;
use crate::secret::Secret;

/// Longest receiver answer kept, in characters.
const MAX_ANSWER_CHARS: usize = 512;

/// A channel ready to send to: its settings and opened secrets.
#[derive(Clone)]
pub struct Target {
    pub id: i64,
    pub name: String,
    pub kind: ChannelKind,
    pub email: Option<EmailSettings>,
    pub secrets: ChannelSecrets,
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub delivered: bool,
    /// HTTP status or SMTP reply code, when the receiver answered.
    pub status: Option<i64>,
    /// The receiver's answer (clipped, scrubbed).
    pub answer: Option<String>,
    /// Why it was not delivered (scrubbed).
    pub error: Option<String>,
    /// Retrying cannot help (a 404 webhook, a refused recipient).
    pub permanent: bool,
    /// The receiver asked to wait this long (429 Retry-After), ms.
    pub retry_after_ms: Option<i64>,
    pub duration_ms: i64,
}

impl Outcome {
    pub fn failed(error: String, permanent: bool) -> Outcome {
        Outcome {
            delivered: false,
            status: None,
            answer: None,
            error: Some(error),
            permanent,
            retry_after_ms: None,
            duration_ms: 0,
        }
    }
}

/// The HTTP client and limits every send shares.
#[derive(Clone)]
pub struct Transport {
    http: reqwest::Client,
    timeout: Duration,
    /// Where channels may send (`[outbound]`).
    policy: Arc<Policy>,
    /// Sends in flight over every channel, at most (each holds a connection).
    in_flight: Arc<Semaphore>,
}

impl Transport {
    /// A transport whose attempts each give up after `timeout`, under `policy`, at
    /// most `concurrent` at once.
    pub fn new(timeout: Duration, policy: Policy, concurrent: usize) -> Transport {
        crate::tls::install_crypto_provider();
        let policy = Arc::new(policy);
        let http = reqwest::Client::builder()
            .dns_resolver(Arc::new(Vetted {
                policy: policy.clone(),
            }))
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            // A redirect is an answer, not a new target: receivers are configured exactly.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("kerf/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("an HTTP client with the ring provider installed always builds");
        Transport {
            http,
            timeout,
            policy,
            in_flight: Arc::new(Semaphore::new(concurrent.max(1))),
        }
    }

    /// The outbound policy's word on a channel about to be saved: its URL's or SMTP
    /// server's host (names are resolved and checked again at each send).
    pub fn admits(&self, v: &ValidChannel) -> Result<(), Vec<FieldError>> {
        let checked = match (&v.email, &v.secrets.url) {
            (Some(e), _) => self
                .policy
                .check_host(&e.host, e.port, Purpose::Any)
                .map_err(|r| ("email.host", r)),
            (None, Some(url)) => self
                .policy
                .check_url(url.expose(), purpose(v.kind))
                .map_err(|r| ("url", r)),
            (None, None) => Ok(()),
        };
        checked.map_err(|(field, refused)| {
            vec![FieldError {
                field: field.into(),
                message: refused.to_string(),
            }]
        })
    }

    /// Sends `m` as delivery `delivery_id`; `now_s` signs webhooks (Unix seconds).
    pub async fn send(&self, t: &Target, m: &Message, delivery_id: &str, now_s: i64) -> Outcome {
        // Waiting for a turn is not the receiver's time: it starts once a slot is free.
        let Ok(_turn) = self.in_flight.acquire().await else {
            return Outcome::failed("the hub is shutting down".into(), false);
        };
        let started = Instant::now();
        let mut out = match t.kind {
            ChannelKind::Email => self.smtp(t, m, delivery_id).await,
            kind => self.post(t, kind, m, delivery_id, now_s).await,
        };
        out.duration_ms = started.elapsed().as_millis() as i64;
        out.error = out.error.map(|e| t.secrets.scrub(&e));
        out.answer = out.answer.map(|a| t.secrets.scrub(&a));
        out
    }

    async fn post(
        &self,
        t: &Target,
        kind: ChannelKind,
        m: &Message,
        delivery_id: &str,
        now_s: i64,
    ) -> Outcome {
        let Some(url) = t.secrets.url.as_ref().map(Secret::expose) else {
            return Outcome::failed("the channel has no URL".into(), true);
        };
        if let Err(refused) = self.policy.vet_url(url, purpose(kind)).await {
            return Outcome::failed(refused.to_string(), true);
        }
        let body = match kind {
            ChannelKind::Slack => render::slack(m, delivery_id),
            ChannelKind::Teams => render::teams(m, delivery_id),
            _ => render::webhook(m, delivery_id, (t.id, &t.name)),
        };
        let body = body.to_string().into_bytes();
        let mut req = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(sign::DELIVERY_HEADER, delivery_id)
            .header(sign::KIND_HEADER, m.kind.as_str());
        if let (ChannelKind::Webhook, Some(secret)) = (kind, &t.secrets.signing_secret) {
            req = req
                .header(sign::TIMESTAMP_HEADER, now_s.to_string())
                .header(
                    sign::SIGNATURE_HEADER,
                    sign::signature(secret.expose(), now_s, &body),
                );
        }
        let resp = match req.body(body).send().await {
            Ok(r) => r,
            Err(e) => {
                let what = if e.is_timeout() {
                    "timed out"
                } else {
                    "failed"
                };
                return Outcome::failed(
                    format!("request {what}: {}", chain(&e.without_url())),
                    false,
                );
            }
        };
        let status = resp.status();
        let retry_after_ms = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<i64>().ok())
            .map(|s| s.clamp(0, 3600) * 1000);
        let answer = match resp.text().await {
            Ok(text) => clip(&text),
            Err(e) => format!("(answer unreadable: {})", chain(&e.without_url())),
        };
        let code = status.as_u16();
        let delivered = status.is_success();
        // Timeouts, rate limits and server errors may pass; other refusals will not.
        let permanent = !(delivered || code == 408 || code == 429 || status.is_server_error());
        Outcome {
            delivered,
            status: Some(i64::from(code)),
            error: (!delivered).then(|| format!("the receiver answered {status}")),
            answer: Some(answer),
            permanent,
            retry_after_ms: (code == 429).then_some(retry_after_ms).flatten(),
            duration_ms: 0,
        }
    }

    async fn smtp(&self, t: &Target, m: &Message, delivery_id: &str) -> Outcome {
        let Some(e) = &t.email else {
            return Outcome::failed("the channel has no email settings".into(), true);
        };
        // Resolved and checked here, connected to by address: the name cannot answer
        // differently between the check and the connection.
        let addr = match resolver::resolve(&self.policy, &e.host, e.port).await {
            Ok(addrs) => addrs[0],
            Err(refused) => return Outcome::failed(refused.to_string(), true),
        };
        let (subject, text, html) = render::email(m, delivery_id);
        let email = match build_email(e, &subject, text, html, delivery_id) {
            Ok(mail) => mail,
            Err(why) => return Outcome::failed(why, true),
        };
        let transport = match smtp_transport(
            e,
            addr,
            t.secrets.smtp_password.as_ref().map(Secret::expose),
            self.timeout,
        ) {
            Ok(tr) => tr,
            Err(why) => return Outcome::failed(why, true),
        };
        match tokio::time::timeout(self.timeout, transport.send(email)).await {
            Err(_) => Outcome::failed(
                format!("the SMTP server did not finish within {:?}", self.timeout),
                false,
            ),
            Ok(Ok(resp)) => Outcome {
                delivered: true,
                status: Some(i64::from(u16::from(resp.code()))),
                answer: Some(clip(&resp.message().collect::<Vec<_>>().join(" "))),
                error: None,
                permanent: false,
                retry_after_ms: None,
                duration_ms: 0,
            },
            Ok(Err(err)) => Outcome {
                delivered: false,
                status: err.status().map(|c| i64::from(u16::from(c))),
                answer: None,
                error: Some(format!("SMTP: {}", chain(&err))),
                permanent: err.is_permanent(),
                retry_after_ms: None,
                duration_ms: 0,
            },
        }
    }
}

fn build_email(
    e: &EmailSettings,
    subject: &str,
    text: String,
    html: String,
    delivery_id: &str,
) -> Result<lettre::Message, String> {
    let from: Mailbox = e
        .from
        .parse()
        .map_err(|_| "email.from is not an address".to_string())?;
    let mut b = lettre::Message::builder()
        .from(from)
        .subject(subject)
        // The same Message-ID on every retry lets mail systems drop a repeat.
        .message_id(Some(format!("<{delivery_id}@kerf>")));
    for to in &e.to {
        b = b.to(to
            .parse()
            .map_err(|_| format!("email.to {to:?} is not an address"))?);
    }
    b.multipart(
        MultiPart::alternative()
            .singlepart(
                SinglePart::builder()
                    .header(ContentType::TEXT_PLAIN)
                    .body(text),
            )
            .singlepart(
                SinglePart::builder()
                    .header(ContentType::TEXT_HTML)
                    .body(html),
            ),
    )
    .map_err(|err| format!("cannot build the email: {err}"))
}

/// A submission to `addr` (the host's vetted address); TLS verifies the host's name.
fn smtp_transport(
    e: &EmailSettings,
    addr: SocketAddr,
    password: Option<&str>,
    timeout: Duration,
) -> Result<AsyncSmtpTransport<Tokio1Executor>, String> {
    let mut b = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(addr.ip().to_string())
        .port(addr.port())
        .timeout(Some(timeout));
    if e.security != SmtpSecurity::None {
        let mut params = TlsParameters::builder(e.host.clone());
        if let Some(pem) = &e.ca_pem {
            let cert = Certificate::from_pem(pem.as_bytes())
                .map_err(|err| format!("email.caPem: {err}"))?;
            params = params.add_root_certificate(cert);
        }
        let params = params
            .build_rustls()
            .map_err(|err| format!("TLS setup: {err}"))?;
        b = b.tls(match e.security {
            SmtpSecurity::Tls => Tls::Wrapper(params),
            _ => Tls::Required(params),
        });
    }
    if let Some(user) = &e.username {
        // Also for channels stored before validation refused it.
        if e.security == SmtpSecurity::None && !is_loopback(&e.host) {
            return Err(format!(
                "refused: the password would go without TLS to {}, which is not loopback; \
                 set email.security to starttls or tls",
                e.host
            ));
        }
        b = b.credentials(Credentials::new(
            user.clone(),
            password.unwrap_or_default().to_string(),
        ));
    }
    Ok(b.build())
}

/// The outbound purpose of a channel kind (Slack and Teams have their vendors' hosts).
pub fn purpose(kind: ChannelKind) -> Purpose {
    match kind {
        ChannelKind::Slack => Purpose::Slack,
        ChannelKind::Teams => Purpose::Teams,
        ChannelKind::Webhook | ChannelKind::Email => Purpose::Any,
    }
}

/// An error and its causes, one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(&format!(": {text}"));
        }
        src = s.source();
    }
    out
}

fn clip(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() <= MAX_ANSWER_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_ANSWER_CHARS).collect();
    out.push('…');
    out
}

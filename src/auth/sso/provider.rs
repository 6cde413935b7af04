//! The OpenID Connect provider as kerf talks to it, through the `openidconnect` crate:
//! discovery (cached, fetched again when an ID token names a key the cached JWKS
//! lacks: the provider rotated its keys), the authorization URL with PKCE and a nonce,
//! the code and refresh exchanges, ID-token verification (signature against the JWKS,
//! `iss`, `aud`, `exp`, `nonce`), userinfo, and the RP-initiated logout URL. HTTP goes
//! through kerf's reqwest client: no redirects followed, bounded time and size.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreAuthenticationFlow, CoreErrorResponseType,
    CoreGenderClaim, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm,
    CoreRevocableToken, CoreRevocationErrorResponse, CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AccessToken, AdditionalClaims, AsyncHttpClient, AuthorizationCode, ClaimsVerificationError,
    ClientId, ClientSecret, CsrfToken, EmptyExtraTokenFields, EndpointMaybeSet, EndpointNotSet,
    EndpointSet, HttpRequest, HttpResponse, IdTokenFields, IssuerUrl, LogoutRequest, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, PostLogoutRedirectUrl,
    ProviderMetadataWithLogout, RedirectUrl, RefreshToken, RequestTokenError, Scope,
    SignatureVerificationError, StandardErrorResponse, StandardTokenResponse,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clock::Clock;
use crate::config::oidc::OidcConfig;
use crate::secret::Secret;

/// Every claim of a token beyond the standard ones (groups, custom usernames).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OtherClaims {
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

impl AdditionalClaims for OtherClaims {}

type Fields = IdTokenFields<
    OtherClaims,
    EmptyExtraTokenFields,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;
type Tokens = StandardTokenResponse<Fields, CoreTokenType>;
type IdToken = openidconnect::IdToken<
    OtherClaims,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;
type Client = openidconnect::Client<
    OtherClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    Tokens,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// How long a discovery document (and its JWKS) is used before it is fetched again.
const METADATA_TTL: Duration = Duration::from_secs(3600);
/// The least time between two fetches forced by an unknown signing key.
const REFETCH_FLOOR: Duration = Duration::from_secs(10);
/// The most a provider's answer may hold.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// What went wrong with the provider, in one line that never holds a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// It could not be reached, or answered with a server error.
    #[error("the identity provider could not be reached: {0}")]
    Unreachable(String),
    /// Its discovery document or answers are not what OpenID Connect says.
    #[error("the identity provider is misconfigured: {0}")]
    Misconfigured(String),
    /// It refused (an OAuth error such as invalid_grant).
    #[error("the identity provider refused: {0}")]
    Refused(String),
    /// The ID token failed verification.
    #[error("the ID token was refused: {0}")]
    InvalidToken(String),
}

/// The provider's tokens a session keeps to re-check it later.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KeptTokens {
    #[serde(default)]
    pub refresh_token: Option<String>,
    #[serde(default)]
    pub access_token: Option<String>,
    /// The raw ID token: the logout's `id_token_hint`.
    #[serde(default)]
    pub id_token: Option<String>,
}

/// A verified sign-in: every claim of the ID token (and of userinfo when the token
/// lacked the groups), and the tokens to keep.
#[derive(Debug, Clone)]
pub struct Verified {
    pub claims: Map<String, Value>,
    pub tokens: KeptTokens,
}

/// What the browser is sent to, and what must be kept to finish.
pub struct Started {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

struct Discovered {
    metadata: ProviderMetadataWithLogout,
    fetched: Instant,
    /// When an unknown key last forced a fetch (they are spaced by `REFETCH_FLOOR`:
    /// tokens naming made-up keys cannot make kerf hammer the provider).
    forced: Option<Instant>,
}

/// One configured provider.
pub struct Provider {
    cfg: OidcConfig,
    secret: Secret,
    http: Http,
    clock: Arc<dyn Clock>,
    discovered: tokio::sync::Mutex<Option<Discovered>>,
}

impl Provider {
    pub fn new(
        cfg: OidcConfig,
        secret: Secret,
        ca_pem: Option<String>,
        clock: Arc<dyn Clock>,
    ) -> Result<Provider, String> {
        Ok(Provider {
            http: Http::new(ca_pem)?,
            cfg,
            secret,
            clock,
            discovered: tokio::sync::Mutex::new(None),
        })
    }

    pub fn config(&self) -> &OidcConfig {
        &self.cfg
    }

    /// The discovery document: cached, fetched when missing or older than an hour, or
    /// when `fresh` (a token names a key the cache lacks) and no other such fetch
    /// happened in the last `REFETCH_FLOOR`.
    async fn metadata(&self, fresh: bool) -> Result<ProviderMetadataWithLogout, ProviderError> {
        let mut cached = self.discovered.lock().await;
        let forced = fresh
            && cached
                .as_ref()
                .is_some_and(|d| d.forced.is_none_or(|f| f.elapsed() >= REFETCH_FLOOR));
        let usable = cached
            .as_ref()
            .filter(|d| d.fetched.elapsed() < METADATA_TTL && !forced);
        if let Some(d) = usable {
            return Ok(d.metadata.clone());
        }
        let before = cached.as_ref().and_then(|d| d.forced);
        let metadata = self.discover().await?;
        *cached = Some(Discovered {
            metadata: metadata.clone(),
            fetched: Instant::now(),
            forced: if forced { Some(Instant::now()) } else { before },
        });
        Ok(metadata)
    }

    /// Fetches the discovery document and the JWKS it names (`kerf config check
    /// --online` too).
    pub async fn discover(&self) -> Result<ProviderMetadataWithLogout, ProviderError> {
        let issuer = IssuerUrl::new(self.cfg.issuer.clone())
            .map_err(|e| ProviderError::Misconfigured(format!("issuer: {e}")))?;
        ProviderMetadataWithLogout::discover_async(issuer, &self.http)
            .await
            .map_err(|e| discovery_error(&e))
    }

    /// A client for `metadata`; `redirect_uri` for the authorization request and the
    /// code exchange (a refresh, userinfo and verification need none).
    fn client(
        &self,
        metadata: ProviderMetadataWithLogout,
        redirect_uri: Option<&str>,
    ) -> Result<Client, ProviderError> {
        let client = Client::from_provider_metadata(
            metadata,
            ClientId::new(self.cfg.client_id.clone()),
            Some(ClientSecret::new(self.secret.expose().to_string())),
        );
        match redirect_uri {
            None => Ok(client),
            Some(uri) => RedirectUrl::new(uri.to_string())
                .map(|r| client.set_redirect_uri(r))
                .map_err(|e| ProviderError::Misconfigured(format!("redirect URI: {e}"))),
        }
    }

    /// The authorization URL (code flow, PKCE S256, a fresh state and nonce).
    pub async fn start(&self, redirect_uri: &str) -> Result<Started, ProviderError> {
        let client = self.client(self.metadata(false).await?, Some(redirect_uri))?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut req = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in self.cfg.scopes.iter().filter(|s| *s != "openid") {
            req = req.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = req.set_pkce_challenge(challenge).url();
        Ok(Started {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// Exchanges the code (with the PKCE verifier) and verifies the ID token against
    /// `nonce`.
    pub async fn finish(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
        redirect_uri: &str,
    ) -> Result<Verified, ProviderError> {
        let client = self.client(self.metadata(false).await?, Some(redirect_uri))?;
        let tokens = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| ProviderError::Misconfigured(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_string()))
            .request_async(&self.http)
            .await
            .map_err(token_error)?;
        let id_token = tokens
            .extra_fields()
            .id_token()
            .ok_or_else(|| ProviderError::InvalidToken("the answer holds no ID token".into()))?;
        let expected = Nonce::new(nonce.to_string());
        let claims = self
            .verified(id_token, |n: Option<&Nonce>| {
                openidconnect::NonceVerifier::verify(&expected, n)
            })
            .await?;
        self.completed(claims, &tokens, &KeptTokens::default())
            .await
    }

    /// Re-checks a session: a refresh when it kept a refresh token, else userinfo with
    /// its access token. `Refused` means the provider no longer vouches for the user.
    pub async fn recheck(&self, kept: &KeptTokens) -> Result<Verified, ProviderError> {
        let client = self.client(self.metadata(false).await?, None)?;
        if let Some(refresh) = &kept.refresh_token {
            let tokens = client
                .exchange_refresh_token(&RefreshToken::new(refresh.clone()))
                .map_err(|e| ProviderError::Misconfigured(e.to_string()))?
                .request_async(&self.http)
                .await
                .map_err(token_error)?;
            let mut claims = Map::new();
            if let Some(id_token) = tokens.extra_fields().id_token() {
                // A refreshed ID token carries no nonce of kerf's.
                claims = self.verified(id_token, |_: Option<&Nonce>| Ok(())).await?;
            }
            return self.completed(claims, &tokens, kept).await;
        }
        let access = kept.access_token.clone().ok_or_else(|| {
            ProviderError::Refused("the session kept no token to re-check it with".into())
        })?;
        let info = self
            .userinfo(&client, &AccessToken::new(access.clone()))
            .await?;
        Ok(Verified {
            claims: info,
            tokens: kept.clone(),
        })
    }

    /// The verified claims of `id_token` as a JSON object. A key the cached JWKS lacks
    /// fetches the provider's keys again once (rotation), then refuses.
    async fn verified(
        &self,
        id_token: &IdToken,
        nonce: impl Fn(Option<&Nonce>) -> Result<(), String> + Clone,
    ) -> Result<Map<String, Value>, ProviderError> {
        let mut fresh = false;
        loop {
            let client = self.client(self.metadata(fresh).await?, None)?;
            let clock = self.clock.clone();
            let verifier = client.id_token_verifier().set_time_fn(move || {
                chrono::DateTime::from_timestamp_millis(clock.now_ms()).unwrap_or_default()
            });
            match id_token.claims(&verifier, nonce.clone()) {
                Ok(claims) => {
                    return match serde_json::to_value(claims) {
                        Ok(Value::Object(map)) => Ok(map),
                        _ => Err(ProviderError::InvalidToken(
                            "its claims are not an object".into(),
                        )),
                    }
                }
                Err(ClaimsVerificationError::SignatureVerification(
                    SignatureVerificationError::NoMatchingKey,
                )) if !fresh => fresh = true,
                Err(ClaimsVerificationError::SignatureVerification(inner)) => {
                    return Err(ProviderError::InvalidToken(format!(
                        "signature verification failed: {inner}"
                    )))
                }
                Err(e) => return Err(ProviderError::InvalidToken(e.to_string())),
            }
        }
    }

    /// The claims to use (userinfo's added when the ID token lacks the groups claim)
    /// and the tokens to keep: the new ones, else those `earlier` kept (a refresh may
    /// answer without a new refresh or ID token).
    async fn completed(
        &self,
        mut claims: Map<String, Value>,
        tokens: &Tokens,
        earlier: &KeptTokens,
    ) -> Result<Verified, ProviderError> {
        if !claims.contains_key(&self.cfg.groups_claim) {
            let client = self.client(self.metadata(false).await?, None)?;
            if client
                .user_info(tokens.access_token().clone(), None)
                .is_ok()
            {
                let info = self.userinfo(&client, tokens.access_token()).await?;
                if let (Some(a), Some(b)) = (claims.get("sub"), info.get("sub")) {
                    if a != b {
                        return Err(ProviderError::InvalidToken(
                            "userinfo names another subject than the ID token".into(),
                        ));
                    }
                }
                for (k, v) in info {
                    claims.entry(k).or_insert(v);
                }
            }
        }
        let id_token = tokens
            .extra_fields()
            .id_token()
            .map(|t| t.to_string())
            .or_else(|| earlier.id_token.clone());
        Ok(Verified {
            claims,
            tokens: KeptTokens {
                refresh_token: tokens
                    .refresh_token()
                    .map(|t| t.secret().clone())
                    .or_else(|| earlier.refresh_token.clone()),
                access_token: Some(tokens.access_token().secret().clone()),
                id_token,
            },
        })
    }

    async fn userinfo(
        &self,
        client: &Client,
        access: &AccessToken,
    ) -> Result<Map<String, Value>, ProviderError> {
        let req = client
            .user_info(access.clone(), None)
            .map_err(|e| ProviderError::Misconfigured(e.to_string()))?;
        let info: openidconnect::UserInfoClaims<OtherClaims, CoreGenderClaim> =
            req.request_async(&self.http).await.map_err(|e| match e {
                openidconnect::UserInfoError::Response(status, _, _)
                    if status.is_client_error() =>
                {
                    ProviderError::Refused(format!("userinfo answered {status}"))
                }
                openidconnect::UserInfoError::Request(e) => {
                    ProviderError::Unreachable(e.to_string())
                }
                other => ProviderError::Misconfigured(format!("userinfo: {other}")),
            })?;
        match serde_json::to_value(info) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(ProviderError::Misconfigured(
                "userinfo is not an object".into(),
            )),
        }
    }

    /// Where to send the browser to end the provider's session too, when it supports
    /// RP-initiated logout; back to `post_logout` afterwards.
    pub async fn logout_url(&self, kept: &KeptTokens, post_logout: &str) -> Option<String> {
        let metadata = self.metadata(false).await.ok()?;
        let end = metadata
            .additional_metadata()
            .end_session_endpoint
            .clone()?;
        let mut req = LogoutRequest::from(end)
            .set_client_id(ClientId::new(self.cfg.client_id.clone()))
            .set_state(CsrfToken::new_random());
        if let Ok(url) = PostLogoutRedirectUrl::new(post_logout.to_string()) {
            req = req.set_post_logout_redirect_uri(url);
        }
        if let Some(raw) = &kept.id_token {
            if let Ok(token) = raw.parse::<IdToken>() {
                req = req.set_id_token_hint(&token);
            }
        }
        Some(req.http_get_url().to_string())
    }
}

fn discovery_error<E: std::error::Error>(e: &openidconnect::DiscoveryError<E>) -> ProviderError {
    match e {
        openidconnect::DiscoveryError::Request(inner) => {
            ProviderError::Unreachable(inner.to_string())
        }
        openidconnect::DiscoveryError::Response(status, _, _) if status.is_server_error() => {
            ProviderError::Unreachable(format!("discovery answered {status}"))
        }
        other => ProviderError::Misconfigured(format!("discovery: {other}")),
    }
}

fn token_error<E: std::error::Error>(
    e: RequestTokenError<E, StandardErrorResponse<CoreErrorResponseType>>,
) -> ProviderError {
    match e {
        RequestTokenError::ServerResponse(r) => ProviderError::Refused(r.error().to_string()),
        RequestTokenError::Request(inner) => ProviderError::Unreachable(inner.to_string()),
        RequestTokenError::Parse(_, _) => ProviderError::Misconfigured(
            "the token endpoint's answer is not a token response".into(),
        ),
        RequestTokenError::Other(m) => ProviderError::Misconfigured(m),
    }
}

/// HTTP for the `openidconnect` crate through kerf's reqwest: redirects are not
/// followed (OAuth 2.0 forbids it for these calls), answers are bounded.
#[derive(Clone)]
pub struct Http(reqwest::Client);

/// A failed call, in one line (the URL's query never included).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpError(String);

impl Http {
    fn new(ca_pem: Option<String>) -> Result<Http, String> {
        crate::tls::install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .connect_timeout(Duration::from_secs(5));
        if let Some(pem) = ca_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|_| "auth.oidc.ca_file is not a PEM bundle".to_string())?;
            if certs.is_empty() {
                return Err("auth.oidc.ca_file holds no certificate".into());
            }
            builder = builder.tls_certs_only(certs);
        }
        builder
            .build()
            .map(Http)
            .map_err(|e| format!("HTTP client: {e}"))
    }
}

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let mut url = reqwest::Url::parse(&parts.uri.to_string())
                .map_err(|e| HttpError(format!("bad URL: {e}")))?;
            let shown = {
                url.set_query(None);
                url.to_string()
            };
            let resp = self
                .0
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .map_err(|e| HttpError(format!("{shown}: {}", e.without_url())))?;
            let status = resp.status();
            let headers = resp.headers().clone();
            let mut bytes = Vec::new();
            let mut resp = resp;
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| HttpError(format!("{shown}: {}", e.without_url())))?
            {
                if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(HttpError(format!("{shown}: the answer is over 1 MiB")));
                }
                bytes.extend_from_slice(&chunk);
            }
            let mut out = HttpResponse::new(bytes);
            *out.status_mut() = status;
            *out.headers_mut() = headers;
            Ok(out)
        })
    }
}

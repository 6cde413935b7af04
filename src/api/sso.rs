//! Single sign-on over HTTP: which sign-ins the login page offers, the redirect to the
//! provider and its answer at the callback (both browser navigations: they answer with
//! redirects, a failure to `/login?sso_error=<code>`), and the admin's view of the
//! provider and its group mappings.

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::header::{COOKIE, HOST, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::access::Access;
use super::body::read_json;
use super::config_audit::context;
use super::error::ApiError;
use super::query::params::ReasonQuery;
use super::query::Query as StrictQuery;
use super::state::AppState;
use crate::auth::session;
use crate::auth::sso::mappings::{self, MappingView};
use crate::auth::sso::{self, Callback, Sso, SsoError, BROWSER_COOKIE, CALLBACK_PATH};

/// How a browser may sign in here (the login page's first question).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignInOptions {
    /// The identity provider, when one is configured.
    pub oidc: Option<OidcOption>,
    /// `everyone`, or `break-glass-only` (only named local admins use a password).
    pub password_login: &'static str,
}

/// The identity provider as the login page offers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OidcOption {
    /// "Sign in with <name>".
    pub name: String,
    /// Where the button goes (add `?return=/path`).
    pub login_url: &'static str,
}

/// `GET /v1/auth/sign-in-options`.
#[utoipa::path(
    get,
    path = "/v1/auth/sign-in-options",
    summary = "How one may sign in: the identity provider (if any) and who may use a password.",
    responses(
        (status = 200, description = "The sign-in options.", body = SignInOptions),
    )
)]
pub async fn sign_in_options(State(state): State<AppState>) -> Json<SignInOptions> {
    let password_login = state.config.auth.password_login.as_str();
    Json(SignInOptions {
        oidc: state.auth.sso.get().map(|s| OidcOption {
            name: s.name().to_string(),
            login_url: "/v1/auth/oidc/login",
        }),
        password_login,
    })
}

/// `?return=`: where to go once signed in (a path on this host).
#[derive(Debug, Default, Deserialize)]
pub struct LoginQuery {
    #[serde(rename = "return")]
    pub return_to: Option<String>,
}

/// `GET /v1/auth/oidc/login[?return=/path]`.
#[utoipa::path(
    get,
    path = "/v1/auth/oidc/login",
    summary = "Start signing in through the identity provider (a browser navigation).",
    description = "303 to the provider's authorization endpoint (code flow, PKCE S256, state and nonce), setting the kerf_sso cookie that binds the sign-in to this browser for 10 minutes. `return` is a path on this host to land on afterwards (anything else lands on /). When the provider cannot be reached: 303 to /login?sso_error=provider_unreachable. 404 not_found when no provider is configured.",
    params(("return" = Option<String>, Query, description = "A path on this host to return to")),
    responses(
        (status = 303, description = "To the provider (or to the login page with the reason it could not start)."),
        (status = 404, description = "No identity provider is configured.", body = super::error::ErrorBody),
    )
)]
pub async fn oidc_login(
    State(state): State<AppState>,
    Query(q): Query<LoginQuery>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let sso = provider(&state)?;
    let redirect_uri = format!("{}{CALLBACK_PATH}", origin(&state, &headers, &uri));
    let back = sso::safe_return(q.return_to.as_deref());
    match sso
        .begin(&state.store, state.now(), &redirect_uri, &back)
        .await
    {
        Ok(begun) => {
            let secure = state.config.tls_enabled();
            let cookie = format!(
                "{BROWSER_COOKIE}={}; Path=/v1/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=600{}",
                begun.browser,
                if secure { "; Secure" } else { "" }
            );
            redirect(&begun.url, Some(cookie))
        }
        Err(e) => refused(e),
    }
}

/// `GET /v1/auth/oidc/callback`.
#[utoipa::path(
    get,
    path = "/v1/auth/oidc/callback",
    summary = "The identity provider's answer (a browser navigation).",
    description = "Checks the state (known, unused, younger than 10 minutes, started by this browser: the kerf_sso cookie), exchanges the code with the PKCE verifier, verifies the ID token (signature against the provider's JWKS, iss, aud, exp, nonce), maps the groups to roles and opens a session: 303 to the return path with kerf_session set. Any failure opens no session: 303 to /login?sso_error=<code> (provider_unreachable, provider_misconfigured, provider_refused, invalid_id_token, invalid_state, other_browser, missing_claim, no_mapped_group, user_disabled, username_taken), the reason logged in one line.",
    params(
        ("code" = Option<String>, Query, description = "The authorization code"),
        ("state" = Option<String>, Query, description = "The state kerf sent"),
        ("error" = Option<String>, Query, description = "The provider's OAuth error"),
    ),
    responses(
        (status = 303, description = "Signed in (to the return path), or refused (to the login page with the reason)."),
        (status = 404, description = "No identity provider is configured.", body = super::error::ErrorBody),
    )
)]
pub async fn oidc_callback(
    State(state): State<AppState>,
    Query(answer): Query<Callback>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let sso = provider(&state)?;
    let browser = cookie(&headers, BROWSER_COOKIE);
    let previous = cookie(&headers, session::COOKIE);
    let secure = state.config.tls_enabled();
    let clear = format!(
        "{BROWSER_COOKIE}=; Path=/v1/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=0{}",
        if secure { "; Secure" } else { "" }
    );
    match sso
        .finish(
            &state.auth,
            &state.store,
            answer,
            browser.as_deref(),
            previous,
        )
        .await
    {
        Ok((done, back)) => {
            let max_age = state.auth.lifetimes.absolute_ms / 1000;
            let mut resp = redirect(&back, Some(clear))?;
            resp.headers_mut().append(
                SET_COOKIE,
                HeaderValue::from_str(&session::cookie(&done.session_value, max_age, secure))
                    .map_err(ApiError::internal)?,
            );
            Ok(resp)
        }
        Err(e) => {
            let mut resp = refused(e)?;
            resp.headers_mut().append(
                SET_COOKIE,
                HeaderValue::from_str(&clear).map_err(ApiError::internal)?,
            );
            Ok(resp)
        }
    }
}

/// The provider and its mappings, for the admin.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SsoSettings {
    pub configured: bool,
    /// `[auth.oidc]` as configured (no secret); `null` when not configured.
    pub provider: Option<ProviderView>,
    /// Every mapping in force: the config file's (`source: config`) and the UI's.
    pub mappings: Vec<MappingView>,
    pub password_login: &'static str,
    pub break_glass_users: Vec<String>,
}

/// The configured provider (never the client secret).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderView {
    pub name: String,
    pub issuer: String,
    pub client_id: String,
    pub scopes: Vec<String>,
    pub username_claim: String,
    pub groups_claim: String,
    pub recheck_seconds: u64,
    /// The redirect URI to register with the provider.
    pub redirect_uri: String,
    /// The post-logout redirect URI to register, for RP-initiated logout.
    pub post_logout_redirect_uri: String,
}

/// `GET /v1/admin/sso`.
#[utoipa::path(
    get,
    path = "/v1/admin/sso",
    summary = "The identity provider as configured and the group mappings in force.",
    responses(
        (status = 200, description = "The single sign-on settings.", body = SsoSettings),
    )
)]
pub async fn get_settings(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Json<SsoSettings>, ApiError> {
    let here = origin(&state, &headers, &uri);
    let a = &state.config.auth;
    let (provider, mappings) = match &a.oidc {
        Some(cfg) => (
            Some(ProviderView {
                name: cfg.name.clone(),
                issuer: cfg.issuer.clone(),
                client_id: cfg.client_id.clone(),
                scopes: cfg.scopes.clone(),
                username_claim: cfg.username_claim.clone(),
                groups_claim: cfg.groups_claim.clone(),
                recheck_seconds: cfg.recheck_seconds,
                redirect_uri: format!("{here}{CALLBACK_PATH}"),
                post_logout_redirect_uri: format!("{here}/login"),
            }),
            mappings::list(&state.store, cfg).await?,
        ),
        None => (None, Vec::new()),
    };
    Ok(Json(SsoSettings {
        configured: provider.is_some(),
        provider,
        mappings,
        password_login: a.password_login.as_str(),
        break_glass_users: a.break_glass_users.clone(),
    }))
}

/// The body of `PUT /v1/admin/sso/mappings`.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MappingsBody {
    /// The UI's mappings, all of them (config-file mappings are not sent).
    pub mappings: Vec<MappingView>,
}

/// `PUT /v1/admin/sso/mappings[?reason=…]`.
#[utoipa::path(
    put,
    path = "/v1/admin/sso/mappings",
    summary = "Replace the group mappings set in the UI (audited SsoMappingsUpdated). Each maps a provider group to a fleet role, or to a team role in a named team; they apply at each user's next sign-in or re-check.",
    params(("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)")),
    request_body = MappingsBody,
    responses(
        (status = 200, description = "Every mapping in force.", body = Vec<MappingView>),
        (status = 400, description = "A mapping is invalid (invalid_field names it).", body = super::error::ErrorBody),
        (status = 409, description = "No identity provider is configured (sso_not_configured).", body = super::error::ErrorBody),
    )
)]
pub async fn put_mappings(
    State(state): State<AppState>,
    access: Access,
    StrictQuery(q): StrictQuery<ReasonQuery>,
    body: Body,
) -> Result<Json<Vec<MappingView>>, ApiError> {
    let ctx = context(&access, q.reason)?;
    let body: MappingsBody = read_json(body).await?;
    let Some(cfg) = &state.config.auth.oidc else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "sso_not_configured",
            "no identity provider is configured: set [auth.oidc] in the config file first",
        ));
    };
    Ok(Json(
        mappings::replace(&state.store, cfg, state.now(), ctx, body.mappings).await?,
    ))
}

fn provider(state: &AppState) -> Result<&std::sync::Arc<Sso>, ApiError> {
    state
        .auth
        .sso
        .get()
        .ok_or_else(|| ApiError::not_found("no identity provider is configured"))
}

/// A sign-in that did not happen: logged in one line, the browser sent to the login
/// page with the reason's code.
fn refused(e: SsoError) -> Result<Response, ApiError> {
    match &e {
        SsoError::Store(inner) => tracing::error!(error = %inner, "single sign-on failed"),
        _ => tracing::warn!(code = e.code(), reason = %e, "single sign-on refused"),
    }
    redirect(&format!("/login?sso_error={}", e.code()), None)
}

fn redirect(to: &str, cookie: Option<String>) -> Result<Response, ApiError> {
    let mut resp = StatusCode::SEE_OTHER.into_response();
    resp.headers_mut().insert(
        LOCATION,
        HeaderValue::from_str(to).map_err(ApiError::internal)?,
    );
    resp.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-store"),
    );
    if let Some(c) = cookie {
        resp.headers_mut().append(
            SET_COOKIE,
            HeaderValue::from_str(&c).map_err(ApiError::internal)?,
        );
    }
    Ok(resp)
}

/// The value of cookie `name`, if sent.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, v)| *k == name && !v.is_empty())
        .map(|(_, v)| v.trim().to_string())
}

/// This hub's origin as the browser reaches it: `notifications.public_url` when set,
/// else the request's host (the provider only redirects to URIs registered with it).
pub(super) fn origin(state: &AppState, headers: &HeaderMap, uri: &Uri) -> String {
    let configured = state.config.notifications.public_url.trim_end_matches('/');
    if !configured.is_empty() {
        return configured.to_string();
    }
    let host = headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| uri.authority().map(|a| a.to_string()));
    match host {
        Some(h) => format!(
            "{}://{h}",
            if state.config.tls_enabled() {
                "https"
            } else {
                "http"
            }
        ),
        None => state.config.public_url(),
    }
}

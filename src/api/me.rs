//! Signing in and out, and `GET /v1/me`: who am I, my roles, my teams (the UI's first
//! call), plus the CSRF token cookie-authenticated changes must echo.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_TYPE, COOKIE, HOST, ORIGIN, RETRY_AFTER, SET_COOKIE,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use super::access::Access;
use super::body::read_json;
use super::error::ApiError;
use super::state::AppState;

/// `Sec-Fetch-Site`: where the browser says a request comes from.
const SEC_FETCH_SITE: &str = "sec-fetch-site";
use crate::auth::{session, Caller, CallerKind, LockScope, LoginError, TeamGrant};

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    #[schema(min_length = 1, max_length = 64)]
    username: String,
    /// At most `auth::password::MAX_LEN` characters.
    #[schema(max_length = 256)]
    password: String,
}

/// `POST /v1/auth/login`: checks the password (bounded, rate-limited) and opens a new
/// session; any session cookie sent along is ended first.
#[utoipa::path(
    post,
    path = "/v1/auth/login",
    summary = "Sign in with a username and password; sets the session cookie.",
    description = "Body {username, password}. 200 returns Me plus csrfToken and sets kerf_session (rotated: a session cookie sent along is ended). 401 invalid_credentials; 429 too_many_attempts with Retry-After once the account has too many failed logins from this address (or the address from all accounts) inside auth.login_window_seconds, or while a much-guessed account is slowed; 503 busy when password checks are saturated. Login CSRF is refused: a body that is not application/json is 415 unsupported_media_type, and a request whose Origin is not this host or whose Sec-Fetch-Site is not same-origin/none is 403 cross_site.",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Signed in: who, with the session's CSRF token (not cached).", body = Me),
        (status = 401, description = "Wrong username or password, or a disabled user (invalid_credentials; the answer does not say which).", body = super::error::ErrorBody),
        (status = 403, description = "A cross-site request (Origin or Sec-Fetch-Site of another site).", body = super::error::ErrorBody),
        (status = 415, description = "An error.", body = super::error::ErrorBody),
        (status = 429, description = "An error.", body = super::error::ErrorBody),
        (status = 503, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn login(
    State(state): State<AppState>,
    connect: Option<Extension<ConnectInfo<SocketAddr>>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    same_origin_json(&headers, &uri)?;
    let req: LoginRequest = read_json(body).await?;
    let chars = req.username.chars().count();
    if chars == 0 || chars > 64 {
        return Err(ApiError::invalid_field(
            "username",
            "must be 1 to 64 characters",
        ));
    }
    if req.password.chars().count() > crate::auth::password::MAX_LEN {
        return Err(ApiError::invalid_field("password", "is too long"));
    }
    let addr = connect
        .map(|c| c.0 .0.ip())
        .unwrap_or(std::net::IpAddr::from([0, 0, 0, 0]));
    let previous = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|h| session::from_cookie_header(h).map(str::to_string));
    let done = state
        .auth
        .login(&state.store, &req.username, req.password, addr, previous)
        .await
        .map_err(login_error)?;
    let secure = state.config.tls_enabled();
    let max_age = state.auth.lifetimes.absolute_ms / 1000;
    let cookie = session::cookie(&done.session_value, max_age, secure);
    let user_id = done.user.id;
    let teams = state
        .store
        .reading(move |r| r.grants_for_user(user_id))
        .await?;
    let caller = Caller {
        kind: CallerKind::User,
        id: done.user.id,
        name: done.user.username.clone(),
        fleet_role: done
            .user
            .role
            .as_deref()
            .and_then(crate::auth::FleetRole::parse),
        teams: teams
            .into_iter()
            .filter_map(TeamGrant::from_record)
            .collect(),
        session: None,
    };
    let mut resp = not_cached(Json(me(&caller, Some(done.csrf_token))));
    resp.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(ApiError::internal)?,
    );
    Ok(resp)
}

/// Login CSRF: a hostile page can post a form or a `text/plain` body cross-site, but
/// not `application/json` without a CORS preflight (which kerf never grants); and a
/// browser that says where the request comes from must say it comes from here.
fn same_origin_json(headers: &HeaderMap, uri: &axum::http::Uri) -> Result<(), ApiError> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let is_json = text(CONTENT_TYPE.as_str())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "login takes a JSON body: send Content-Type: application/json",
        ));
    }
    let cross_site = || {
        ApiError::forbidden("login is accepted only from kerf's own pages").with_code("cross_site")
    };
    if text(SEC_FETCH_SITE).is_some_and(|s| s != "same-origin" && s != "none") {
        return Err(cross_site());
    }
    if let Some(origin) = text(ORIGIN.as_str()) {
        // HTTP/1 names the host in `Host`, HTTP/2 in the request's authority.
        let here = text(HOST.as_str()).or_else(|| uri.authority().map(|a| a.as_str()));
        let host = origin.split_once("://").map(|(_, h)| h);
        if host.is_none() || host != here {
            return Err(cross_site());
        }
    }
    Ok(())
}

fn login_error(e: LoginError) -> ApiError {
    match e {
        LoginError::Invalid => {
            ApiError::unauthorized("invalid username or password").with_code("invalid_credentials")
        }
        LoginError::Locked(l) => {
            let why = match l.scope {
                LockScope::Account => "too many failed logins for this account from your address",
                LockScope::Address => "too many failed logins from your address",
                LockScope::Slowed => {
                    "this account is slowed after many failed logins from many addresses"
                }
            };
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_attempts",
                format!("{why}; try again in {} seconds", l.retry_after_secs),
            )
            .with_details(json!({ "retryAfterSeconds": l.retry_after_secs }))
            .with_header(RETRY_AFTER, l.retry_after_secs.to_string())
        }
        LoginError::Busy => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "too many logins in progress; retry in a second",
        )
        .with_header(RETRY_AFTER, "1".into()),
        LoginError::Store(s) => ApiError::from(s),
        LoginError::Task(t) => ApiError::internal(t),
        e @ LoginError::PasswordLoginOff(_) => {
            ApiError::forbidden(e.to_string()).with_code("password_login_disabled")
        }
    }
}

/// `POST /v1/auth/logout`: ends the session server-side and clears the cookie.
#[utoipa::path(
    post,
    path = "/v1/auth/logout",
    summary = "End the session server-side and clear the cookie.",
    description = "204 when signed out. A session opened through an identity provider that supports RP-initiated logout answers 200 with providerLogoutUrl: send the browser there to end the provider's session too (it returns to /login).",
    responses(
        (status = 200, description = "Signed out of kerf; the provider's session ends at providerLogoutUrl.", body = LoggedOut),
        (status = 204, description = "Signed out."),
    )
)]
pub async fn logout(
    State(state): State<AppState>,
    access: Access,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut provider_logout = None;
    if let Some(s) = access.caller().and_then(|c| c.session.as_ref()) {
        let digest = s.id_sha256.clone();
        if let Some(sso) = state.auth.sso.get() {
            let back = format!("{}/login", super::sso::origin(&state, &headers, &uri));
            provider_logout = sso.logout_url(&state.store, &digest, &back).await;
        }
        state
            .store
            .writing(move |tx| tx.delete_session(&digest))
            .await?;
    }
    let mut resp = match provider_logout {
        Some(url) => not_cached(Json(LoggedOut {
            provider_logout_url: url,
        })),
        None => StatusCode::NO_CONTENT.into_response(),
    };
    let clear = session::clear_cookie(state.config.tls_enabled());
    resp.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_str(&clear).map_err(ApiError::internal)?,
    );
    Ok(resp)
}

/// `GET /v1/me`.
#[utoipa::path(
    get,
    path = "/v1/me",
    summary = "Who am I: roles, teams, and (sessions) the CSRF token.",
    responses(
        (status = 200, description = "Who the caller is (not cached).", body = Me),
    )
)]
pub async fn get_me(access: Access) -> Result<Response, ApiError> {
    let caller = access
        .caller()
        .ok_or_else(|| ApiError::internal("GET /v1/me reached without a caller"))?;
    Ok(not_cached(Json(session_me(caller))))
}

/// `GET /v1/session`: whether the caller is signed in, and as whom. The UI asks this
/// before anyone has signed in, so a signed-out browser gets a 200 (and no error in its
/// console) where `GET /v1/me` answers 401.
#[utoipa::path(
    get,
    path = "/v1/session",
    summary = "Whether the caller is signed in, and as whom (200 either way).",
    responses(
        (status = 200, description = "The caller's session state (not cached).", body = SessionState),
    )
)]
pub async fn get_session(access: Access) -> Response {
    let me = access.caller().map(session_me);
    not_cached(Json(SessionState {
        signed_in: me.is_some(),
        me,
    }))
}

/// Who `caller` is, with their session's CSRF token (none for an API token).
fn session_me(caller: &Caller) -> Me {
    let csrf_token = caller.session.as_ref().map(|s| s.csrf_token.clone());
    me(caller, csrf_token)
}

/// `answer`, marked never to be cached (it says who is signed in).
fn not_cached(answer: impl IntoResponse) -> Response {
    let mut resp = answer.into_response();
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// The answer of a logout that should also end the identity provider's session.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoggedOut {
    /// Send the browser here (RP-initiated logout); it comes back to `/login`.
    pub provider_logout_url: String,
}

/// The answer of `GET /v1/session`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// A valid session cookie or API token came with the request.
    pub signed_in: bool,
    /// Who, as `GET /v1/me` says it; `null` when signed out.
    pub me: Option<Me>,
}

/// Who the caller is: `GET /v1/me` and the answer of a login.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    /// `user` or `token`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: String,
    pub name: String,
    /// The fleet role (`admin`, `editor`, `viewer`), `null` without one.
    pub role: Option<&'static str>,
    pub teams: Vec<MeTeam>,
    /// Sessions only: echo it in X-CSRF-Token on every change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csrf_token: Option<String>,
}

/// One team of the caller, with their role in it.
#[derive(Debug, Serialize, ToSchema)]
pub struct MeTeam {
    pub id: String,
    pub name: String,
    pub role: &'static str,
    pub namespaces: Vec<MeNamespace>,
}

/// A namespace pattern of a team.
#[derive(Debug, Serialize, ToSchema)]
pub struct MeNamespace {
    pub cluster: String,
    pub namespace: String,
}

fn me(c: &Caller, csrf_token: Option<String>) -> Me {
    Me {
        kind: match c.kind {
            CallerKind::User => "user",
            CallerKind::Token => "token",
        },
        id: c.id.to_string(),
        name: c.name.clone(),
        role: c.fleet_role.map(|r| r.as_str()),
        teams: c
            .teams
            .iter()
            .map(|g| MeTeam {
                id: g.team_id.to_string(),
                name: g.team_name.clone(),
                role: g.role.as_str(),
                namespaces: g
                    .namespaces
                    .iter()
                    .map(|p| MeNamespace {
                        cluster: p.cluster.clone(),
                        namespace: p.namespace.clone(),
                    })
                    .collect(),
            })
            .collect(),
        csrf_token,
    }
}

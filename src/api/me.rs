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
use serde_json::{json, Value};

use super::access::Access;
use super::body::read_json;
use super::error::ApiError;
use super::AppState;

/// `Sec-Fetch-Site`: where the browser says a request comes from.
const SEC_FETCH_SITE: &str = "sec-fetch-site";
use crate::auth::{session, Caller, CallerKind, LockScope, LoginError, TeamGrant};

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    username: String,
    password: String,
}

/// `POST /v1/auth/login`: checks the password (bounded, rate-limited) and opens a new
/// session; any session cookie sent along is ended first.
pub async fn login(
    State(state): State<AppState>,
    connect: Option<Extension<ConnectInfo<SocketAddr>>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    same_origin_json(&headers, &uri)?;
    let req: LoginRequest = read_json(body).await?;
    if req.username.is_empty() || req.username.len() > 64 {
        return Err(ApiError::invalid_field(
            "username",
            "must be 1 to 64 characters",
        ));
    }
    if req.password.len() > crate::auth::password::MAX_LEN {
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
    let teams = state.store.grants_for_user(done.user.id).await?;
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
    let mut body = me_json(&caller);
    body["csrfToken"] = Value::String(done.csrf_token);
    let mut resp = Json(body).into_response();
    let h = resp.headers_mut();
    h.insert(
        SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(ApiError::internal)?,
    );
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
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
    }
}

/// `POST /v1/auth/logout`: ends the session server-side and clears the cookie.
pub async fn logout(State(state): State<AppState>, access: Access) -> Result<Response, ApiError> {
    if let Some(s) = access.caller().and_then(|c| c.session.as_ref()) {
        state.store.delete_session(s.id_sha256.clone()).await?;
    }
    let mut resp = StatusCode::NO_CONTENT.into_response();
    let clear = session::clear_cookie(state.config.tls_enabled());
    resp.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_str(&clear).map_err(ApiError::internal)?,
    );
    Ok(resp)
}

/// `GET /v1/me`.
pub async fn get_me(access: Access) -> Result<Response, ApiError> {
    let caller = access
        .caller()
        .ok_or_else(|| ApiError::internal("GET /v1/me reached without a caller"))?;
    let mut body = me_json(caller);
    if let Some(s) = &caller.session {
        body["csrfToken"] = Value::String(s.csrf_token.clone());
    }
    let mut resp = Json(body).into_response();
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(resp)
}

fn me_json(c: &Caller) -> Value {
    json!({
        "type": match c.kind { CallerKind::User => "user", CallerKind::Token => "token" },
        "id": c.id.to_string(),
        "name": c.name,
        "role": c.fleet_role.map(|r| r.as_str()),
        "teams": c.teams.iter().map(|g| json!({
            "id": g.team_id.to_string(),
            "name": g.team_name,
            "role": g.role.as_str(),
            "namespaces": g.namespaces.iter()
                .map(|p| json!({"cluster": p.cluster, "namespace": p.namespace}))
                .collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

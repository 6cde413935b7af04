//! Authorization in one place: every route is registered with the permission it needs,
//! and one guard enforces it before the handler runs. The guard authenticates (bearer
//! token, else session cookie), enforces CSRF on cookie-borne mutations, decides, and
//! hands the handler an [`Access`]: who is calling and which role allowed it.

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{FromRequestParts, RawPathParams, Request, State};
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::error::ApiError;
use super::state::AppState;
use crate::auth::{
    resolve_bearer, session, Caller, CallerKind, FleetRole, Principal, TeamGrant, TeamRole,
};
use crate::events::config_change::{Actor, ActorKind, ActorTeam};
use crate::store::NamespacePattern;

/// What a route requires of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Anyone, no credentials (health, metrics, the API document, login).
    Public,
    /// Anyone; valid credentials are seen ([`Access::caller`]), and missing, unknown or
    /// ended ones are not an error (`GET /v1/session`: a signed-out browser asks who is
    /// signed in and gets a 200, not a 401).
    Optional,
    /// Any signed-in user or API token, whatever its role (`/v1/me`, logout).
    Authenticated,
    /// Any fleet role (`viewer`, `editor`, `admin`): read-only fleet data.
    Viewer,
    /// `editor` or `admin`: policies, overrides, approvals, pause/resume, channels.
    Editor,
    /// `admin` only: users, tokens, teams, datasources, settings.
    Admin,
    /// Workload reads: any fleet role, or any team role whose namespaces cover the
    /// route's `{cluster}` + `{namespace}`. On routes without those segments team members
    /// pass and the handler must filter with [`Access::namespace_scope`].
    WorkloadRead,
    /// Workload changes (overrides, approvals): fleet `editor`/`admin`, or `team-editor`/
    /// `team-admin` covering the route's `{cluster}` + `{namespace}` (without them, the
    /// handler checks [`Access::may_write`] for the workload's namespace).
    WorkloadWrite,
    /// Team administration: fleet `admin`, or `team-admin` of the team in `{id}`.
    TeamAdmin,
    /// The agent token of the cluster named by the route's `{cluster}` segment.
    ClusterAgent,
    /// `/metrics`: anyone, unless `http.metrics_require_token` is set; then any fleet
    /// role (its labels name clusters).
    Metrics,
}

impl Permission {
    /// Every permission, for tests and documents that enumerate them.
    pub const ALL: [Permission; 11] = [
        Permission::Public,
        Permission::Optional,
        Permission::Authenticated,
        Permission::Viewer,
        Permission::Editor,
        Permission::Admin,
        Permission::WorkloadRead,
        Permission::WorkloadWrite,
        Permission::TeamAdmin,
        Permission::ClusterAgent,
        Permission::Metrics,
    ];

    /// The name used in the OpenAPI document (`x-kerf-permission`).
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Public => "public",
            Permission::Optional => "optional",
            Permission::Authenticated => "authenticated",
            Permission::Viewer => "viewer",
            Permission::Editor => "editor",
            Permission::Admin => "admin",
            Permission::WorkloadRead => "workload-read",
            Permission::WorkloadWrite => "workload-write",
            Permission::TeamAdmin => "team-admin",
            Permission::ClusterAgent => "cluster-agent",
            Permission::Metrics => "metrics",
        }
    }
}

/// Which role let a request through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    Public,
    /// The caller's fleet role (or, for `Authenticated`, just being signed in).
    Fleet,
    /// Team roles: the grants that apply.
    Teams(Vec<TeamGrant>),
    Cluster,
}

/// What the guard decided, for the handler.
#[derive(Debug, Clone)]
pub struct Access {
    pub principal: Option<Principal>,
    pub via: Via,
}

/// Response marker: the guard ran for this route (checked by `api::require_guard`).
#[derive(Debug, Clone, Copy)]
pub struct Guarded(pub Permission);

impl Access {
    /// The calling user or token, if any.
    pub fn caller(&self) -> Option<&Caller> {
        match &self.principal {
            Some(Principal::Caller(c)) => Some(c),
            _ => None,
        }
    }

    /// The actor recorded for a change made by this request; `teams` lists the teams
    /// whose role allowed it.
    pub fn actor(&self) -> Actor {
        let teams = match &self.via {
            Via::Teams(grants) => grants
                .iter()
                .map(|g| ActorTeam {
                    id: g.team_id.to_string(),
                    name: g.team_name.clone(),
                })
                .collect(),
            _ => Vec::new(),
        };
        match &self.principal {
            Some(Principal::Caller(c)) => Actor {
                kind: match c.kind {
                    CallerKind::User => ActorKind::User,
                    CallerKind::Token => ActorKind::Token,
                },
                id: Some(c.id.to_string()),
                name: c.name.clone(),
                teams,
            },
            Some(Principal::Cluster { name }) => Actor::system(&format!("cluster agent {name}")),
            None => Actor::system("anonymous"),
        }
    }

    /// The namespaces a workload read may return: `None` means all of them.
    pub fn namespace_scope(&self) -> Option<Vec<NamespacePattern>> {
        match &self.via {
            Via::Teams(grants) => Some(grants.iter().flat_map(|g| g.namespaces.clone()).collect()),
            _ => None,
        }
    }

    /// True when this caller may read workloads in `cluster`/`namespace`.
    pub fn may_read(&self, cluster: &str, namespace: &str) -> bool {
        self.caller().is_some_and(|c| {
            c.has_fleet(FleetRole::Viewer)
                || c.grants_at_least(TeamRole::Viewer)
                    .any(|g| g.covers(cluster, namespace))
        })
    }

    /// True when this caller may change workloads in `cluster`/`namespace`.
    pub fn may_write(&self, cluster: &str, namespace: &str) -> bool {
        self.caller().is_some_and(|c| {
            c.has_fleet(FleetRole::Editor)
                || c.grants_at_least(TeamRole::Editor)
                    .any(|g| g.covers(cluster, namespace))
        })
    }

    /// `text` (a run's error, a readiness reason, …) as this caller may read it: fleet
    /// editors and admins read what a datasource said; everyone else its category and
    /// status (`datasource::category`, docs/security.md).
    pub fn datasource_text<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        if self
            .caller()
            .is_some_and(|c| c.has_fleet(FleetRole::Editor))
        {
            std::borrow::Cow::Borrowed(text)
        } else {
            crate::datasource::category::for_viewers(text)
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Access {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Access>()
            .cloned()
            .ok_or_else(|| ApiError::internal("handler reached without the access guard"))
    }
}

/// The guard run before every handler. Every answer it gives, refusals included,
/// carries the [`Guarded`] marker that `api::require_guard` checks.
pub async fn guard(
    State((state, permission)): State<(AppState, Permission)>,
    params: Result<RawPathParams, RawPathParamsRejection>,
    mut req: Request,
    next: Next,
) -> Response {
    let admitted = match params {
        Ok(params) => admit(&state, permission, Presented::of(&req, &params)).await,
        // A segment that is not UTF-8 names nothing that exists: the client's mistake.
        Err(_) => Err(ApiError::bad_request(
            "invalid_path",
            "a path segment is not valid UTF-8 once percent-decoded",
        )),
    };
    let mut resp = match admitted {
        Ok(access) => {
            if let Some(p) = &access.principal {
                req.extensions_mut().insert(p.clone());
            }
            req.extensions_mut().insert(access);
            next.run(req).await
        }
        Err(e) => e.into_response(),
    };
    resp.extensions_mut().insert(Guarded(permission));
    resp
}

/// What the request presents, copied out of it (the request body is not `Sync`, so no
/// borrow of the request may be held across an await).
struct Presented {
    bearer: Result<Option<String>, ApiError>,
    cookie: Option<String>,
    unsafe_method: bool,
    csrf_sent: Vec<u8>,
    params: Vec<(String, String)>,
}

impl Presented {
    fn of(req: &Request, params: &RawPathParams) -> Presented {
        Presented {
            bearer: bearer_token(req),
            cookie: session_cookie(req),
            unsafe_method: !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS),
            csrf_sent: req
                .headers()
                .get(session::CSRF_HEADER)
                .map(|v| v.as_bytes().to_vec())
                .unwrap_or_default(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}

/// Authenticates, checks CSRF and decides.
async fn admit(state: &AppState, permission: Permission, p: Presented) -> Result<Access, ApiError> {
    let public_metrics =
        permission == Permission::Metrics && !state.config.http.metrics_require_token;
    if permission == Permission::Public || public_metrics {
        return Ok(Access {
            principal: None,
            via: Via::Public,
        });
    }
    if permission == Permission::Optional {
        let presented = (p.bearer.ok().flatten(), p.cookie);
        let principal = match presented {
            (None, None) => None,
            (bearer, cookie) => match authenticate(state, bearer, cookie).await {
                Ok(principal) => Some(principal),
                Err(e) if e.status == axum::http::StatusCode::UNAUTHORIZED => None,
                Err(e) => return Err(e),
            },
        };
        return Ok(Access {
            principal,
            via: Via::Public,
        });
    }
    let principal = authenticate(state, p.bearer?, p.cookie).await?;
    if let Principal::Caller(Caller {
        session: Some(s), ..
    }) = &principal
    {
        if p.unsafe_method {
            check_csrf(&p.csrf_sent, &s.csrf_token)?;
        }
    }
    let param = |name: &str| {
        p.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let via = decide(permission, &principal, &param)?;
    Ok(Access {
        principal: Some(principal),
        via,
    })
}

/// The session cookie's value, owned (no borrow of the request across an await).
fn session_cookie(req: &Request) -> Option<String> {
    req.headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|h| session::from_cookie_header(h).map(str::to_string))
}

/// Bearer token first; else the session cookie; else 401.
async fn authenticate(
    state: &AppState,
    bearer: Option<String>,
    cookie: Option<String>,
) -> Result<Principal, ApiError> {
    if let Some(bearer) = bearer {
        let touches = &state.auth.touches;
        return Ok(resolve_bearer(&state.store, touches, &bearer, state.now()).await?);
    }
    match cookie {
        Some(value) => Ok(state.auth.resolve_session(&state.store, &value).await?),
        None => Err(ApiError::unauthorized(
            "sign in first: send a bearer token or the session cookie",
        )),
    }
}

fn check_csrf(sent: &[u8], expected: &str) -> Result<(), ApiError> {
    if sent.len() == expected.len() && bool::from(sent.ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            "csrf_failed",
            "cookie-authenticated changes need the X-CSRF-Token header from login or GET /v1/me",
        ))
    }
}

/// The decision table. `param` reads the route's path segments.
pub fn decide(
    permission: Permission,
    principal: &Principal,
    param: &dyn Fn(&str) -> Option<String>,
) -> Result<Via, ApiError> {
    let caller = match (permission, principal) {
        (Permission::Public | Permission::Optional, _) => return Ok(Via::Public),
        (Permission::ClusterAgent, Principal::Cluster { name }) => {
            return if param("cluster").as_deref() == Some(name.as_str()) {
                Ok(Via::Cluster)
            } else {
                Err(ApiError::forbidden("this token belongs to another cluster"))
            };
        }
        (Permission::ClusterAgent, _) => {
            return Err(ApiError::forbidden(
                "this endpoint needs the cluster's agent token",
            ))
        }
        (_, Principal::Cluster { .. }) => {
            return Err(ApiError::forbidden(
                "cluster agent tokens reach only their cluster's agent endpoints",
            ))
        }
        (_, Principal::Caller(c)) => c,
    };
    let fleet = |role: FleetRole| -> Result<Via, ApiError> {
        if caller.has_fleet(role) {
            Ok(Via::Fleet)
        } else {
            Err(ApiError::forbidden(format!(
                "this endpoint needs the fleet {} role",
                role.as_str()
            )))
        }
    };
    match permission {
        Permission::Authenticated => Ok(Via::Fleet),
        Permission::Viewer | Permission::Metrics => fleet(FleetRole::Viewer),
        Permission::Editor => fleet(FleetRole::Editor),
        Permission::Admin => fleet(FleetRole::Admin),
        Permission::WorkloadRead => workload(caller, FleetRole::Viewer, TeamRole::Viewer, param),
        Permission::WorkloadWrite => workload(caller, FleetRole::Editor, TeamRole::Editor, param),
        Permission::TeamAdmin => {
            if caller.has_fleet(FleetRole::Admin) {
                return Ok(Via::Fleet);
            }
            let team: Option<i64> = param("id").and_then(|v| v.parse().ok());
            let grants: Vec<TeamGrant> = caller
                .grants_at_least(TeamRole::Admin)
                .filter(|g| Some(g.team_id) == team)
                .cloned()
                .collect();
            if grants.is_empty() {
                Err(ApiError::forbidden(
                    "this endpoint needs the fleet admin role or team-admin of this team",
                ))
            } else {
                Ok(Via::Teams(grants))
            }
        }
        Permission::Public | Permission::Optional | Permission::ClusterAgent => Ok(Via::Public),
    }
}

fn workload(
    caller: &Caller,
    fleet: FleetRole,
    team: TeamRole,
    param: &dyn Fn(&str) -> Option<String>,
) -> Result<Via, ApiError> {
    if caller.has_fleet(fleet) {
        return Ok(Via::Fleet);
    }
    let target = param("cluster").zip(param("namespace"));
    let grants: Vec<TeamGrant> = caller
        .grants_at_least(team)
        .filter(|g| match &target {
            Some((c, n)) => g.covers(c, n),
            None => true,
        })
        .cloned()
        .collect();
    if grants.is_empty() {
        let what = match target {
            Some((c, n)) => format!("namespace {n} of cluster {c} is outside your teams"),
            None => format!(
                "this endpoint needs the fleet {} role or a team role",
                fleet.as_str()
            ),
        };
        return Err(ApiError::forbidden(what));
    }
    Ok(Via::Teams(grants))
}

/// The bearer token value of the request, owned (so no borrow of the request is held
/// across an await). `None` when there is no Authorization header.
fn bearer_token(req: &Request) -> Result<Option<String>, ApiError> {
    let Some(header) = req.headers().get(AUTHORIZATION) else {
        return Ok(None);
    };
    header
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| Some(v.to_string()))
        .ok_or_else(|| ApiError::unauthorized("Authorization must be `Bearer <token>`"))
}

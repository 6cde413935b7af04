//! Authorization in one place: every route is registered with the permission it needs,
//! and one guard enforces it before the handler runs.

use axum::extract::{RawPathParams, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::Response;

use super::error::ApiError;
use super::AppState;
use crate::auth::{resolve_bearer, Principal};

/// What a route requires of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Anyone, no credentials (health, metrics, the API document).
    Public,
    /// Any fleet role (`viewer`, `editor`, `admin`): read-only fleet data.
    Viewer,
    /// `editor` or `admin`: policies, overrides, approvals, pause/resume.
    Editor,
    /// `admin` only: users, tokens, datasources, settings.
    Admin,
    /// The agent token of the cluster named by the route's `{cluster}` segment.
    ClusterAgent,
}

impl Permission {
    /// The name used in the OpenAPI document (`x-kerf-permission`).
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Public => "public",
            Permission::Viewer => "viewer",
            Permission::Editor => "editor",
            Permission::Admin => "admin",
            Permission::ClusterAgent => "cluster-agent",
        }
    }
}

/// Fleet roles in increasing power.
fn role_rank(role: &str) -> u8 {
    match role {
        "viewer" => 1,
        "editor" => 2,
        "admin" => 3,
        _ => 0,
    }
}

fn required_role(permission: Permission) -> &'static str {
    match permission {
        Permission::Editor => "editor",
        Permission::Admin => "admin",
        _ => "viewer",
    }
}

/// The guard run before every handler; stores the `Principal` in request extensions.
pub async fn guard(
    State((state, permission)): State<(AppState, Permission)>,
    params: RawPathParams,
    mut req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if permission == Permission::Public {
        return Ok(next.run(req).await);
    }
    let bearer = bearer_token(&req)?;
    let principal = resolve_bearer(&state.store, &bearer, crate::store::now_ms()).await?;
    match (permission, &principal) {
        (
            Permission::Viewer | Permission::Editor | Permission::Admin,
            Principal::ApiToken { role, .. },
        ) => {
            let needed = required_role(permission);
            if role_rank(role) < role_rank(needed) {
                return Err(ApiError::forbidden(format!(
                    "this endpoint needs the {needed} role"
                )));
            }
        }
        (
            Permission::Viewer | Permission::Editor | Permission::Admin,
            Principal::Cluster { .. },
        ) => {
            return Err(ApiError::forbidden(
                "cluster agent tokens reach only their cluster's agent endpoints",
            ))
        }
        (Permission::ClusterAgent, Principal::Cluster { name }) => {
            let wanted = params.iter().find(|(k, _)| *k == "cluster").map(|(_, v)| v);
            if wanted != Some(name.as_str()) {
                return Err(ApiError::forbidden("this token belongs to another cluster"));
            }
        }
        (Permission::ClusterAgent, _) => {
            return Err(ApiError::forbidden(
                "this endpoint needs the cluster's agent token",
            ))
        }
        (Permission::Public, _) => {}
    }
    req.extensions_mut().insert(principal);
    Ok(next.run(req).await)
}

/// The bearer token value of the request, owned (so no borrow of the request is held
/// across an await).
fn bearer_token(req: &Request) -> Result<String, ApiError> {
    let header = req
        .headers()
        .get(AUTHORIZATION)
        .ok_or_else(|| ApiError::unauthorized("missing bearer token"))?;
    header
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .ok_or_else(|| ApiError::unauthorized("Authorization must be `Bearer <token>`"))
}

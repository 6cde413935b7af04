//! The route table: each route is added with its permission and its handler's
//! `#[utoipa::path]` annotation (method, path, parameters, bodies, answers), so the
//! router, the guard and the OpenAPI document (`api::document`) come from one list and
//! cannot disagree. The table is kept so tests can walk every route.

use axum::http::Method;
use axum::routing::MethodRouter;
use axum::Router;
use utoipa::openapi::path::Paths;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa_axum::router::UtoipaMethodRouter;

use super::access::{guard, Permission};
use super::AppState;

/// One registered route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    pub method: Method,
    pub path: String,
    pub permission: Permission,
}

/// A schema the annotations name, with its component name.
pub type NamedSchema = (String, RefOr<Schema>);

/// One handler as added: its permission, its documented operation and its router.
struct Entry {
    permission: Permission,
    paths: Paths,
    router: MethodRouter<AppState>,
}

/// A router that records what it registers, before any state exists (the document is
/// built from the same table).
#[derive(Default)]
pub struct RouteTable {
    entries: Vec<Entry>,
    schemas: Vec<NamedSchema>,
}

impl RouteTable {
    pub fn new() -> Self {
        RouteTable::default()
    }

    /// Adds the handler of `routes!(handler)`, guarded by `permission`.
    pub fn add(mut self, permission: Permission, route: UtoipaMethodRouter<AppState>) -> Self {
        let (schemas, paths, router) = route;
        self.schemas.extend(schemas);
        self.entries.push(Entry {
            permission,
            paths,
            router,
        });
        self
    }

    /// The recorded routes.
    pub fn specs(&self) -> Vec<RouteSpec> {
        let mut out = Vec::new();
        for e in &self.entries {
            for (path, item) in e.paths.paths.iter() {
                for method in methods_of(item) {
                    out.push(RouteSpec {
                        method,
                        path: path.clone(),
                        permission: e.permission,
                    });
                }
            }
        }
        out
    }

    /// Each documented operation with its permission, and the schemas the annotations
    /// name (for `api::document`).
    pub fn operations(&self) -> (Vec<(Permission, &Paths)>, &[NamedSchema]) {
        let ops = self.entries.iter().map(|e| (e.permission, &e.paths));
        (ops.collect(), &self.schemas)
    }

    /// The finished router (each handler behind the guard of its permission) and its
    /// table.
    pub fn finish(self, state: AppState) -> (Router<AppState>, Vec<RouteSpec>) {
        let specs = self.specs();
        // axum wants each path registered once: merge the method routers per path.
        let mut by_path: Vec<(String, MethodRouter<AppState>)> = Vec::new();
        for e in self.entries {
            let layer = axum::middleware::from_fn_with_state((state.clone(), e.permission), guard);
            let guarded = e.router.route_layer(layer);
            let path = e
                .paths
                .paths
                .keys()
                .next()
                .expect("routes! documents one path per handler")
                .clone();
            match by_path.iter_mut().find(|(p, _)| *p == path) {
                Some((_, existing)) => {
                    let merged = std::mem::take(existing).merge(guarded);
                    *existing = merged;
                }
                None => by_path.push((path, guarded)),
            }
        }
        let mut router = Router::new();
        for (path, method_router) in by_path {
            router = router.route(&path, method_router);
        }
        (router, specs)
    }
}

/// The methods a documented path item has operations for.
fn methods_of(item: &utoipa::openapi::path::PathItem) -> Vec<Method> {
    [
        (Method::GET, &item.get),
        (Method::PUT, &item.put),
        (Method::POST, &item.post),
        (Method::DELETE, &item.delete),
        (Method::PATCH, &item.patch),
        (Method::HEAD, &item.head),
        (Method::OPTIONS, &item.options),
    ]
    .into_iter()
    .filter(|(_, op)| op.is_some())
    .map(|(m, _)| m)
    .collect()
}

/// A numeric `{id}` path segment; anything else is a 404 (no such resource).
pub fn parse_id(kind: &str, raw: &str) -> Result<i64, super::error::ApiError> {
    raw.parse::<i64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| super::error::ApiError::not_found(format!("{kind} {raw} does not exist")))
}

/// Reads `Option<Option<T>>` so a JSON `null` (clear) differs from an absent field (keep).
pub fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

//! The route table: each route is added with its permission and its handler's
//! `#[utoipa::path]` annotation (method, path, parameters, bodies, answers), so the
//! router, the guard and the OpenAPI document (`api::document`) come from one list and
//! cannot disagree. The table is kept so tests can walk every route; [`route_table`]
//! is every route of the API.

use axum::http::Method;
use axum::routing::MethodRouter;
use axum::Router;
use utoipa::openapi::path::Paths;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa_axum::router::UtoipaMethodRouter;
use utoipa_axum::routes;

use super::access::{guard, Permission};
use super::state::AppState;
use super::{
    admin_settings, agent, approvals, audit, automation, backtest, cluster_policies, clusters,
    config_audit, datasources, deliveries, effective, export, feed, health, history, me,
    notifications, overrides, policies, runs, savings, sso, teams, tokens, usage, usage_write,
    users, workload_totals, workloads,
};

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

/// Every route of the API, with its permission.
pub fn route_table() -> RouteTable {
    use Permission::*;
    RouteTable::new()
        .add(Public, routes!(health::healthz))
        .add(Public, routes!(health::readyz))
        .add(Metrics, routes!(health::metrics))
        .add(Public, routes!(health::openapi))
        .add(ClusterAgent, routes!(agent::post_events))
        .add(ClusterAgent, routes!(usage_write::post_write))
        .add(WorkloadRead, routes!(audit::get_audit))
        .add(Admin, routes!(config_audit::get_config_audit))
        .add(Public, routes!(me::login))
        .add(Authenticated, routes!(me::logout))
        .add(Authenticated, routes!(me::get_me))
        .add(Optional, routes!(me::get_session))
        .add(Public, routes!(sso::sign_in_options))
        .add(Public, routes!(sso::oidc_login))
        .add(Public, routes!(sso::oidc_callback))
        .add(Admin, routes!(sso::get_settings))
        .add(Admin, routes!(sso::put_mappings))
        .add(Admin, routes!(users::list))
        .add(Admin, routes!(users::create))
        .add(Admin, routes!(users::get))
        .add(Admin, routes!(users::update))
        .add(Admin, routes!(users::delete))
        .add(Admin, routes!(users::password_reset))
        .add(Admin, routes!(tokens::list))
        .add(Admin, routes!(tokens::create))
        .add(Admin, routes!(tokens::revoke))
        .add(Admin, routes!(teams::list))
        .add(Admin, routes!(teams::create))
        .add(TeamAdmin, routes!(teams::get))
        .add(Admin, routes!(teams::update))
        .add(Admin, routes!(teams::delete))
        .add(TeamAdmin, routes!(teams::set_members))
        .add(Viewer, routes!(runs::list_runs))
        .add(Viewer, routes!(runs::get_run))
        .add(Editor, routes!(runs::post_run))
        .add(ClusterAgent, routes!(feed::cluster_recommendations))
        .add(WorkloadRead, routes!(workloads::list_workloads))
        .add(WorkloadRead, routes!(workload_totals::get_summary))
        .add(WorkloadRead, routes!(export::get_recommendations))
        .add(WorkloadRead, routes!(workloads::get_workload))
        .add(WorkloadRead, routes!(workloads::list_recommendations))
        .add(WorkloadRead, routes!(usage::get_usage))
        .add(WorkloadRead, routes!(effective::get_policy))
        .add(WorkloadWrite, routes!(overrides::put_override))
        .add(WorkloadWrite, routes!(overrides::delete_override))
        .add(WorkloadWrite, routes!(approvals::approve))
        .add(WorkloadRead, routes!(history::get_history))
        .add(Viewer, routes!(backtest::list_presets))
        .add(Viewer, routes!(backtest::post_backtest))
        .add(Viewer, routes!(policies::list))
        .add(Editor, routes!(policies::create))
        .add(Viewer, routes!(policies::get))
        .add(Editor, routes!(policies::replace))
        .add(Editor, routes!(policies::delete))
        .add(Viewer, routes!(policies::versions))
        .add(Viewer, routes!(policies::version))
        .add(Editor, routes!(policies::revert))
        .add(Viewer, routes!(savings::get_savings))
        .add(Admin, routes!(admin_settings::get_recommender))
        .add(Admin, routes!(admin_settings::put_recommender))
        .add(Admin, routes!(admin_settings::get_pricing))
        .add(Admin, routes!(admin_settings::put_pricing))
        .add(Admin, routes!(datasources::create))
        .add(Admin, routes!(datasources::list))
        .add(Admin, routes!(datasources::get))
        .add(Admin, routes!(datasources::replace))
        .add(Admin, routes!(datasources::delete))
        .add(Admin, routes!(datasources::test))
        .add(Admin, routes!(datasources::set_for_cluster))
        .add(Viewer, routes!(clusters::list))
        .add(Admin, routes!(clusters::create))
        .add(Viewer, routes!(clusters::get))
        .add(Admin, routes!(clusters::update))
        .add(Admin, routes!(clusters::retire))
        .add(Admin, routes!(clusters::rotate_token))
        .add(Editor, routes!(clusters::put_freeze))
        .add(Viewer, routes!(clusters::readiness))
        .add(Editor, routes!(automation::pause_cluster))
        .add(Editor, routes!(automation::resume_cluster))
        .add(Editor, routes!(automation::pause_fleet))
        .add(Editor, routes!(automation::resume_fleet))
        .add(Viewer, routes!(automation::list_pauses))
        .add(WorkloadRead, routes!(notifications::list_channels))
        .add(WorkloadWrite, routes!(notifications::create_channel))
        .add(WorkloadRead, routes!(notifications::get_channel))
        .add(WorkloadWrite, routes!(notifications::replace_channel))
        .add(WorkloadWrite, routes!(notifications::delete_channel))
        .add(WorkloadWrite, routes!(notifications::test_channel))
        .add(WorkloadRead, routes!(notifications::get_digest))
        .add(WorkloadWrite, routes!(notifications::put_digest))
        .add(WorkloadRead, routes!(notifications::list_digests))
        .add(WorkloadRead, routes!(notifications::list_rules))
        .add(WorkloadWrite, routes!(notifications::create_rule))
        .add(WorkloadRead, routes!(notifications::get_rule))
        .add(WorkloadWrite, routes!(notifications::replace_rule))
        .add(WorkloadWrite, routes!(notifications::delete_rule))
        .add(WorkloadRead, routes!(deliveries::list_deliveries))
        .add(WorkloadRead, routes!(deliveries::get_delivery))
        .add(ClusterAgent, routes!(feed::config))
        .add(ClusterAgent, routes!(agent::heartbeat))
        .add(ClusterAgent, routes!(cluster_policies::report))
        .add(Viewer, routes!(cluster_policies::list))
}

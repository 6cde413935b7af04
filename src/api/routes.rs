//! The route table: each route is added with its method, path and permission, and the
//! table is kept so tests (and the OpenAPI drift check) can walk every route.

use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{on, MethodFilter, MethodRouter};
use axum::Router;

use super::access::{guard, Permission};
use super::AppState;

/// One registered route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    pub method: Method,
    pub path: &'static str,
    pub permission: Permission,
}

/// A router that records what it registers.
pub struct RouteTable {
    state: AppState,
    /// One method router per path: axum wants each path registered once.
    paths: Vec<(&'static str, MethodRouter<AppState>)>,
    specs: Vec<RouteSpec>,
}

impl RouteTable {
    pub fn new(state: AppState) -> Self {
        RouteTable {
            state,
            paths: Vec::new(),
            specs: Vec::new(),
        }
    }

    /// Registers `handler` for `method path`, guarded by `permission`.
    pub fn add<H, T>(
        mut self,
        method: Method,
        path: &'static str,
        permission: Permission,
        handler: H,
    ) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let filter =
            MethodFilter::try_from(method.clone()).expect("only standard methods are routed");
        let layer = axum::middleware::from_fn_with_state((self.state.clone(), permission), guard);
        let method_router = on(filter, handler).route_layer(layer);
        match self.paths.iter_mut().find(|(p, _)| *p == path) {
            Some((_, existing)) => {
                let merged = std::mem::take(existing).merge(method_router);
                *existing = merged;
            }
            None => self.paths.push((path, method_router)),
        }
        self.specs.push(RouteSpec {
            method,
            path,
            permission,
        });
        self
    }

    /// The recorded routes.
    pub fn specs(&self) -> &[RouteSpec] {
        &self.specs
    }

    /// The finished router and its table.
    pub fn finish(self) -> (Router<AppState>, Vec<RouteSpec>) {
        let mut router = Router::new();
        for (path, method_router) in self.paths {
            router = router.route(path, method_router);
        }
        (router, self.specs)
    }
}

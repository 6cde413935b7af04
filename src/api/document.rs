//! The OpenAPI 3.1 document of the API (`GET /v1/openapi.yaml`), generated from the
//! route table: each handler's `#[utoipa::path]` annotation gives its operation (the
//! request and response types are the ones the handler parses and serializes), and the
//! route's permission adds what every route of that permission shares: the security it
//! accepts, `x-kerf-permission`, and the error answers the guard, the path, the query
//! and the body reader can give. `docs/contracts/openapi.yaml` is this document,
//! committed for readers and kept equal by a drift test; the hub serves that file.

use std::sync::OnceLock;

use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::path::{Operation, ParameterIn, PathItem, Paths};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{
    Components, ContentBuilder, InfoBuilder, OpenApi, Ref, RefOr, ResponseBuilder, Server,
};
use utoipa::PartialSchema;

use super::access::Permission;
use super::error::ErrorBody;

mod links;
mod rules;

const DESCRIPTION: &str = "The kerf hub's HTTP API. Every route is listed here, generated \
from the types the handlers parse and serialize; docs/contracts/openapi.yaml is this \
document, and a test fails when it drifts. Errors always have the shape \
{\"error\":{\"code\",\"message\",\"details\"}} (the Error schema). Timestamps are RFC 3339. \
On every route: a body past http.max_body_bytes (or the route's own smaller limit) is 413 \
payload_too_large with details.limitBytes; a body that does not arrive within \
http.body_read_timeout_seconds is 408 body_timeout; a path segment that is not UTF-8 once \
decoded is 400 invalid_path. Each operation names the permission it needs in \
x-kerf-permission (docs/contracts/teams.md has the role model).";

/// The error answers shared by many routes: status, component name, meaning.
const ERRORS: &[(u16, &str, &str)] = &[
    (
        400,
        "BadRequest",
        "The request is malformed; the code says how (invalid_json, invalid_body, \
         invalid_field, invalid_query, invalid_path, …) and details name the field \
         (details.field) or the query parameter (details.parameter).",
    ),
    (
        401,
        "Unauthorized",
        "No credentials, or a token or session that is unknown, expired or revoked.",
    ),
    (
        403,
        "Forbidden",
        "The caller's role does not allow this (forbidden), or a cookie-authenticated \
         change lacks the session's X-CSRF-Token (csrf_failed).",
    ),
    (
        404,
        "NotFound",
        "No such resource (or one outside the caller's teams' namespaces).",
    ),
    (
        409,
        "Conflict",
        "The cluster is retired (refused: its record is kept for the audit trail only), or \
         the change conflicts with what exists.",
    ),
    (
        408,
        "BodyTimeout",
        "The body did not arrive within http.body_read_timeout_seconds (body_timeout).",
    ),
    (
        413,
        "PayloadTooLarge",
        "The body is larger than the route accepts (payload_too_large, details.limitBytes).",
    ),
];

/// The document the hub serves: the committed file, which the drift test keeps equal to
/// the generated [`yaml`]. Serving it as built in keeps the generator, its YAML writer
/// and its passes out of the shipped binary (only the tests build the document).
pub const SERVED: &str = include_str!("../../docs/contracts/openapi.yaml");

/// The document as YAML, generated from the route table (the drift test compares it
/// with the committed file), built once.
pub fn yaml() -> &'static str {
    static YAML: OnceLock<String> = OnceLock::new();
    YAML.get_or_init(|| yaml_serde::to_string(&build()).expect("the document serializes"))
}

fn build_raw() -> OpenApi {
    let table = super::routes::route_table();
    let (operations, schemas) = table.operations();
    let mut paths = Paths::new();
    for (permission, documented) in operations {
        let mut documented = documented.clone();
        for (path, item) in documented.paths.iter_mut() {
            for (method, op) in operations_mut(item) {
                complete(op, method, path, permission);
            }
        }
        paths.merge(documented);
    }
    let mut components = Components::new();
    for (name, schema) in schemas {
        match components.schemas.get(name) {
            Some(seen) if seen != schema => panic!(
                "two types are documented as schema {name:?}; rename one with #[schema(as = …)]"
            ),
            _ => {
                components.schemas.insert(name.clone(), schema.clone());
            }
        }
    }
    components
        .schemas
        .insert("Error".into(), ErrorBody::schema());
    for (_, name, description) in ERRORS {
        components
            .responses
            .insert((*name).into(), RefOr::T(error_response(description)));
    }
    components.security_schemes.extend([
        ("bearer".to_string(), RefOr::T(bearer())),
        ("session".to_string(), RefOr::T(session())),
    ]);
    let info = InfoBuilder::new()
        .title("kerf hub API")
        .version("1")
        .description(Some(DESCRIPTION))
        .build();
    let mut doc = OpenApi::new(info, paths);
    doc.servers = Some(vec![Server::new("/")]);
    doc.components = Some(components);
    doc
}

/// The generated document with the passes utoipa has no attribute for: the body rule
/// on `null` and the links.
fn build() -> yaml_serde::Value {
    let mut doc = yaml_serde::to_value(build_raw()).expect("the document serializes");
    rules::refuse_null(&mut doc);
    yaml_streams(&mut doc);
    rules::no_empty_query_values(&mut doc);
    links::add(&mut doc);
    doc
}

/// The YAML export is a stream of documents (`---` between them, as `kubectl apply`
/// reads), which no schema describes: its media type is listed without one.
fn yaml_streams(doc: &mut yaml_serde::Value) {
    let export = |op: &yaml_serde::Value| op["operationId"].as_str() == Some("getRecommendations");
    for op in links::operations(doc).filter(|op| export(op)) {
        let answers = op.get_mut("responses").and_then(|r| r.as_mapping_mut());
        for answer in answers.into_iter().flat_map(|a| a.values_mut()) {
            if let Some(yaml) = answer
                .get_mut("content")
                .and_then(|c| c.get_mut("application/yaml"))
                .and_then(|y| y.as_mapping_mut())
            {
                yaml.remove("schema");
            }
        }
    }
}

/// An error answer with the one error body.
pub fn error_response(description: &str) -> utoipa::openapi::Response {
    let content = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("Error")))
        .build();
    ResponseBuilder::new()
        .description(description)
        .content("application/json", content)
        .build()
}

fn operations_mut(item: &mut PathItem) -> impl Iterator<Item = (&'static str, &mut Operation)> {
    [
        ("get", &mut item.get),
        ("put", &mut item.put),
        ("post", &mut item.post),
        ("delete", &mut item.delete),
        ("patch", &mut item.patch),
    ]
    .into_iter()
    .filter_map(|(m, op)| op.as_mut().map(|op| (m, op)))
}

/// `getClustersByClusterReadiness` for `GET /v1/clusters/{cluster}/readiness`: unique
/// and stable, since method and path are.
fn operation_id(method: &str, path: &str) -> String {
    let mut id = method.to_string();
    for segment in path
        .split(['/', '.', '-'])
        .filter(|s| !s.is_empty() && *s != "v1")
    {
        let (prefix, word) = match segment.strip_prefix('{') {
            Some(name) => ("By", name.trim_end_matches('}')),
            None => ("", segment),
        };
        id.push_str(prefix);
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            id.extend(first.to_uppercase());
            id.push_str(chars.as_str());
        }
    }
    id
}

/// Adds what the permission, the path, the query and the body imply to one operation.
fn complete(op: &mut Operation, method: &str, path: &str, permission: Permission) {
    op.operation_id = Some(operation_id(method, path));
    let extensions = ExtensionsBuilder::new()
        .add("x-kerf-permission", permission.as_str())
        .build();
    match &mut op.extensions {
        Some(e) => e.merge(extensions),
        None => op.extensions = Some(extensions),
    }
    op.security = security(permission);
    let params = op.parameters.as_deref().unwrap_or_default();
    let has_path = params.iter().any(|p| in_location(p, ParameterIn::Path));
    let has_query = params.iter().any(|p| in_location(p, ParameterIn::Query));
    let has_body = op.request_body.is_some();
    let mut statuses = Vec::new();
    if has_path || has_query || has_body {
        statuses.push(400);
    }
    let anyone = matches!(permission, Permission::Public | Permission::Optional);
    if !anyone {
        statuses.push(401);
    }
    // Sessions must send their CSRF token on every change, whatever the role.
    let role_bound = !anyone && permission != Permission::Authenticated;
    if role_bound || (permission == Permission::Authenticated && method != "get") {
        statuses.push(403);
    }
    if has_path && permission != Permission::ClusterAgent {
        statuses.push(404);
    }
    // Every change and read of one cluster refuses a retired one.
    if path.contains("{cluster}") && permission != Permission::ClusterAgent {
        statuses.push(409);
    }
    if has_body {
        statuses.extend([408, 413]);
    }
    for status in statuses {
        let name = ERRORS
            .iter()
            .find(|(s, _, _)| *s == status)
            .map(|(_, n, _)| *n)
            .expect("every implied status has a shared answer");
        op.responses
            .responses
            .entry(status.to_string())
            .or_insert_with(|| RefOr::Ref(Ref::new(format!("#/components/responses/{name}"))));
    }
}

fn in_location(p: &RefOr<utoipa::openapi::path::Parameter>, location: ParameterIn) -> bool {
    matches!(p, RefOr::T(p) if p.parameter_in == location)
}

/// Who may present what: cluster agents their bearer token; everyone else a bearer API
/// token or the session cookie; `/metrics` needs neither unless configured to.
fn security(permission: Permission) -> Option<Vec<SecurityRequirement>> {
    let bearer = SecurityRequirement::new("bearer", Vec::<String>::new());
    let session = SecurityRequirement::new("session", Vec::<String>::new());
    match permission {
        Permission::Public => None,
        Permission::ClusterAgent => Some(vec![bearer]),
        Permission::Metrics | Permission::Optional => {
            Some(vec![SecurityRequirement::default(), bearer, session])
        }
        _ => Some(vec![bearer, session]),
    }
}

fn bearer() -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "An API token (kerf_at_…) or, on cluster-agent routes, the cluster's agent \
                 token (kerf_ct_…).",
            ))
            .build(),
    )
}

fn session() -> SecurityScheme {
    SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
        "kerf_session",
        "The session cookie set by POST /v1/auth/login (HttpOnly, SameSite=Strict, Secure \
         under TLS). Cookie-authenticated POST/PUT/PATCH/DELETE must send the session's \
         CSRF token (from login or GET /v1/me) in the X-CSRF-Token header, else 403 \
         csrf_failed.",
    )))
}

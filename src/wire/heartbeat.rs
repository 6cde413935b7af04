//! `POST /v1/clusters/{cluster}/heartbeat`: the agent says it is alive, with its version,
//! the cluster's Kubernetes version and its capabilities; the hub answers with the
//! cluster's readiness.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the agent sends every heartbeat interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Heartbeat {
    /// 1 to 100 characters, not only spaces.
    #[schema(pattern = r"\S", max_length = 100)]
    pub agent_version: String,
    /// 1 to 100 characters, not only spaces.
    #[schema(pattern = r"\S", max_length = 100)]
    pub kubernetes_version: String,
    /// What the agent can do here, e.g. `{"inPlaceResize": true}`: at most 64 entries
    /// and 8 KiB, each a boolean, number or string, or a list of them.
    #[serde(default)]
    #[schema(schema_with = capabilities)]
    pub capabilities: Map<String, Value>,
}

fn capabilities() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{
        AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
    };
    use utoipa::openapi::RefOr;
    let scalar = || {
        ObjectBuilder::new().schema_type(SchemaType::from_iter([
            Type::Boolean,
            Type::Number,
            Type::String,
        ]))
    };
    let value = OneOfBuilder::new()
        .item(scalar())
        .item(ArrayBuilder::new().items(scalar()));
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .max_properties(Some(64))
        .additional_properties(Some(AdditionalProperties::RefOr(RefOr::T(Schema::OneOf(
            value.build(),
        )))))
        .build()
}

/// Whether `v` is a capability value: a boolean, number or string, or a list of them.
pub fn is_capability_value(v: &Value) -> bool {
    let scalar = |v: &Value| v.is_boolean() || v.is_number() || v.is_string();
    scalar(v) || v.as_array().is_some_and(|a| a.iter().all(scalar))
}

/// A cluster's readiness (`docs/contracts/readiness.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Readiness {
    pub cluster: String,
    /// `ready`, `degraded` or `not-ready`.
    pub state: String,
    /// Why it is not `ready`, worst first.
    pub reasons: Vec<String>,
    /// Each check (`heartbeat`, `datasource`, `lastRun`) with its status and detail.
    pub checks: Value,
    /// Since when the state holds (RFC 3339).
    pub since: String,
    pub evaluated_at: String,
}

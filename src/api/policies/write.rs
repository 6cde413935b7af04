//! The bodies of the policy writes: the policy document (create, replace) and the
//! revert, read field by field in the order they are checked, so the first fault is
//! answered: every `null` at once, then the audit `reason`, the version read, and the
//! document, whose type errors name their JSON path in one 400 `invalid_policy`.

use axum::body::Body;
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::api::access::Access;
use crate::api::body::{
    array_for_object, null_paths, read_limited, whole_numbers, MAX_JSON_BYTES, NOT_NULL,
};
use crate::api::config_audit::context;
use crate::api::error::ApiError;
use crate::events::config_change::AuditContext;
use crate::fleet::policies;
use crate::policy::{FieldError, PolicySpec};

/// What `POST`/`PUT /v1/policies…` read: the policy document with the audit reason and
/// (PUT, without If-Match) the version read. Documents the body `object`/`spec_of`
/// parse by hand (so every bad field is reported at once).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyWrite {
    #[serde(flatten)]
    pub spec: PolicySpec,
    pub reason: Option<String>,
    /// PUT: the version read, when If-Match is not sent.
    pub version: Option<i64>,
}

impl PolicyWrite {
    /// Reads a policy body and the audit context of its `reason`; `version` is taken
    /// only by a replace (`versioned`), so a create refuses it as a document field.
    pub async fn read(
        body: Body,
        access: &Access,
        versioned: bool,
    ) -> Result<(AuditContext, PolicyWrite), ApiError> {
        let mut o = object(body).await?;
        // Filled in the order the body is checked, so the first fault is answered.
        let mut write = PolicyWrite {
            spec: PolicySpec::default(),
            reason: take_string(&mut o, "reason")?,
            version: None,
        };
        let ctx = context(access, write.reason.clone())?;
        if versioned {
            write.version = take_int(&mut o, "version")?;
        }
        write.spec = spec_of(o)?;
        Ok((ctx, write))
    }
}

/// What `POST /v1/policies/{id}/revert` reads (by hand, like [`PolicyWrite`]).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevertBody {
    /// The version whose content comes back.
    pub version: i64,
    /// The version read, when If-Match is not sent.
    pub current_version: Option<i64>,
    pub reason: Option<String>,
}

impl RevertBody {
    /// Reads a revert body and the audit context of its `reason`.
    pub async fn read(body: Body, access: &Access) -> Result<(AuditContext, RevertBody), ApiError> {
        let mut o = object(body).await?;
        // Filled in the order the body is checked, as the policy body is.
        let mut revert = RevertBody {
            version: 0,
            current_version: None,
            reason: take_string(&mut o, "reason")?,
        };
        let ctx = context(access, revert.reason.clone())?;
        revert.version = take_int(&mut o, "version")?.ok_or_else(|| {
            ApiError::invalid_field("version", "required: the version to restore")
        })?;
        revert.current_version = take_int(&mut o, "currentVersion")?;
        if let Some(key) = o.keys().next() {
            return Err(ApiError::invalid_field(key, "unknown field"));
        }
        Ok((ctx, revert))
    }
}

fn invalid(errors: Vec<FieldError>) -> ApiError {
    policies::invalid(errors).into()
}

/// The JSON object of a body.
async fn object(body: Body) -> Result<Map<String, Value>, ApiError> {
    let bytes = read_limited(body, MAX_JSON_BYTES).await?;
    let mut value = serde_json::from_slice::<Value>(&bytes);
    if let Ok(v) = &mut value {
        whole_numbers(v);
    }
    match value {
        Ok(Value::Object(o)) => refuse_nulls(o),
        Ok(_) => Err(invalid(vec![FieldError {
            path: "$".into(),
            message: "must be a JSON object".into(),
        }])),
        Err(e) => Err(ApiError::bad_request(
            "invalid_json",
            format!("request body is not JSON: {e}"),
        )),
    }
}

/// `o`, unless a value in it is `null` (leave the field out instead): every such
/// field is reported.
fn refuse_nulls(o: Map<String, Value>) -> Result<Map<String, Value>, ApiError> {
    let errors: Vec<FieldError> = o
        .iter()
        .flat_map(|(k, v)| null_paths(v, k.clone()))
        .map(|path| FieldError {
            path,
            message: NOT_NULL.into(),
        })
        .collect();
    if errors.is_empty() {
        Ok(o)
    } else {
        Err(invalid(errors))
    }
}

/// Removes `key` from `o` as an optional string / integer.
fn take_string(o: &mut Map<String, Value>, key: &str) -> Result<Option<String>, ApiError> {
    match o.remove(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::invalid_field(key, "must be a string")),
    }
}

fn take_int(o: &mut Map<String, Value>, key: &str) -> Result<Option<i64>, ApiError> {
    match o.remove(key) {
        None => Ok(None),
        Some(v) => v
            .as_i64()
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(|| ApiError::invalid_field(key, "must be a positive integer")),
    }
}

/// Parses a policy document (its rules are checked by `fleet::policies`).
fn spec_of(o: Map<String, Value>) -> Result<PolicySpec, ApiError> {
    let sent = Value::Object(o);
    let spec: PolicySpec = serde_path_to_error::deserialize(sent.clone()).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let path = if path == "." { "$".into() } else { path };
        invalid(vec![FieldError { path, message }])
    })?;
    // As every body: an array is no object (serde would fill a struct by position),
    // in the document and in its engine `analysis`.
    let typed = serde_json::to_value(&spec).map_err(ApiError::internal)?;
    let mut wrong = array_for_object(&sent, &typed, String::new());
    if let (None, Some(a)) = (&wrong, &spec.analysis) {
        if let Ok(p) = serde_json::from_value::<crate::analysis::Policy>(a.clone()) {
            let engine = serde_json::to_value(&p).map_err(ApiError::internal)?;
            wrong = array_for_object(a, &engine, "analysis".into());
        }
    }
    match wrong {
        Some(path) => Err(invalid(vec![FieldError {
            path,
            message: "must be a JSON object".into(),
        }])),
        None => Ok(spec),
    }
}

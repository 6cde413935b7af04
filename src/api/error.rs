//! The one API error: a status plus the stable body
//! `{"error":{"code","message","details"}}`. 5xx bodies are generic; the cause is logged
//! once, inside the request span.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

/// How long a caller is asked to wait (`Retry-After`) while the database cannot write.
pub const STORAGE_RETRY_AFTER_SECS: u64 = 30;

/// The one error body of the API: `{"error":{"code","message","details"}}`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Error)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable (`invalid_field`, `not_found`, `run_in_progress`, …).
    #[schema(examples("invalid_field"))]
    pub code: String,
    /// For people; names the value at fault and, where it helps, the fix.
    pub message: String,
    /// Structured context, `null` when there is none: the field (`field`), the query
    /// parameter (`parameter`), every problem (`errors`), the limit (`limitBytes`), …
    pub details: Value,
}

/// An error answer of the HTTP API.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Value,
    /// Extra response headers (e.g. `Retry-After`).
    pub headers: Vec<(axum::http::HeaderName, String)>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            details: Value::Null,
            headers: Vec::new(),
        }
    }

    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = code;
        self
    }

    pub fn with_header(mut self, name: axum::http::HeaderName, value: String) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// A bad request naming the offending field in `details.field`.
    pub fn invalid_field(field: &str, message: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "invalid_field",
            format!("{field}: {message}"),
        )
        .with_details(json!({ "field": field }))
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("request body exceeds the limit of {limit} bytes"),
        )
        .with_details(json!({ "limitBytes": limit }))
    }

    /// The database cannot write for a reason of its storage (the disk is full, …):
    /// 503 so callers (agents) back off and retry; logs `cause`.
    pub fn storage(fault: crate::store::StorageFault, cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, fault = fault.as_str(), "request failed: the database cannot write");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            format!(
                "the database cannot write: {}; nothing was changed, retry later",
                fault.describe()
            ),
        )
        .with_details(
            json!({ "fault": fault.as_str(), "retryAfterSeconds": STORAGE_RETRY_AFTER_SECS }),
        )
        .with_header(
            axum::http::header::RETRY_AFTER,
            STORAGE_RETRY_AFTER_SECS.to_string(),
        )
    }

    /// A server-side failure: logs `cause` and answers with a generic message.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "request failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the server log has the cause",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
                details: self.details,
            },
        };
        let mut resp = (self.status, axum::Json(body)).into_response();
        for (name, value) in self.headers {
            if let Ok(v) = axum::http::HeaderValue::from_str(&value) {
                resp.headers_mut().insert(name, v);
            }
        }
        resp
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        use crate::store::StoreError;
        match e {
            StoreError::NotFound(_) => ApiError::not_found(e.to_string()),
            StoreError::Conflict(_) => {
                ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string())
            }
            StoreError::Refused(_) => ApiError::new(StatusCode::CONFLICT, "refused", e.to_string()),
            StoreError::VersionConflict { current, .. } => {
                ApiError::new(StatusCode::CONFLICT, "version_conflict", e.to_string())
                    .with_details(json!({ "currentVersion": current }))
            }
            other => match other.storage_fault() {
                Some(fault) => ApiError::storage(fault, other),
                None => ApiError::internal(other),
            },
        }
    }
}

impl From<crate::operation::OpError> for ApiError {
    fn from(e: crate::operation::OpError) -> Self {
        use crate::operation::OpError;
        match e {
            OpError::Invalid { field, message } => ApiError::invalid_field(&field, message),
            OpError::Rejected {
                code,
                message,
                details,
            } => ApiError::bad_request(code, message).with_details(details),
            OpError::NotFound(m) => ApiError::not_found(m),
            OpError::Conflict {
                code,
                message,
                details,
            } => ApiError::new(StatusCode::CONFLICT, code, message).with_details(details),
            OpError::Busy(m) => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy", m),
            OpError::Upstream { code, message } => {
                ApiError::new(StatusCode::BAD_GATEWAY, code, message)
            }
            OpError::Store(s) => s.into(),
            OpError::Internal(m) => ApiError::internal(m),
        }
    }
}

impl From<crate::auth::AuthError> for ApiError {
    fn from(e: crate::auth::AuthError) -> Self {
        match e {
            crate::auth::AuthError::Store(s) => match s.storage_fault() {
                Some(fault) => ApiError::storage(fault, s),
                None => ApiError::internal(s),
            },
            other => ApiError::unauthorized(other.to_string()),
        }
    }
}

//! What every hub operation (the domain functions below `api`: `fleet`, `auth::accounts`,
//! `auth::teams`, `runs` settings) returns when it does not do what was asked: the input
//! at fault, a conflict with the stored state under a stable code, a missing target, a
//! busy resource, or a store failure. The API maps it to a status and the stable error
//! body; the command line to exit code 2 (the request) or 1 (the system).

use serde_json::{json, Value};

use crate::store::StoreError;

/// Why an operation refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// One input field is wrong (`details.field`).
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// The input document is wrong; `details` lists the problems (`invalid_policy`, ...).
    #[error("{message}")]
    Rejected {
        code: &'static str,
        message: String,
        details: Value,
    },
    /// The target does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The stored state does not allow it now, under a stable `code`.
    #[error("{message}")]
    Conflict {
        code: &'static str,
        message: String,
        details: Value,
    },
    /// A bounded resource is saturated; retry shortly.
    #[error("{0}")]
    Busy(String),
    /// A system the hub depends on (a datasource) failed.
    #[error("{message}")]
    Upstream { code: &'static str, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A server-side failure (the message is logged, never shown).
    #[error("{0}")]
    Internal(String),
}

impl OpError {
    /// A wrong field.
    pub fn invalid(field: &str, message: impl std::fmt::Display) -> OpError {
        OpError::Invalid {
            field: field.to_string(),
            message: message.to_string(),
        }
    }

    /// A conflict with the stored state.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> OpError {
        OpError::Conflict {
            code,
            message: message.into(),
            details: Value::Null,
        }
    }

    /// A rejected document with its list of problems under `details.errors`.
    pub fn rejected(
        code: &'static str,
        message: impl Into<String>,
        errors: impl serde::Serialize,
    ) -> OpError {
        OpError::Rejected {
            code,
            message: message.into(),
            details: json!({ "errors": errors }),
        }
    }

    /// Adds `details` to a conflict.
    pub fn with_details(self, details: Value) -> OpError {
        match self {
            OpError::Conflict { code, message, .. } => OpError::Conflict {
                code,
                message,
                details,
            },
            other => other,
        }
    }

    /// An internal failure from any error.
    pub fn internal(e: impl std::fmt::Display) -> OpError {
        OpError::Internal(e.to_string())
    }
}

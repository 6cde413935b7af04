//! Cluster errors keep what the API server said (HTTP code, `reason`, message and the
//! `details.causes`), because the agent's decisions and its `failed` events depend on it:
//! 409 `FieldManagerConflict` names the field and its owner, 422 names the invalid field,
//! 429 from the Eviction API is a PodDisruptionBudget refusal.

use serde::{Deserialize, Serialize};

/// One entry of a Status' `details.causes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    /// e.g. `FieldManagerConflict`, `FieldValueInvalid`, `DisruptionBudget`.
    pub reason: String,
    /// e.g. `.spec.template.spec.containers[name="app"].resources.requests.cpu`.
    pub field: String,
    pub message: String,
}

/// A `metav1.Status` failure as the API server returned it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiStatus {
    pub code: u16,
    /// `Conflict`, `Invalid`, `TooManyRequests`, `NotFound`, `Forbidden`, ...
    pub reason: String,
    pub message: String,
    pub causes: Vec<Cause>,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ClusterError {
    /// The API server refused the request.
    #[error("the API server refused ({}, {}): {}", .0.code, .0.reason, .0.message)]
    Api(ApiStatus),
    /// The API server could not be reached or the answer could not be read.
    #[error("cannot reach the API server: {0}")]
    Transport(String),
    /// An object kerf cannot interpret (named, with what is wrong).
    #[error("unexpected object {object}: {problem}")]
    Unexpected { object: String, problem: String },
    /// A node's kubelet could not be reached or refused (its `/metrics/cadvisor`): not
    /// the API server. `code` is the kubelet's HTTP status when it answered.
    #[error("cannot read the kubelet of node {node}: {message}")]
    Kubelet {
        node: String,
        code: Option<u16>,
        message: String,
    },
}

impl ClusterError {
    pub fn api(code: u16, reason: &str, message: impl Into<String>) -> ClusterError {
        ClusterError::Api(ApiStatus {
            code,
            reason: reason.into(),
            message: message.into(),
            causes: Vec::new(),
        })
    }

    pub fn status(&self) -> Option<&ApiStatus> {
        match self {
            ClusterError::Api(s) => Some(s),
            _ => None,
        }
    }

    /// The HTTP status of the refusal (the API server's, or a kubelet's).
    pub fn code(&self) -> Option<u16> {
        match self {
            ClusterError::Kubelet { code, .. } => *code,
            _ => self.status().map(|s| s.code),
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.code() == Some(404)
    }

    /// 422: the API server's validation refused the change.
    pub fn is_invalid(&self) -> bool {
        self.code() == Some(422)
    }

    /// 429 from the Eviction API: a PodDisruptionBudget allows no disruption now.
    pub fn is_disruption_budget(&self) -> bool {
        self.code() == Some(429)
    }

    /// 403 with cause `NodeCapacity`: since v1.35 the API server itself refuses a
    /// resize larger than the node's allocatable (the kubelet would call it Infeasible).
    pub fn is_node_capacity(&self) -> bool {
        self.status()
            .is_some_and(|s| s.code == 403 && s.causes.iter().any(|c| c.reason == "NodeCapacity"))
    }

    /// 409 from server-side apply: the fields another manager owns, as
    /// `(field path, message)`. Empty for any other error.
    pub fn field_conflicts(&self) -> Vec<(&str, &str)> {
        match self.status() {
            Some(s) if s.code == 409 => s
                .causes
                .iter()
                .filter(|c| c.reason == "FieldManagerConflict")
                .map(|c| (c.field.as_str(), c.message.as_str()))
                .collect(),
            _ => Vec::new(),
        }
    }
}

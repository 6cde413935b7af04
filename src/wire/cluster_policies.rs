//! `PUT /v1/clusters/{cluster}/policies`: the agent tells the hub every RightsizingPolicy
//! object of its cluster, as the objects are (the `spec` as written, judged again by the
//! hub), whenever the set changes and once at start. The whole set each time: an object
//! absent from it was deleted. The hub answers its verdict on each.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::FieldError;

/// Most objects one cluster may hold (the hub refuses more with 413).
pub const MAX_CLUSTER_POLICIES: usize = 500;

/// Every RightsizingPolicy object of the cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterPolicies {
    pub policies: Vec<ClusterPolicyObject>,
}

/// One object as the API server holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterPolicyObject {
    /// `metadata.name`: the policy's name.
    pub name: String,
    /// `metadata.uid`: a new uid under the same name is a new object.
    pub uid: String,
    /// `metadata.generation`: bumped by every change of `spec`.
    pub generation: i64,
    /// `spec` as written (the policy document without `name`).
    #[schema(value_type = Object)]
    pub spec: Value,
}

/// The hub's verdict on each object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicyVerdicts {
    pub policies: Vec<ClusterPolicyVerdict>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicyVerdict {
    pub name: String,
    pub generation: i64,
    /// The generation in force (`null`: none ever was valid).
    pub accepted_generation: Option<i64>,
    /// What is wrong with `generation` (empty: it is in force).
    #[schema(value_type = Vec<Object>)]
    pub errors: Vec<FieldError>,
}

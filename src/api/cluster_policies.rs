//! The RightsizingPolicy objects of the clusters: `PUT /v1/clusters/{cluster}/policies`
//! (the agent reports every object of its cluster) and `GET /v1/cluster-policies`
//! (read-only beside the hub's own policies; docs/contracts/policy.md, "Policies from
//! the cluster").

use axum::body::Body;
use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;

use super::body::{parse_json, read_limited};
use super::error::ApiError;
use super::lists::Items;
use super::query::Query;
use super::state::AppState;
use crate::fleet::cluster_policies::{self, ClusterPolicyView};
use crate::wire::cluster_policies::{ClusterPolicies, ClusterPolicyVerdicts};

/// Largest report body, in bytes.
pub const MAX_REPORT_BYTES: usize = 2 * 1024 * 1024;

/// `PUT /v1/clusters/{cluster}/policies`.
#[utoipa::path(
    put,
    path = "/v1/clusters/{cluster}/policies",
    summary = "The agent reports every RightsizingPolicy object of its cluster (the whole set: an object left out was deleted); answers the verdict on each.",
    description = "At most 500 objects and 2 MiB. Each object's spec is judged as the policy document (name = metadata.name): a valid generation is in force at once; an invalid one changes nothing (the last valid generation of the same uid stays in force) and its problems come back in errors [{path, message}]. Every change is audited (ClusterPolicyCreated / Updated / Rejected / Deleted). 400 invalid_field for a report that cannot be judged whole (a name twice, no uid, generation < 1).",
    params(
        ("cluster" = String, Path),
    ),
    request_body = ClusterPolicies,
    responses(
        (status = 200, description = "The verdict on each object.", body = ClusterPolicyVerdicts),
    )
)]
pub async fn report(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<ClusterPolicyVerdicts>, ApiError> {
    let bytes = read_limited(body, MAX_REPORT_BYTES).await?;
    let report: ClusterPolicies = parse_json(&bytes)?;
    Ok(Json(store_report(&state, &cluster, report).await?))
}

/// What `PUT .../policies` does after parsing (the in-process agent calls it too).
pub async fn store_report(
    state: &AppState,
    cluster: &str,
    report: ClusterPolicies,
) -> Result<ClusterPolicyVerdicts, ApiError> {
    Ok(cluster_policies::report(&state.store, state.now(), cluster, report).await?)
}

/// `GET /v1/cluster-policies`' query.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ListQuery {
    cluster: Option<String>,
}

/// `GET /v1/cluster-policies[?cluster=]`.
#[utoipa::path(
    get,
    path = "/v1/cluster-policies",
    summary = "The clusters' own RightsizingPolicy objects as their agents reported them, read-only: the generation in force (acceptedGeneration, spec) and what is wrong with the latest (errors). They govern their cluster's workloads ahead of the hub's policies and the overrides.",
    params(
        ("cluster" = Option<String>, Query, description = "Only this cluster's."),
    ),
    responses(
        (status = 200, description = "By cluster and name.", body = Items<ClusterPolicyView>),
    )
)]
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Items<ClusterPolicyView>>, ApiError> {
    let items = cluster_policies::list(&state.store, q.cluster)
        .await?
        .iter()
        .map(cluster_policies::view)
        .collect();
    Ok(Json(Items::new(items)))
}

//! What agents send: event batches (validated against the events contract into
//! `wire::AgentEvent`, stored exactly once per id, consuming the approval an
//! `ApprovedOnce` names, an applied or rolled-back change folded into the workload's
//! live change, `applied`) and heartbeats (stored, then readiness re-evaluated).

use serde_json::Value;

use crate::events::{validate_batch, BatchError};
use crate::operation::OpError;
use crate::readiness;
use crate::store::readiness::HeartbeatRecord;
use crate::store::{InsertOutcome, Store};
use crate::wire::{Heartbeat, Readiness};

/// Stores the batch `body` of cluster `cluster`, received at `now`. A refused batch
/// stores nothing.
pub async fn events(
    store: &Store,
    now: i64,
    cluster: &str,
    body: &[u8],
) -> Result<Result<InsertOutcome, BatchError>, OpError> {
    let events = match validate_batch(body) {
        Ok(e) => e,
        Err(e) => return Ok(Err(e)),
    };
    // Priced as runs price: an applied change moves the workload's available saving
    // (the settings are read only for a batch that has one).
    let changes = events.iter().any(|v| {
        matches!(
            v.event.event_type,
            crate::wire::EventType::Applied | crate::wire::EventType::RolledBack
        )
    });
    let prices = if changes {
        let pricing: crate::runs::pricing::Pricing =
            crate::runs::saved_settings::load(store, crate::runs::pricing::PRICING_KEY)
                .await
                .map_err(|e| OpError::Internal(e.to_string()))?;
        pricing.for_cluster(cluster)
    } else {
        (0.0, 0.0)
    };
    let cluster = cluster.to_string();
    Ok(Ok(store
        .writing(move |tx| {
            let out = tx.insert_events(&cluster, &events, now)?;
            for &i in &out.new_events {
                super::applied::fold(tx, &cluster, &events[i], prices)?;
            }
            Ok(out)
        })
        .await?))
}

fn short_text(field: &str, v: &str) -> Result<(), OpError> {
    if v.trim().is_empty() || v.chars().count() > 100 {
        return Err(OpError::invalid(field, "must be 1 to 100 characters"));
    }
    Ok(())
}

/// What a heartbeat did: the readiness now, and whether the cluster's datasource was
/// never checked (the caller wakes the ticker to check it off the request path).
pub struct HeartbeatOutcome {
    pub readiness: Readiness,
    pub needs_datasource_check: bool,
}

/// Stores a heartbeat of active cluster `cluster` and re-evaluates its readiness.
pub async fn heartbeat(
    store: &Store,
    now: i64,
    cluster: &str,
    hb: Heartbeat,
) -> Result<HeartbeatOutcome, OpError> {
    short_text("agentVersion", &hb.agent_version)?;
    short_text("kubernetesVersion", &hb.kubernetes_version)?;
    if let Some((key, _)) = hb
        .capabilities
        .iter()
        .find(|(_, v)| !crate::wire::heartbeat::is_capability_value(v))
    {
        let key: String = key.chars().take(64).collect();
        return Err(OpError::invalid(
            &format!("capabilities.{key}"),
            "must be a boolean, number or string, or a list of them",
        ));
    }
    let capabilities = Value::Object(hb.capabilities);
    if capabilities.as_object().map_or(0, |c| c.len()) > 64 || capabilities.to_string().len() > 8192
    {
        return Err(OpError::invalid(
            "capabilities",
            "at most 64 entries and 8 KiB",
        ));
    }
    let record = HeartbeatRecord {
        received_at: now,
        agent_version: hb.agent_version,
        kubernetes_version: hb.kubernetes_version,
        capabilities,
    };
    let name = cluster.to_string();
    let first_check = store
        .writing(move |tx| {
            let cl = tx.active_cluster(&name)?;
            tx.put_heartbeat(cl.id, &record)?;
            Ok(tx.readiness_inputs(cl.id, &cl.name)?.datasource.is_none())
        })
        .await?;
    let (r, _) = readiness::evaluate(store, now, cluster).await?;
    Ok(HeartbeatOutcome {
        readiness: readiness::view(cluster, &r),
        needs_datasource_check: first_check,
    })
}

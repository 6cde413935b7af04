//! Readiness storage: agent heartbeats, datasource checks and the readiness state of each
//! cluster. [`Tx::evaluate_readiness`] reads the inputs, lets the caller's pure rule
//! decide, and writes the state and (on a change only) its `ReadinessChanged` audit row,
//! all in one transaction on the single writer: concurrent evaluations cannot both
//! record the same change.

use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value};

use super::{Read, StoreError, Tx};
use crate::events::config_change::{action, AuditContext, Change};

/// The latest heartbeat of a cluster's agent.
#[derive(Debug, Clone, PartialEq)]
pub struct HeartbeatRecord {
    pub received_at: i64,
    pub agent_version: String,
    pub kubernetes_version: String,
    /// JSON object.
    pub capabilities: Value,
}

/// The latest datasource check of a cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasourceCheckRecord {
    pub checked_at: i64,
    pub reachable: bool,
    pub missing_metrics: Vec<String>,
    pub message: String,
}

/// The last finished run of a cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct LastRun {
    pub id: String,
    pub status: String,
    pub finished_at: Option<i64>,
    /// First error message, when the run had errors.
    pub error: Option<String>,
}

/// What readiness is decided from.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadinessInputs {
    pub heartbeat: Option<HeartbeatRecord>,
    pub datasource: Option<DatasourceCheckRecord>,
    pub last_run: Option<LastRun>,
}

/// A stored readiness state.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadinessRecord {
    pub state: String,
    pub reasons: Vec<String>,
    pub checks: Value,
    pub since: i64,
    pub evaluated_at: i64,
}

/// A decision: state, reasons, and the per-check detail.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadinessDecision {
    pub state: &'static str,
    pub reasons: Vec<String>,
    pub checks: Value,
}

impl Read<'_> {
    /// The inputs of `cluster_id` (named `cluster` in the runs table).
    pub fn readiness_inputs(
        &self,
        cluster_id: i64,
        cluster: &str,
    ) -> Result<ReadinessInputs, StoreError> {
        let heartbeat = self
            .0
            .query_row(
                "SELECT received_at, agent_version, kubernetes_version, capabilities
                 FROM cluster_heartbeats WHERE cluster_id = ?1",
                [cluster_id],
                |r| {
                    Ok(HeartbeatRecord {
                        received_at: r.get(0)?,
                        agent_version: r.get(1)?,
                        kubernetes_version: r.get(2)?,
                        capabilities: serde_json::from_str(&r.get::<_, String>(3)?)
                            .unwrap_or(Value::Null),
                    })
                },
            )
            .optional()?;
        let datasource = self
            .0
            .query_row(
                "SELECT checked_at, reachable, missing_metrics, message
                 FROM cluster_datasource_checks WHERE cluster_id = ?1",
                [cluster_id],
                |r| {
                    Ok(DatasourceCheckRecord {
                        checked_at: r.get(0)?,
                        reachable: r.get(1)?,
                        missing_metrics: serde_json::from_str(&r.get::<_, String>(2)?)
                            .unwrap_or_default(),
                        message: r.get(3)?,
                    })
                },
            )
            .optional()?;
        let last_run = self
            .0
            .query_row(
                "SELECT id, status, finished_at, json_extract(errors, '$[0].message') FROM runs
                 WHERE cluster = ?1 AND status != 'running' ORDER BY seq DESC LIMIT 1",
                [cluster],
                |r| {
                    Ok(LastRun {
                        id: r.get(0)?,
                        status: r.get(1)?,
                        finished_at: r.get(2)?,
                        error: r.get(3)?,
                    })
                },
            )
            .optional()?;
        Ok(ReadinessInputs {
            heartbeat,
            datasource,
            last_run,
        })
    }

    /// The stored readiness of `cluster_id`.
    pub fn readiness(&self, cluster_id: i64) -> Result<Option<ReadinessRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                "SELECT state, reasons, checks, since, evaluated_at FROM cluster_readiness
                 WHERE cluster_id = ?1",
                [cluster_id],
                |r| {
                    Ok(ReadinessRecord {
                        state: r.get(0)?,
                        reasons: serde_json::from_str(&r.get::<_, String>(1)?).unwrap_or_default(),
                        checks: serde_json::from_str(&r.get::<_, String>(2)?)
                            .unwrap_or(Value::Null),
                        since: r.get(3)?,
                        evaluated_at: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }
}

impl Tx<'_> {
    /// The readiness row of a new cluster: `not-ready` until its agent reports.
    pub(super) fn insert_initial_readiness(
        &self,
        cluster_id: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "INSERT INTO cluster_readiness (cluster_id, state, reasons, checks, since, evaluated_at)
             VALUES (?1, 'not-ready', '[\"no agent heartbeat received yet\"]', '{}', ?2, ?2)",
            params![cluster_id, now],
        )?;
        Ok(())
    }

    /// Stores the latest heartbeat of `cluster_id`.
    pub fn put_heartbeat(&self, cluster_id: i64, hb: &HeartbeatRecord) -> Result<(), StoreError> {
        self.tx.execute(
            "INSERT INTO cluster_heartbeats
               (cluster_id, received_at, agent_version, kubernetes_version, capabilities)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (cluster_id) DO UPDATE SET received_at = excluded.received_at,
                 agent_version = excluded.agent_version,
                 kubernetes_version = excluded.kubernetes_version,
                 capabilities = excluded.capabilities",
            params![
                cluster_id,
                hb.received_at,
                hb.agent_version,
                hb.kubernetes_version,
                hb.capabilities.to_string()
            ],
        )?;
        Ok(())
    }

    /// Stores the latest datasource check of `cluster_id`.
    pub fn put_datasource_check(
        &self,
        cluster_id: i64,
        c: &DatasourceCheckRecord,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "INSERT INTO cluster_datasource_checks
               (cluster_id, checked_at, reachable, missing_metrics, message)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (cluster_id) DO UPDATE SET checked_at = excluded.checked_at,
                 reachable = excluded.reachable, missing_metrics = excluded.missing_metrics,
                 message = excluded.message",
            params![
                cluster_id,
                c.checked_at,
                c.reachable,
                json!(c.missing_metrics).to_string(),
                c.message
            ],
        )?;
        Ok(())
    }

    /// Reads the inputs of the active cluster `cluster`, asks `decide`, stores the
    /// result and, when the state differs from the stored one, records one
    /// `ReadinessChanged` under `ctx`, all in this transaction. Returns the new record
    /// and whether it changed.
    pub fn evaluate_readiness(
        &self,
        cluster: &str,
        now: i64,
        ctx: &AuditContext,
        decide: impl FnOnce(&ReadinessInputs) -> ReadinessDecision,
    ) -> Result<(ReadinessRecord, bool), StoreError> {
        let c = self.active_cluster(cluster)?;
        let decision = decide(&self.readiness_inputs(c.id, &c.name)?);
        let before = self.readiness(c.id)?;
        let before_state = before.as_ref().map(|b| b.state.clone());
        let changed = before_state.as_deref() != Some(decision.state);
        let since = match (&before, changed) {
            (Some(b), false) => b.since,
            _ => now,
        };
        self.tx.execute(
            "INSERT INTO cluster_readiness (cluster_id, state, reasons, checks, since, evaluated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (cluster_id) DO UPDATE SET state = excluded.state,
                 reasons = excluded.reasons, checks = excluded.checks, since = excluded.since,
                 evaluated_at = excluded.evaluated_at",
            params![
                c.id,
                decision.state,
                json!(decision.reasons).to_string(),
                decision.checks.to_string(),
                since,
                now
            ],
        )?;
        if changed {
            let change = Change::new(
                action::READINESS_CHANGED,
                "readiness",
                &c.name,
                Some(&c.name),
            )
            .before(json!({ "state": before_state }))
            .after(json!({ "state": decision.state }));
            let ctx = AuditContext {
                reason: Some(decision.reasons.join("; ")).filter(|r| !r.is_empty()),
                ..ctx.clone()
            };
            self.record_change(&ctx, now, &change)?;
        }
        Ok((
            ReadinessRecord {
                state: decision.state.to_string(),
                reasons: decision.reasons,
                checks: decision.checks,
                since,
                evaluated_at: now,
            },
            changed,
        ))
    }
}

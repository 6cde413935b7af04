//! The `approvals` table: an operator's one-time approval of one recommendation of an
//! audit-mode workload. Pending until the agent reports `applied ApprovedOnce` with its
//! id ([`Tx::consume_approval`], inside the event batch's transaction); never usable twice.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension};

use super::approval_carry::carries_over;
use super::{is_unique_violation, Read, StoreError, Tx};
use crate::wire::{RecommendationSummary, WorkloadKey};

/// A stored approval.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRecord {
    pub id: String,
    pub workload_id: String,
    pub recommendation_id: String,
    /// The audit actor JSON of the approver.
    pub actor: String,
    pub created_at: i64,
    pub consumed_at: Option<i64>,
    pub consumed_by_event: Option<String>,
    /// When a run last carried it over to a new recommendation with the same values.
    pub carried_at: Option<i64>,
    /// When it lapsed (a run superseded its recommendation with other values), and why.
    pub lapsed: Option<(i64, String)>,
}

const SELECT: &str = "SELECT a.id, a.workload_id, a.recommendation_id, a.actor, a.created_at, \
    a.consumed_at, a.consumed_by_event, a.carried_at, a.lapsed_at, a.lapse_reason \
    FROM approvals a";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApprovalRecord> {
    Ok(ApprovalRecord {
        id: r.get(0)?,
        workload_id: r.get(1)?,
        recommendation_id: r.get(2)?,
        actor: r.get(3)?,
        created_at: r.get(4)?,
        consumed_at: r.get(5)?,
        consumed_by_event: r.get(6)?,
        carried_at: r.get(7)?,
        lapsed: match (r.get::<_, Option<i64>>(8)?, r.get::<_, Option<String>>(9)?) {
            (Some(at), why) => Some((at, why.unwrap_or_default())),
            _ => None,
        },
    })
}

impl Read<'_> {
    /// The approval of `recommendation_id`, if any.
    pub fn approval_of(
        &self,
        recommendation_id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("{SELECT} WHERE a.recommendation_id = ?1"),
                [recommendation_id],
                from_row,
            )
            .optional()?)
    }

    /// Workload `id`'s most recent approval (pending, applied or lapsed), if any.
    pub fn latest_approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("{SELECT} WHERE a.workload_id = ?1 ORDER BY a.created_at DESC LIMIT 1"),
                [id],
                from_row,
            )
            .optional()?)
    }

    /// Pending approvals of the latest recommendations of `cluster`'s workloads, by
    /// recommendation id (what the agent feed shows).
    pub fn pending_approvals(
        &self,
        cluster: &str,
    ) -> Result<HashMap<String, ApprovalRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!(
            "{SELECT} JOIN workloads w ON w.id = a.workload_id
                 AND w.latest_rec_id = a.recommendation_id
             WHERE w.cluster = ?1 AND a.consumed_at IS NULL AND a.lapsed_at IS NULL"
        ))?;
        let rows = stmt.query_map([cluster], from_row)?;
        let mut out = HashMap::new();
        for r in rows {
            let r = r?;
            out.insert(r.recommendation_id.clone(), r);
        }
        Ok(out)
    }
}

impl Tx<'_> {
    /// Before `next` supersedes its workload's latest recommendation: a pending approval
    /// of that one moves to `next` when `next` asks for the same values within its
    /// change tolerance, else lapses with the reason (`approval_carry`).
    pub(super) fn carry_or_lapse_approval(
        &self,
        next: &super::recommendations::NewRecommendation,
        now: i64,
    ) -> Result<(), StoreError> {
        let pending: Option<(String, String)> = self
            .tx
            .prepare_cached(
                "SELECT a.id, r.summary FROM workloads w
                 JOIN recommendations r ON r.id = w.latest_rec_id
                 JOIN approvals a ON a.recommendation_id = r.id
                 WHERE w.id = ?1 AND a.consumed_at IS NULL AND a.lapsed_at IS NULL",
            )?
            .query_row([&next.workload_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((id, approved)) = pending else {
            return Ok(());
        };
        let parse = |s: &str| serde_json::from_str::<RecommendationSummary>(s).ok();
        let verdict = match (parse(&approved), parse(&next.summary)) {
            (Some(a), Some(n)) => carries_over(&a, &n, next.change_tolerance),
            _ => Err("the new recommendation cannot be compared with the approved one".into()),
        };
        match verdict {
            Ok(()) => self.tx.execute(
                "UPDATE approvals SET recommendation_id = ?2, carried_at = ?3 WHERE id = ?1",
                params![id, next.id, now],
            )?,
            Err(why) => self.tx.execute(
                "UPDATE approvals SET lapsed_at = ?2, lapse_reason = ?3 WHERE id = ?1",
                params![id, now, why],
            )?,
        };
        Ok(())
    }

    /// Records an approval; a recommendation already approved (pending or consumed) is
    /// a `Conflict`.
    pub fn insert_approval(&self, a: &ApprovalRecord) -> Result<(), StoreError> {
        self.tx
            .execute(
                "INSERT INTO approvals (id, workload_id, recommendation_id, actor, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    a.id,
                    a.workload_id,
                    a.recommendation_id,
                    a.actor,
                    a.created_at
                ],
            )
            .map_err(|e| {
                if is_unique_violation(&e) {
                    StoreError::Conflict(format!(
                        "an approval of recommendation {}",
                        a.recommendation_id
                    ))
                } else {
                    e.into()
                }
            })?;
        Ok(())
    }

    /// Marks approval `id` consumed by event `event_id` when it is pending and belongs
    /// to the workload the event is about (`cluster` + `workload`). Returns whether it
    /// was consumed now.
    pub(super) fn consume_approval(
        &self,
        cluster: &str,
        workload: &WorkloadKey,
        id: &str,
        event_id: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        Ok(self.tx.execute(
            "UPDATE approvals SET consumed_at = ?3, consumed_by_event = ?4
             WHERE id = ?1 AND consumed_at IS NULL
               AND workload_id IN (SELECT id FROM workloads WHERE cluster = ?2
                                     AND namespace = ?5 AND kind = ?6 AND name = ?7)",
            params![
                id,
                cluster,
                now,
                event_id,
                workload.namespace,
                workload.kind,
                workload.name
            ],
        )? == 1)
    }
}

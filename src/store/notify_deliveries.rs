//! The `notification_deliveries` table: every message kerf owes or owed a channel, with
//! its status, attempts and the receiver's last answer (the delivery log of the UI), and
//! the queries of the senders (what is due, per channel).

use rusqlite::{params, OptionalExtension};

use super::notify_channels::TeamScope;
use super::{Page, Read, StoreError, Tx};

/// A message to record.
#[derive(Debug, Clone)]
pub struct NewDelivery {
    /// The delivery id receivers see (UUID).
    pub id: String,
    pub channel_id: i64,
    /// `events`, `notice`, `digest` or `test`.
    pub kind: &'static str,
    /// Recording the same key twice records it once.
    pub dedupe_key: String,
    pub title: String,
    pub message_json: String,
    pub event_ids: Vec<String>,
}

/// A stored delivery.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRecord {
    pub seq: i64,
    pub id: String,
    pub channel_id: i64,
    pub channel_name: String,
    pub channel_kind: String,
    pub kind: String,
    pub title: String,
    pub message_json: String,
    pub event_ids: Vec<String>,
    pub status: String,
    pub attempts: i64,
    pub next_attempt_at: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub delivered_at: Option<i64>,
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub delivered: bool,
    /// The receiver's HTTP status or SMTP reply code, when it answered.
    pub status: Option<i64>,
    /// What went wrong (secrets scrubbed).
    pub error: Option<String>,
    /// When to try again; `None` after a failure gives up (status `failed`).
    pub retry_at: Option<i64>,
}

/// Filters of the delivery log; all optional.
#[derive(Debug, Clone, Default)]
pub struct DeliveryFilter {
    pub scope: TeamScope,
    pub channel_id: Option<i64>,
    pub status: Option<String>,
    pub kind: Option<String>,
    pub before_seq: Option<i64>,
    pub limit: usize,
}

const SELECT: &str = "SELECT d.seq, d.id, d.channel_id, c.name, c.type, d.kind, d.title,
        d.message_json, d.event_ids, d.status, d.attempts, d.next_attempt_at, d.last_status,
        d.last_error, d.created_at, d.updated_at, d.delivered_at, c.team_id
    FROM notification_deliveries d JOIN notification_channels c ON c.id = d.channel_id";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(DeliveryRecord, Option<i64>)> {
    let ids: String = r.get(8)?;
    Ok((
        DeliveryRecord {
            seq: r.get(0)?,
            id: r.get(1)?,
            channel_id: r.get(2)?,
            channel_name: r.get(3)?,
            channel_kind: r.get(4)?,
            kind: r.get(5)?,
            title: r.get(6)?,
            message_json: r.get(7)?,
            event_ids: serde_json::from_str(&ids).unwrap_or_default(),
            status: r.get(9)?,
            attempts: r.get(10)?,
            next_attempt_at: r.get(11)?,
            last_status: r.get(12)?,
            last_error: r.get(13)?,
            created_at: r.get(14)?,
            updated_at: r.get(15)?,
            delivered_at: r.get(16)?,
        },
        r.get(17)?,
    ))
}

impl Read<'_> {
    /// Pending deliveries of `channel_id` due at `now`, oldest first.
    pub fn due_deliveries(
        &self,
        channel_id: i64,
        now: i64,
        limit: usize,
    ) -> Result<Vec<DeliveryRecord>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!(
            "{SELECT} WHERE d.status = 'pending' AND d.channel_id = ?1 AND d.next_attempt_at <= ?2
             ORDER BY d.seq LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![channel_id, now, limit as i64], from_row)?;
        Ok(rows.map(|r| r.map(|(d, _)| d)).collect::<Result<_, _>>()?)
    }

    /// Enabled channels with pending deliveries, and the earliest time one of them is due.
    /// A disabled channel's deliveries wait (pending) until it is enabled again.
    pub fn pending_channels(&self) -> Result<Vec<(i64, i64)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT d.channel_id, MIN(d.next_attempt_at) FROM notification_deliveries d
             JOIN notification_channels c ON c.id = d.channel_id
             WHERE d.status = 'pending' AND c.enabled = 1 GROUP BY d.channel_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One delivery by id, in scope.
    pub fn delivery(
        &self,
        id: &str,
        scope: &TeamScope,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        let row = self
            .0
            .query_row(&format!("{SELECT} WHERE d.id = ?1"), [id], from_row)
            .optional()?;
        Ok(row
            .filter(|(_, team)| super::notify_channels::reaches(scope, *team))
            .map(|(d, _)| d))
    }

    /// The delivery log, newest first; returns the page and the seq to continue below.
    pub fn deliveries(&self, f: &DeliveryFilter) -> Result<Page<DeliveryRecord>, StoreError> {
        let mut sql = format!("{SELECT} WHERE 1 = 1");
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        let mut push = |clause: &str, v: rusqlite::types::Value| {
            args.push(v);
            sql.push_str(&format!(" AND {clause} ?{}", args.len()));
        };
        if let Some(c) = f.channel_id {
            push("d.channel_id =", c.into());
        }
        if let Some(s) = &f.status {
            push("d.status =", s.clone().into());
        }
        if let Some(k) = &f.kind {
            push("d.kind =", k.clone().into());
        }
        if let Some(b) = f.before_seq {
            push("d.seq <", b.into());
        }
        if let Some(teams) = &f.scope {
            let list = teams
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(",");
            sql.push_str(&format!(" AND c.team_id IN ({list})"));
        }
        sql.push_str(&format!(" ORDER BY d.seq DESC LIMIT {}", f.limit + 1));
        let mut stmt = self.0.prepare(&sql)?;
        let rows: Vec<DeliveryRecord> = stmt
            .query_map(rusqlite::params_from_iter(args), from_row)?
            .map(|r| r.map(|(d, _)| d))
            .collect::<Result<_, _>>()?;
        Ok(Page::of_probe(rows, f.limit, |d| d.seq))
    }
}

impl Tx<'_> {
    /// Records `d` as pending, due at `now`; `false` when its dedupe key was recorded
    /// before. Shared by every path that records deliveries.
    pub(super) fn insert_delivery(&self, d: &NewDelivery, now: i64) -> Result<bool, StoreError> {
        let ids =
            serde_json::to_string(&d.event_ids).map_err(|e| StoreError::Task(e.to_string()))?;
        let n = self.tx.execute(
            "INSERT OR IGNORE INTO notification_deliveries (id, channel_id, kind, dedupe_key, title,
                message_json, event_ids, status, attempts, next_attempt_at, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', 0, ?8, ?8, ?8)",
            params![
                d.id,
                d.channel_id,
                d.kind,
                d.dedupe_key,
                d.title,
                d.message_json,
                ids,
                now
            ],
        )?;
        Ok(n == 1)
    }

    /// Books one attempt of delivery `id`.
    pub fn record_attempt(&self, id: &str, a: &Attempt, now: i64) -> Result<(), StoreError> {
        let status = match (a.delivered, a.retry_at) {
            (true, _) => "delivered",
            (false, Some(_)) => "pending",
            (false, None) => "failed",
        };
        self.tx.execute(
            "UPDATE notification_deliveries SET status = ?2, attempts = attempts + 1,
                next_attempt_at = COALESCE(?3, next_attempt_at), last_status = ?4, last_error = ?5,
                updated_at = ?6, delivered_at = CASE WHEN ?2 = 'delivered' THEN ?6 END
             WHERE id = ?1",
            params![id, status, a.retry_at, a.status, a.error, now],
        )?;
        Ok(())
    }

    /// Records a message that was sent at once (a test): one attempt, already booked.
    pub fn record_sent(
        &self,
        d: &NewDelivery,
        attempt: &Attempt,
        now: i64,
    ) -> Result<(), StoreError> {
        self.insert_delivery(d, now)?;
        self.record_attempt(&d.id, attempt, now)
    }
}

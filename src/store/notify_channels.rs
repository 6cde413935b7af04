//! The `notification_channels` table: channel settings (secrets only as a sealed blob,
//! the target only masked), each channel's digest schedule, and the audited changes of
//! channels and digests. Team scope is enforced here, inside the transaction: a caller
//! limited to some teams never reads or changes another team's (or a fleet) channel.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use super::notify_rules::{RuleRecord, RuleWrite};
use super::{is_unique_violation, Read, StoreError, Tx};
use crate::events::config_change::{action, target, AuditContext, Change};

/// Which channels a caller reaches: `None` = all (fleet role), else the channels of
/// these teams only.
pub type TeamScope = Option<Vec<i64>>;

/// A function that turns a stored record into its API representation (the audit's
/// before/after); given by the domain, so the store never knows the wire shape.
pub type View<R> = fn(&R) -> Value;

/// A stored channel.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelRecord {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub team_id: Option<i64>,
    pub team_name: Option<String>,
    pub enabled: bool,
    pub settings_json: String,
    pub target_masked: String,
    pub secrets_sealed: Vec<u8>,
    pub digest: DigestSchedule,
    pub digest_last_slot: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A channel's weekly digest schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestSchedule {
    pub enabled: bool,
    pub schedule: String,
    pub time_zone: String,
}

/// What create and replace write.
#[derive(Debug, Clone)]
pub struct ChannelWrite {
    pub name: String,
    pub kind: String,
    pub team_id: Option<i64>,
    pub enabled: bool,
    pub settings_json: String,
    pub target_masked: String,
    pub secrets_sealed: Vec<u8>,
}

const SELECT: &str = "SELECT c.id, c.name, c.type, c.team_id, t.name, c.enabled, c.settings_json,
        c.target_masked, c.secrets_sealed, c.digest_enabled, c.digest_schedule,
        c.digest_time_zone, c.digest_last_slot, c.created_at, c.updated_at
    FROM notification_channels c LEFT JOIN teams t ON t.id = c.team_id";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChannelRecord> {
    Ok(ChannelRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        team_id: r.get(3)?,
        team_name: r.get(4)?,
        enabled: r.get(5)?,
        settings_json: r.get(6)?,
        target_masked: r.get(7)?,
        secrets_sealed: r.get(8)?,
        digest: DigestSchedule {
            enabled: r.get(9)?,
            schedule: r.get(10)?,
            time_zone: r.get(11)?,
        },
        digest_last_slot: r.get(12)?,
        created_at: r.get(13)?,
        updated_at: r.get(14)?,
    })
}

/// True when `scope` reaches a channel of `team_id`.
pub(in crate::store) fn reaches(scope: &TeamScope, team_id: Option<i64>) -> bool {
    match scope {
        None => true,
        Some(teams) => team_id.is_some_and(|t| teams.contains(&t)),
    }
}

fn write_err(e: rusqlite::Error, name: &str) -> StoreError {
    if is_unique_violation(&e) {
        return StoreError::Conflict(format!("notification channel {name:?}"));
    }
    if matches!(&e, rusqlite::Error::SqliteFailure(f, _)
        if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY)
    {
        return StoreError::NotFound("the team named by teamId".into());
    }
    e.into()
}

fn channel_change(act: &'static str, rec: &ChannelRecord) -> Change {
    Change::new(act, target::NOTIFICATION, rec.id, Some(&rec.name))
}

fn insert(
    conn: &Connection,
    w: &ChannelWrite,
    digest: &DigestSchedule,
    now: i64,
) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO notification_channels (name, type, team_id, enabled, settings_json,
            target_masked, secrets_sealed, digest_enabled, digest_schedule, digest_time_zone,
            digest_last_slot, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?11)",
        params![
            w.name,
            w.kind,
            w.team_id,
            w.enabled,
            w.settings_json,
            w.target_masked,
            w.secrets_sealed,
            digest.enabled,
            digest.schedule,
            digest.time_zone,
            now
        ],
    )
    .map_err(|e| write_err(e, &w.name))?;
    Ok(conn.last_insert_rowid())
}

impl Read<'_> {
    /// The channel `id` if `scope` reaches it.
    pub fn channel(&self, id: i64, scope: &TeamScope) -> Result<Option<ChannelRecord>, StoreError> {
        let rec = self
            .0
            .query_row(&format!("{SELECT} WHERE c.id = ?1"), [id], from_row)
            .optional()?;
        Ok(rec.filter(|r| reaches(scope, r.team_id)))
    }

    /// Every channel `scope` reaches, by name.
    pub fn channels(&self, scope: &TeamScope) -> Result<Vec<ChannelRecord>, StoreError> {
        let mut stmt = self
            .0
            .prepare(&format!("{SELECT} ORDER BY c.name COLLATE NOCASE, c.id"))?;
        let rows: Vec<ChannelRecord> = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows
            .into_iter()
            .filter(|r| reaches(scope, r.team_id))
            .collect())
    }

    /// How many channels the fleet has, and how many of them team `team_id` (fleet
    /// channels: `None`).
    pub fn channel_counts(&self, team_id: Option<i64>) -> Result<(usize, usize), StoreError> {
        let (all, team): (i64, i64) = self.0.query_row(
            "SELECT COUNT(*), COUNT(CASE WHEN team_id IS ?1 THEN 1 END) FROM notification_channels",
            [team_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok((all as usize, team as usize))
    }

    /// The channel `id` in scope, or `NotFound`.
    fn existing_channel(&self, id: i64, scope: &TeamScope) -> Result<ChannelRecord, StoreError> {
        self.channel(id, scope)?
            .ok_or_else(|| StoreError::NotFound(format!("notification channel {id}")))
    }
}

impl Tx<'_> {
    /// Creates a channel with its digest schedule and, when `first_rule` is given (its
    /// `channel_id` is filled in), that rule: one `NotificationChannelCreated` (and one
    /// `NotificationRuleCreated`), recorded by `ctx` at `now` in this transaction.
    /// Refused past `limits` (channels in the fleet, channels of one team).
    #[allow(clippy::too_many_arguments)] // one transaction, each part named
    pub fn create_channel(
        &self,
        ctx: &AuditContext,
        now: i64,
        write: &ChannelWrite,
        digest: &DigestSchedule,
        first_rule: Option<RuleWrite>,
        views: (View<ChannelRecord>, View<RuleRecord>),
        limits: (usize, usize),
    ) -> Result<ChannelRecord, StoreError> {
        let (all, team) = self.channel_counts(write.team_id)?;
        if all >= limits.0 {
            return Err(StoreError::Refused(format!(
                "the fleet has {all} notification channels, the most notifications.max_channels allows; delete one first"
            )));
        }
        if write.team_id.is_some() && team >= limits.1 {
            return Err(StoreError::Refused(format!(
                "the team has {team} notification channels, the most notifications.max_channels_per_team allows; delete one first"
            )));
        }
        let id = insert(self.tx, write, digest, now)?;
        let rec = self.existing_channel(id, &None)?;
        let change =
            channel_change(action::NOTIFICATION_CHANNEL_CREATED, &rec).after(views.0(&rec));
        self.record_change(ctx, now, &change)?;
        if let Some(mut rule) = first_rule {
            rule.channel_id = id;
            let (_, change) = self.insert_rule(&rule, now, views.1)?;
            self.record_change(ctx, now, &change)?;
        }
        Ok(rec)
    }

    /// Replaces channel `id` (in `scope`) at `now`; the change is
    /// `NotificationChannelUpdated` with before/after (for [`super::Store::write_audited`]).
    pub fn update_channel(
        &self,
        id: i64,
        scope: &TeamScope,
        write: &ChannelWrite,
        now: i64,
        view: View<ChannelRecord>,
    ) -> Result<(ChannelRecord, Change), StoreError> {
        let before = self.existing_channel(id, scope)?;
        self.tx
            .execute(
                "UPDATE notification_channels SET name = ?2, type = ?3, team_id = ?4, enabled = ?5,
                    settings_json = ?6, target_masked = ?7, secrets_sealed = ?8, updated_at = ?9
                 WHERE id = ?1",
                params![
                    id,
                    write.name,
                    write.kind,
                    write.team_id,
                    write.enabled,
                    write.settings_json,
                    write.target_masked,
                    write.secrets_sealed,
                    now
                ],
            )
            .map_err(|e| write_err(e, &write.name))?;
        let after = self.existing_channel(id, &None)?;
        let change = channel_change(action::NOTIFICATION_CHANNEL_UPDATED, &after)
            .before(view(&before))
            .after(view(&after));
        Ok((after, change))
    }

    /// Deletes channel `id` (in `scope`) with its rules and delivery log; the change is
    /// `NotificationChannelDeleted`.
    pub fn delete_channel(
        &self,
        id: i64,
        scope: &TeamScope,
        view: View<ChannelRecord>,
    ) -> Result<((), Change), StoreError> {
        let before = self.existing_channel(id, scope)?;
        self.tx
            .execute("DELETE FROM notification_channels WHERE id = ?1", [id])?;
        let change =
            channel_change(action::NOTIFICATION_CHANNEL_DELETED, &before).before(view(&before));
        Ok(((), change))
    }

    /// Sets channel `id`'s digest schedule; the change is `NotificationDigestUpdated`
    /// (target id `digest`, name = the channel's name). A changed schedule starts afresh
    /// from `now`.
    pub fn update_digest(
        &self,
        id: i64,
        scope: &TeamScope,
        digest: &DigestSchedule,
        now: i64,
        view: View<ChannelRecord>,
    ) -> Result<(ChannelRecord, Change), StoreError> {
        let before = self.existing_channel(id, scope)?;
        self.tx.execute(
            "UPDATE notification_channels SET digest_enabled = ?2, digest_schedule = ?3,
                digest_time_zone = ?4, digest_last_slot = ?5, updated_at = ?5 WHERE id = ?1",
            params![id, digest.enabled, digest.schedule, digest.time_zone, now],
        )?;
        let after = self.existing_channel(id, &None)?;
        let change = Change::new(
            action::NOTIFICATION_DIGEST_UPDATED,
            target::NOTIFICATION,
            "digest",
            Some(&after.name),
        )
        .before(view(&before))
        .after(view(&after));
        Ok((after, change))
    }
}

//! The `notification_rules` table: which events go to which channel, and the audited
//! rule changes. A rule is reached through its channel's team scope.

use rusqlite::{params, OptionalExtension};

use super::notify_channels::{reaches, TeamScope, View};
use super::{Read, StoreError, Tx};
use crate::events::config_change::{action, target, Change};

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRecord {
    pub id: i64,
    pub channel_id: i64,
    pub channel_name: String,
    /// The channel's team (rules are reached through it).
    pub channel_team_id: Option<i64>,
    pub name: String,
    pub enabled: bool,
    pub match_json: String,
    pub team_id: Option<i64>,
    pub team_name: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What create and replace write.
#[derive(Debug, Clone)]
pub struct RuleWrite {
    pub channel_id: i64,
    pub name: String,
    pub enabled: bool,
    pub match_json: String,
    pub team_id: Option<i64>,
}

const SELECT: &str = "SELECT r.id, r.channel_id, c.name, c.team_id, r.name, r.enabled,
        r.match_json, r.team_id, t.name, r.created_at, r.updated_at
    FROM notification_rules r
    JOIN notification_channels c ON c.id = r.channel_id
    LEFT JOIN teams t ON t.id = r.team_id";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RuleRecord> {
    Ok(RuleRecord {
        id: r.get(0)?,
        channel_id: r.get(1)?,
        channel_name: r.get(2)?,
        channel_team_id: r.get(3)?,
        name: r.get(4)?,
        enabled: r.get(5)?,
        match_json: r.get(6)?,
        team_id: r.get(7)?,
        team_name: r.get(8)?,
        created_at: r.get(9)?,
        updated_at: r.get(10)?,
    })
}

fn rule_change(act: &'static str, rec: &RuleRecord) -> Change {
    Change::new(act, target::NOTIFICATION, rec.id, Some(&rec.name))
}

impl Read<'_> {
    /// The rule `id` if `scope` reaches its channel.
    pub fn rule(&self, id: i64, scope: &TeamScope) -> Result<Option<RuleRecord>, StoreError> {
        let rec = self
            .0
            .query_row(&format!("{SELECT} WHERE r.id = ?1"), [id], from_row)
            .optional()?;
        Ok(rec.filter(|r| reaches(scope, r.channel_team_id)))
    }

    fn existing_rule(&self, id: i64, scope: &TeamScope) -> Result<RuleRecord, StoreError> {
        self.rule(id, scope)?
            .ok_or_else(|| StoreError::NotFound(format!("notification rule {id}")))
    }

    /// Every rule `scope` reaches (optionally of one channel), by channel then rule.
    pub fn rules(
        &self,
        scope: &TeamScope,
        channel: Option<i64>,
    ) -> Result<Vec<RuleRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!(
            "{SELECT} WHERE ?1 IS NULL OR r.channel_id = ?1 ORDER BY c.name COLLATE NOCASE, r.id"
        ))?;
        let rows: Vec<RuleRecord> = stmt
            .query_map([channel], from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows
            .into_iter()
            .filter(|r| reaches(scope, r.channel_team_id))
            .collect())
    }

    /// Every enabled rule of every enabled channel, with the channel's team (the
    /// dispatcher's view).
    pub fn live_rules(&self) -> Result<Vec<RuleRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!(
            "{SELECT} WHERE r.enabled = 1 AND c.enabled = 1 ORDER BY r.channel_id, r.id"
        ))?;
        let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    fn channel_in_scope(&self, channel_id: i64, scope: &TeamScope) -> Result<(), StoreError> {
        self.channel(channel_id, scope)?
            .map(|_| ())
            .ok_or_else(|| StoreError::NotFound(format!("notification channel {channel_id}")))
    }
}

impl Tx<'_> {
    /// Inserts `w` at `now`; the change is `NotificationRuleCreated`.
    pub(super) fn insert_rule(
        &self,
        w: &RuleWrite,
        now: i64,
        view: View<RuleRecord>,
    ) -> Result<(RuleRecord, Change), StoreError> {
        self.tx.execute(
            "INSERT INTO notification_rules (channel_id, name, enabled, match_json, team_id,
                created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
            params![
                w.channel_id,
                w.name,
                w.enabled,
                w.match_json,
                w.team_id,
                now
            ],
        )?;
        let rec = self.existing_rule(self.tx.last_insert_rowid(), &None)?;
        let change = rule_change(action::NOTIFICATION_RULE_CREATED, &rec).after(view(&rec));
        Ok((rec, change))
    }

    /// Creates a rule on a channel in `scope`; the change is `NotificationRuleCreated`.
    pub fn create_rule(
        &self,
        scope: &TeamScope,
        write: &RuleWrite,
        now: i64,
        view: View<RuleRecord>,
    ) -> Result<(RuleRecord, Change), StoreError> {
        self.channel_in_scope(write.channel_id, scope)?;
        self.insert_rule(write, now, view)
    }

    /// Replaces rule `id`; a move to another channel needs that channel in scope too.
    /// The change is `NotificationRuleUpdated` with before/after.
    pub fn update_rule(
        &self,
        id: i64,
        scope: &TeamScope,
        write: &RuleWrite,
        now: i64,
        view: View<RuleRecord>,
    ) -> Result<(RuleRecord, Change), StoreError> {
        let before = self.existing_rule(id, scope)?;
        self.channel_in_scope(write.channel_id, scope)?;
        self.tx.execute(
            "UPDATE notification_rules SET channel_id = ?2, name = ?3, enabled = ?4,
                match_json = ?5, team_id = ?6, updated_at = ?7 WHERE id = ?1",
            params![
                id,
                write.channel_id,
                write.name,
                write.enabled,
                write.match_json,
                write.team_id,
                now
            ],
        )?;
        let after = self.existing_rule(id, &None)?;
        let change = rule_change(action::NOTIFICATION_RULE_UPDATED, &after)
            .before(view(&before))
            .after(view(&after));
        Ok((after, change))
    }

    /// Deletes rule `id`; the change is `NotificationRuleDeleted`.
    pub fn delete_rule(
        &self,
        id: i64,
        scope: &TeamScope,
        view: View<RuleRecord>,
    ) -> Result<((), Change), StoreError> {
        let before = self.existing_rule(id, scope)?;
        self.tx
            .execute("DELETE FROM notification_rules WHERE id = ?1", [id])?;
        let change = rule_change(action::NOTIFICATION_RULE_DELETED, &before).before(view(&before));
        Ok(((), change))
    }
}

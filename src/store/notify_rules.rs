//! The `notification_rules` table: which events go to which channel, and the audited
//! rule changes. A rule is reached through its channel's team scope.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use super::notify_channels::{get_channel, reaches, TeamScope, View};
use super::{Store, StoreError};
use crate::events::config_change::{action, target, AuditContext, Change};

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

/// The rule `id` if `scope` reaches its channel.
pub fn get_rule(
    conn: &Connection,
    id: i64,
    scope: &TeamScope,
) -> Result<Option<RuleRecord>, StoreError> {
    let rec = conn
        .query_row(&format!("{SELECT} WHERE r.id = ?1"), [id], from_row)
        .optional()?;
    Ok(rec.filter(|r| reaches(scope, r.channel_team_id)))
}

fn existing(conn: &Connection, id: i64, scope: &TeamScope) -> Result<RuleRecord, StoreError> {
    get_rule(conn, id, scope)?
        .ok_or_else(|| StoreError::NotFound(format!("notification rule {id}")))
}

/// Every rule `scope` reaches (optionally of one channel), by channel then rule.
pub fn list_rules(
    conn: &Connection,
    scope: &TeamScope,
    channel: Option<i64>,
) -> Result<Vec<RuleRecord>, StoreError> {
    let mut stmt = conn.prepare(&format!(
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

/// Every enabled rule of every enabled channel, with the channel's team (dispatcher).
pub fn live_rules(conn: &Connection) -> Result<Vec<RuleRecord>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "{SELECT} WHERE r.enabled = 1 AND c.enabled = 1 ORDER BY r.channel_id, r.id"
    ))?;
    let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

fn channel_in_scope(
    conn: &Connection,
    channel_id: i64,
    scope: &TeamScope,
) -> Result<(), StoreError> {
    get_channel(conn, channel_id, scope)?
        .map(|_| ())
        .ok_or_else(|| StoreError::NotFound(format!("notification channel {channel_id}")))
}

fn rule_change(act: &'static str, rec: &RuleRecord) -> Change {
    Change::new(act, target::NOTIFICATION, rec.id, Some(&rec.name))
}

/// Inserts `w` and records `NotificationRuleCreated` inside `tx`.
pub fn insert_audited(
    tx: &Transaction<'_>,
    ctx: &AuditContext,
    now: i64,
    w: &RuleWrite,
    view: View<RuleRecord>,
) -> Result<RuleRecord, StoreError> {
    tx.execute(
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
    let rec = existing(tx, tx.last_insert_rowid(), &None)?;
    let change = rule_change(action::NOTIFICATION_RULE_CREATED, &rec).after(view(&rec));
    super::config_audit::record(tx, ctx, now, &change)?;
    Ok(rec)
}

impl Store {
    /// Creates a rule on a channel in `scope`.
    pub async fn create_rule(
        &self,
        ctx: AuditContext,
        now: i64,
        scope: TeamScope,
        write: RuleWrite,
        view: View<RuleRecord>,
    ) -> Result<RuleRecord, StoreError> {
        self.write(move |conn| {
            let tx = conn.transaction()?;
            channel_in_scope(&tx, write.channel_id, &scope)?;
            let rec = insert_audited(&tx, &ctx, now, &write, view)?;
            tx.commit()?;
            Ok(rec)
        })
        .await
    }

    /// Replaces rule `id`; a move to another channel needs that channel in scope too.
    pub async fn update_rule(
        &self,
        ctx: AuditContext,
        now: i64,
        id: i64,
        scope: TeamScope,
        write: RuleWrite,
        view: View<RuleRecord>,
    ) -> Result<RuleRecord, StoreError> {
        self.audited_sql(ctx, now, move |tx| {
            let before = existing(tx, id, &scope)?;
            channel_in_scope(tx, write.channel_id, &scope)?;
            tx.execute(
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
            let after = existing(tx, id, &None)?;
            let change = rule_change(action::NOTIFICATION_RULE_UPDATED, &after)
                .before(view(&before))
                .after(view(&after));
            Ok((after, change))
        })
        .await
    }

    /// Deletes rule `id`: `NotificationRuleDeleted`.
    pub async fn delete_rule(
        &self,
        ctx: AuditContext,
        now: i64,
        id: i64,
        scope: TeamScope,
        view: View<RuleRecord>,
    ) -> Result<(), StoreError> {
        self.audited_sql(ctx, now, move |tx| {
            let before = existing(tx, id, &scope)?;
            tx.execute("DELETE FROM notification_rules WHERE id = ?1", [id])?;
            let change =
                rule_change(action::NOTIFICATION_RULE_DELETED, &before).before(view(&before));
            Ok(((), change))
        })
        .await
    }

    /// See [`get_rule`].
    pub async fn rule(&self, id: i64, scope: TeamScope) -> Result<Option<RuleRecord>, StoreError> {
        self.read(move |c| get_rule(c, id, &scope)).await
    }

    /// Every team's namespace patterns, by team id (rule and channel scopes).
    pub async fn team_scopes(
        &self,
    ) -> Result<std::collections::HashMap<i64, Vec<super::NamespacePattern>>, StoreError> {
        self.read(|c| {
            Ok(super::teams::list_teams(c)?
                .into_iter()
                .map(|t| (t.id, t.namespaces))
                .collect())
        })
        .await
    }

    /// True when team `id` exists.
    pub async fn team_exists(&self, id: i64) -> Result<bool, StoreError> {
        self.read(move |c| Ok(super::teams::get_team(c, id)?.is_some()))
            .await
    }

    /// Every enabled rule of every enabled channel (the dispatcher's view).
    pub async fn live_rules(&self) -> Result<Vec<RuleRecord>, StoreError> {
        self.read(live_rules).await
    }

    /// See [`list_rules`].
    pub async fn rules(
        &self,
        scope: TeamScope,
        channel: Option<i64>,
    ) -> Result<Vec<RuleRecord>, StoreError> {
        self.read(move |c| list_rules(c, &scope, channel)).await
    }
}

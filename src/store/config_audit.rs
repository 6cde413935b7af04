//! The configuration audit: `config_changed` rows of `audit_events`, written inside the
//! same transaction as the change they describe, and the query behind
//! `GET /v1/audit/config`. Every API change of any kind is recorded by [`record`], from
//! `Store::write_audited` or `Tx::record_change`.

use rusqlite::{params, Connection, Transaction};
use serde_json::{json, Value};

use super::log_query::LogQuery;
use super::{Page, Read, StoreError};
use crate::events::config_change::{forbidden_key, AuditContext, Change};
use crate::events::wellknown::CONFIG_CHANGED;

/// A stored configuration change, as the API serves it.
#[derive(Debug, Clone)]
pub struct StoredChange {
    pub seq: i64,
    /// The full record (id, time, action, actor, target, before, after, reason).
    pub record: Value,
}

/// Filters of the configuration audit query; all optional, combined with AND.
#[derive(Debug, Default, Clone)]
pub struct ConfigAuditFilter {
    pub action: Option<String>,
    pub target_type: Option<String>,
    pub target_id: Option<String>,
    /// Actor name.
    pub actor: Option<String>,
    /// `user`, `token` or `system`.
    pub actor_type: Option<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub before_seq: Option<i64>,
    pub limit: usize,
}

/// Writes one `config_changed` row for `change` made under `ctx` at `now`. Call it
/// inside the transaction that makes the change, so both land or neither does.
pub(in crate::store) fn record(
    conn: &Connection,
    ctx: &AuditContext,
    now: i64,
    change: &Change,
) -> Result<String, StoreError> {
    for side in [&change.before, &change.after].into_iter().flatten() {
        if let Some(key) = forbidden_key(side) {
            return Err(StoreError::Task(format!(
                "refusing to audit {}: before/after holds the secret field {key:?}",
                change.action
            )));
        }
    }
    let id = uuid::Uuid::new_v4().to_string();
    let actor = serde_json::to_string(&ctx.actor).map_err(|e| StoreError::Task(e.to_string()))?;
    let record = json!({
        "id": id,
        "time": crate::timestamp::format_ms(now),
        "action": change.action,
        "actor": ctx.actor,
        "target": change.target,
        "before": change.before,
        "after": change.after,
        "reason": ctx.reason,
    });
    conn.execute(
        "INSERT INTO audit_events
           (id, cluster, type, reason, time_ms, received_at_ms, payload,
            actor, target_type, target_id, before_json, after_json, message)
         VALUES (?1, NULL, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            id,
            CONFIG_CHANGED,
            change.action,
            now,
            record.to_string(),
            actor,
            change.target.kind,
            change.target.id,
            change.before.as_ref().map(Value::to_string),
            change.after.as_ref().map(Value::to_string),
            ctx.reason,
        ],
    )?;
    Ok(id)
}

/// Runs `f` in one transaction and records the change it returns, then commits. When `f`
/// or the audit insert fails, nothing of either is kept.
pub(in crate::store) fn in_transaction<T>(
    conn: &mut Connection,
    ctx: &AuditContext,
    now: i64,
    f: impl FnOnce(&Transaction<'_>) -> Result<(T, Change), StoreError>,
) -> Result<T, StoreError> {
    let tx = conn.transaction()?;
    let (out, change) = f(&tx)?;
    record(&tx, ctx, now, &change)?;
    tx.commit()?;
    Ok(out)
}

impl Read<'_> {
    /// Configuration changes matching `f`, newest first; the next page continues below
    /// the last `seq`.
    pub fn query_config_audit(
        &self,
        f: &ConfigAuditFilter,
    ) -> Result<Page<StoredChange>, StoreError> {
        let mut q = LogQuery::new(
            "SELECT seq, payload FROM audit_events WHERE type = ?",
            CONFIG_CHANGED.to_string().into(),
        );
        q.equal(&[
            ("reason", &f.action),
            ("target_type", &f.target_type),
            ("target_id", &f.target_id),
            ("json_extract(actor, '$.name')", &f.actor),
            ("json_extract(actor, '$.type')", &f.actor_type),
        ]);
        q.window(f.since_ms, f.until_ms, f.before_seq);
        let row = |r: &rusqlite::Row<'_>| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?));
        let page = q.page(self.0, f.limit, row, |(seq, _)| *seq)?;
        let items = page
            .items
            .into_iter()
            .map(|(seq, payload): (i64, String)| {
                let record =
                    serde_json::from_str(&payload).map_err(|e| StoreError::Task(e.to_string()))?;
                Ok(StoredChange { seq, record })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Page {
            items,
            next: page.next,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::config_change::{action, Actor};

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kerf.db");
        let mut conn = Connection::open(&path).expect("open");
        super::super::migrate::run(&mut conn, &path, 0).expect("migrate");
        (dir, conn)
    }

    fn ctx() -> AuditContext {
        AuditContext {
            actor: Actor::system("test"),
            reason: Some("because".into()),
        }
    }

    fn create_team(tx: &Transaction<'_>) -> Result<((), Change), StoreError> {
        tx.execute(
            "INSERT INTO teams (name, created_at, updated_at) VALUES ('t', 0, 0)",
            [],
        )?;
        Ok((
            (),
            Change::new(action::TEAM_CREATED, "team", 1, Some("t")).after(json!({"name": "t"})),
        ))
    }

    fn teams(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM teams", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_change_and_its_audit_row_commit_together() {
        let (_d, mut conn) = db();
        in_transaction(&mut conn, &ctx(), 1, create_team).unwrap();
        let page = Read(&conn)
            .query_config_audit(&ConfigAuditFilter {
                limit: 10,
                ..Default::default()
            })
            .unwrap();
        assert_eq!((teams(&conn), page.items.len()), (1, 1));
        let r = &page.items[0].record;
        assert_eq!(r["action"], "TeamCreated");
        assert_eq!(r["reason"], "because");
        assert_eq!(r["actor"]["type"], "system");
        assert_eq!(r["target"], json!({"type": "team", "id": "1", "name": "t"}));
    }

    #[test]
    fn the_users_reason_is_the_rows_message_as_the_contract_stores_it() {
        let (_d, mut conn) = db();
        in_transaction(&mut conn, &ctx(), 1, create_team).unwrap();
        let message: Option<String> = conn
            .query_row(
                "SELECT message FROM audit_events WHERE type = 'config_changed'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(message.as_deref(), Some("because"));
    }

    #[test]
    fn a_failing_audit_insert_rolls_the_change_back() {
        let (_d, mut conn) = db();
        conn.execute_batch(
            "CREATE TRIGGER audit_down BEFORE INSERT ON audit_events
             WHEN NEW.type = 'config_changed'
             BEGIN SELECT RAISE(ABORT, 'audit is down'); END;",
        )
        .unwrap();
        let err = in_transaction(&mut conn, &ctx(), 1, create_team).unwrap_err();
        assert!(err.to_string().contains("audit is down"), "{err}");
        assert_eq!(teams(&conn), 0, "the team insert was rolled back");
    }

    #[test]
    fn a_secret_in_before_or_after_is_refused_and_nothing_is_written() {
        let (_d, mut conn) = db();
        let err = in_transaction(&mut conn, &ctx(), 1, |tx| {
            let ((), change) = create_team(tx)?;
            Ok((
                (),
                change.after(json!({"name": "t", "passwordHash": "$argon2id$"})),
            ))
        })
        .unwrap_err();
        assert!(err.to_string().contains("passwordHash"), "{err}");
        assert_eq!(teams(&conn), 0);
    }

    #[test]
    fn filters_select_by_action_target_and_actor() {
        let (_d, mut conn) = db();
        in_transaction(&mut conn, &ctx(), 1, create_team).unwrap();
        let other = AuditContext {
            actor: Actor::system("someone-else"),
            reason: None,
        };
        in_transaction(&mut conn, &other, 2, |_| {
            Ok(((), Change::new(action::USER_DELETED, "user", 7, None)))
        })
        .unwrap();
        let base = ConfigAuditFilter {
            limit: 10,
            ..Default::default()
        };
        let by = |f: ConfigAuditFilter| Read(&conn).query_config_audit(&f).unwrap().items.len();
        assert_eq!(by(base.clone()), 2);
        assert_eq!(
            by(ConfigAuditFilter {
                action: Some("UserDeleted".into()),
                ..base.clone()
            }),
            1
        );
        assert_eq!(
            by(ConfigAuditFilter {
                target_type: Some("team".into()),
                ..base.clone()
            }),
            1
        );
        assert_eq!(
            by(ConfigAuditFilter {
                target_id: Some("7".into()),
                ..base.clone()
            }),
            1
        );
        assert_eq!(
            by(ConfigAuditFilter {
                actor: Some("test".into()),
                ..base.clone()
            }),
            1
        );
        assert_eq!(
            by(ConfigAuditFilter {
                actor_type: Some("user".into()),
                ..base.clone()
            }),
            0
        );
        let first = Read(&conn)
            .query_config_audit(&ConfigAuditFilter {
                limit: 1,
                ..base.clone()
            })
            .unwrap();
        let rest = Read(&conn)
            .query_config_audit(&ConfigAuditFilter {
                before_seq: first.next,
                ..base
            })
            .unwrap();
        assert_eq!(
            (first.items.len(), rest.items.len(), rest.next),
            (1, 1, None)
        );
    }
}

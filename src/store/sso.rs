//! Sign-in through an OpenID Connect provider: the sign-ins in flight (`sso_logins`),
//! the group mappings set in the UI (`sso_group_mappings`), the users the provider
//! created (`users.subject`), what the provider gives them (their team memberships),
//! and the provider's tokens a session keeps (`sessions.sso_*`).

use rusqlite::{params, OptionalExtension};

use super::{Read, StoreError, Tx, UserRecord};

/// A sign-in between the redirect to the provider and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoLogin {
    pub state_sha256: String,
    pub browser_sha256: String,
    pub nonce: String,
    pub pkce_verifier: String,
    pub redirect_uri: String,
    pub return_to: String,
    pub created_at: i64,
}

/// A group mapping as stored: a fleet `role`, or `team_role` in team `team_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoMappingRecord {
    pub group: String,
    pub role: Option<String>,
    pub team_id: Option<i64>,
    /// The team's name (for the API and the UI).
    pub team_name: Option<String>,
    pub team_role: Option<String>,
}

impl Tx<'_> {
    /// Records a sign-in in flight, dropping those older than `stale_before`.
    pub fn insert_sso_login(&self, l: &SsoLogin, stale_before: i64) -> Result<(), StoreError> {
        self.tx.execute(
            "DELETE FROM sso_logins WHERE created_at < ?1",
            [stale_before],
        )?;
        self.tx.execute(
            "INSERT INTO sso_logins (state_sha256, browser_sha256, nonce, pkce_verifier,
                                     redirect_uri, return_to, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                l.state_sha256,
                l.browser_sha256,
                l.nonce,
                l.pkce_verifier,
                l.redirect_uri,
                l.return_to,
                l.created_at
            ],
        )?;
        Ok(())
    }

    /// The sign-in whose state hashes to `state_sha256`, deleted as it is read: a state
    /// is used once.
    pub fn take_sso_login(&self, state_sha256: &str) -> Result<Option<SsoLogin>, StoreError> {
        Ok(self
            .tx
            .query_row(
                "DELETE FROM sso_logins WHERE state_sha256 = ?1
                 RETURNING state_sha256, browser_sha256, nonce, pkce_verifier, redirect_uri,
                           return_to, created_at",
                [state_sha256],
                |r| {
                    Ok(SsoLogin {
                        state_sha256: r.get(0)?,
                        browser_sha256: r.get(1)?,
                        nonce: r.get(2)?,
                        pkce_verifier: r.get(3)?,
                        redirect_uri: r.get(4)?,
                        return_to: r.get(5)?,
                        created_at: r.get(6)?,
                    })
                },
            )
            .optional()?)
    }

    /// Replaces the mappings set in the UI with `mappings` (team names are ignored).
    pub fn replace_sso_mappings(&self, mappings: &[SsoMappingRecord]) -> Result<(), StoreError> {
        self.tx.execute("DELETE FROM sso_group_mappings", [])?;
        let mut stmt = self.tx.prepare(
            "INSERT INTO sso_group_mappings (group_name, role, team_id, team_role)
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        for m in mappings {
            stmt.execute(params![m.group, m.role, m.team_id, m.team_role])?;
        }
        Ok(())
    }

    /// A user the provider signs in for the first time: no password, its `subject`.
    pub fn insert_sso_user(
        &self,
        username: &str,
        display_name: &str,
        subject: &str,
        now: i64,
    ) -> Result<UserRecord, StoreError> {
        let res = self.tx.execute(
            "INSERT INTO users (username, display_name, role, password_hash, created_at,
                                updated_at, password_changed_at, subject)
             VALUES (?1, ?2, NULL, '', ?3, ?3, ?3, ?4)",
            params![username, display_name, now, subject],
        );
        match res {
            Ok(_) => self.require_user(self.tx.last_insert_rowid()),
            Err(e) if super::is_unique_violation(&e) => {
                Err(StoreError::Conflict(format!("user {username:?}")))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Sets what the provider gives user `id`: its fleet role, display name and team
    /// memberships (`(team id, team role)`), replacing what it had.
    pub fn set_sso_access(
        &self,
        id: i64,
        display_name: &str,
        role: Option<&str>,
        teams: &[(i64, String)],
        now: i64,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "UPDATE users SET role = ?2, display_name = ?3, updated_at = ?4 WHERE id = ?1
             AND (role IS NOT ?2 OR display_name IS NOT ?3)",
            params![id, role, display_name, now],
        )?;
        self.tx
            .execute("DELETE FROM team_members WHERE user_id = ?1", [id])?;
        let mut stmt = self
            .tx
            .prepare("INSERT INTO team_members (team_id, user_id, role) VALUES (?1, ?2, ?3)")?;
        for (team, role) in teams {
            stmt.execute(params![team, id, role])?;
        }
        Ok(())
    }

    /// Keeps the provider's tokens (sealed) with session `id_sha256`, checked at `at`.
    pub fn set_session_sso(
        &self,
        id_sha256: &str,
        sealed: &[u8],
        at: i64,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "UPDATE sessions SET sso_sealed = ?2, sso_checked_at = ?3 WHERE id_sha256 = ?1",
            params![id_sha256, sealed, at],
        )?;
        Ok(())
    }
}

impl Read<'_> {
    /// The mappings set in the UI, by group.
    pub fn sso_mappings(&self) -> Result<Vec<SsoMappingRecord>, StoreError> {
        let mut stmt = self.0.prepare(
            "SELECT m.group_name, m.role, m.team_id, t.name, m.team_role
             FROM sso_group_mappings m LEFT JOIN teams t ON t.id = m.team_id
             ORDER BY m.group_name, t.name, m.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SsoMappingRecord {
                group: r.get(0)?,
                role: r.get(1)?,
                team_id: r.get(2)?,
                team_name: r.get(3)?,
                team_role: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The user the provider knows as `subject`, if it signed in before.
    pub fn user_by_subject(&self, subject: &str) -> Result<Option<UserRecord>, StoreError> {
        let id: Option<i64> = self
            .0
            .query_row("SELECT id FROM users WHERE subject = ?1", [subject], |r| {
                r.get(0)
            })
            .optional()?;
        match id {
            Some(id) => self.get_user(id),
            None => Ok(None),
        }
    }

    /// The provider's tokens (sealed) kept with session `id_sha256` and when they were
    /// last checked; `None` for a password session.
    pub fn session_sso(&self, id_sha256: &str) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
        Ok(self
            .0
            .query_row(
                "SELECT sso_sealed, sso_checked_at FROM sessions
                 WHERE id_sha256 = ?1 AND sso_checked_at IS NOT NULL",
                [id_sha256],
                |r| {
                    Ok((
                        r.get::<_, Option<Vec<u8>>>(0)?.unwrap_or_default(),
                        r.get(1)?,
                    ))
                },
            )
            .optional()?)
    }

    /// The id of the team named `name` (any case).
    pub fn team_id_by_name(&self, name: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .0
            .query_row("SELECT id FROM teams WHERE name = ?1", [name], |r| r.get(0))
            .optional()?)
    }
}

//! The `users` table: local accounts with an optional fleet role and an argon2id hash.
//! The hash leaves this module only through [`Read::user_for_login`].

use rusqlite::{params, Connection, OptionalExtension};

use super::{Read, StoreError, Tx};

/// A user as stored, without the password hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRecord {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    /// Fleet role (`admin`, `editor`, `viewer`), or none for team-only users.
    pub role: Option<String>,
    pub disabled: bool,
    pub created_at: i64,
    pub updated_at: i64,
    pub password_changed_at: i64,
    /// The identity provider's name for the person (issuer and `sub`) of a user who
    /// signs in through it; `None` for a local user.
    pub subject: Option<String>,
}

/// A user to create.
pub struct NewUser<'a> {
    pub username: &'a str,
    pub display_name: &'a str,
    pub role: Option<&'a str>,
    pub password_hash: &'a str,
}

/// Fields to change; `None` leaves a field alone.
#[derive(Debug, Default, Clone)]
pub struct UserPatch {
    pub display_name: Option<String>,
    pub role: Option<Option<String>>,
    pub disabled: Option<bool>,
}

const COLUMNS: &str =
    "id, username, display_name, role, disabled, created_at, updated_at, password_changed_at, subject";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<UserRecord> {
    Ok(UserRecord {
        id: r.get(0)?,
        username: r.get(1)?,
        display_name: r.get(2)?,
        role: r.get(3)?,
        disabled: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
        password_changed_at: r.get(7)?,
        subject: r.get(8)?,
    })
}

/// Creates a user; a taken username (any case) is a `Conflict`.
pub(in crate::store) fn insert_user(
    conn: &Connection,
    new: &NewUser<'_>,
    now: i64,
) -> Result<UserRecord, StoreError> {
    let res = conn.execute(
        "INSERT INTO users (username, display_name, role, password_hash, created_at, updated_at,
                            password_changed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?5)",
        params![
            new.username,
            new.display_name,
            new.role,
            new.password_hash,
            now
        ],
    );
    match res {
        Ok(_) => Read(conn)
            .get_user(conn.last_insert_rowid())?
            .ok_or_else(|| StoreError::Task("inserted user vanished".into())),
        Err(e) if super::is_unique_violation(&e) => {
            Err(StoreError::Conflict(format!("user {:?}", new.username)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The user with `id`, or `NotFound`.
pub(in crate::store) fn require_user(conn: &Connection, id: i64) -> Result<UserRecord, StoreError> {
    Read(conn)
        .get_user(id)?
        .ok_or_else(|| StoreError::NotFound(format!("user {id}")))
}

/// Applies `patch` to user `id`.
pub(in crate::store) fn update_user(
    conn: &Connection,
    id: i64,
    patch: &UserPatch,
    now: i64,
) -> Result<(), StoreError> {
    if let Some(name) = &patch.display_name {
        conn.execute(
            "UPDATE users SET display_name = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, name, now],
        )?;
    }
    if let Some(role) = &patch.role {
        conn.execute(
            "UPDATE users SET role = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, role, now],
        )?;
    }
    if let Some(disabled) = patch.disabled {
        conn.execute(
            "UPDATE users SET disabled = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, disabled, now],
        )?;
        if disabled {
            super::sessions::delete_user_sessions(conn, id)?;
        }
    }
    Ok(())
}

/// Replaces user `id`'s password hash and ends all of their sessions.
pub(in crate::store) fn set_password(
    conn: &Connection,
    id: i64,
    password_hash: &str,
    now: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE users SET password_hash = ?2, password_changed_at = ?3, updated_at = ?3
         WHERE id = ?1",
        params![id, password_hash, now],
    )?;
    super::sessions::delete_user_sessions(conn, id)
}

/// Deletes user `id` with their sessions and team memberships.
pub(in crate::store) fn delete_user(conn: &Connection, id: i64) -> Result<(), StoreError> {
    conn.execute("DELETE FROM users WHERE id = ?1", [id])?;
    Ok(())
}

/// Enabled users with the fleet `admin` role.
pub(in crate::store) fn count_enabled_admins(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled = 0",
        [],
        |r| r.get(0),
    )?)
}

impl Read<'_> {
    /// The user with `id`, if any.
    pub fn get_user(&self, id: i64) -> Result<Option<UserRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT {COLUMNS} FROM users WHERE id = ?1"),
                [id],
                from_row,
            )
            .optional()?)
    }

    /// Every user, by username.
    pub fn list_users(&self) -> Result<Vec<UserRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!(
            "SELECT {COLUMNS} FROM users ORDER BY username COLLATE NOCASE"
        ))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The user named `username` (any case) with its password hash, for login only.
    pub fn user_for_login(
        &self,
        username: &str,
    ) -> Result<Option<(UserRecord, String)>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT {COLUMNS}, password_hash FROM users WHERE username = ?1"),
                [username],
                |r| Ok((from_row(r)?, r.get::<_, String>(9)?)),
            )
            .optional()?)
    }

    /// The user named `username` (any case), without its password hash.
    pub fn user_by_name(&self, username: &str) -> Result<Option<UserRecord>, StoreError> {
        Ok(self.user_for_login(username)?.map(|(u, _)| u))
    }
}

impl Tx<'_> {
    pub fn insert_user(&self, new: &NewUser<'_>, now: i64) -> Result<UserRecord, StoreError> {
        insert_user(self.tx, new, now)
    }

    pub fn update_user(&self, id: i64, patch: &UserPatch, now: i64) -> Result<(), StoreError> {
        update_user(self.tx, id, patch, now)
    }

    pub fn set_password(&self, id: i64, password_hash: &str, now: i64) -> Result<(), StoreError> {
        set_password(self.tx, id, password_hash, now)
    }

    pub fn delete_user(&self, id: i64) -> Result<(), StoreError> {
        delete_user(self.tx, id)
    }
}

impl Read<'_> {
    pub fn require_user(&self, id: i64) -> Result<UserRecord, StoreError> {
        require_user(self.0, id)
    }

    pub fn count_enabled_admins(&self) -> Result<i64, StoreError> {
        count_enabled_admins(self.0)
    }
}

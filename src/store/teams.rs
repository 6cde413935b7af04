//! The `teams`, `team_namespaces` and `team_members` tables: teams own namespaces (cluster
//! and namespace patterns with `*` globs) and give their members a team role there.

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};

use super::{Read, StoreError, Tx};

/// A cluster + namespace pattern a team owns.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NamespacePattern {
    pub cluster: String,
    pub namespace: String,
}

/// A member of a team with their team role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamMember {
    pub user_id: i64,
    pub username: String,
    pub role: String,
}

/// A team with its namespaces and members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamRecord {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub namespaces: Vec<NamespacePattern>,
    pub members: Vec<TeamMember>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A team role held by a caller, with the namespaces it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamGrantRecord {
    pub team_id: i64,
    pub team_name: String,
    pub role: String,
    pub namespaces: Vec<NamespacePattern>,
}

/// Creates a team with its namespaces; a taken name is a `Conflict`.
pub(in crate::store) fn insert_team(
    conn: &Connection,
    name: &str,
    description: &str,
    namespaces: &[NamespacePattern],
    now: i64,
) -> Result<TeamRecord, StoreError> {
    let res = conn.execute(
        "INSERT INTO teams (name, description, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
        params![name, description, now],
    );
    match res {
        Ok(_) => {}
        Err(e) if super::is_unique_violation(&e) => {
            return Err(StoreError::Conflict(format!("team {name:?}")))
        }
        Err(e) => return Err(e.into()),
    }
    let id = conn.last_insert_rowid();
    set_namespaces(conn, id, namespaces, now)?;
    require_team(conn, id)
}

/// The team with `id`, or `NotFound`.
pub(in crate::store) fn require_team(conn: &Connection, id: i64) -> Result<TeamRecord, StoreError> {
    Read(conn)
        .get_team(id)?
        .ok_or_else(|| StoreError::NotFound(format!("team {id}")))
}

fn namespaces_of(conn: &Connection, team_id: i64) -> Result<Vec<NamespacePattern>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT cluster, namespace FROM team_namespaces WHERE team_id = ?1
         ORDER BY cluster, namespace",
    )?;
    let rows = stmt.query_map([team_id], |r| {
        Ok(NamespacePattern {
            cluster: r.get(0)?,
            namespace: r.get(1)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Renames / re-describes team `id`.
pub(in crate::store) fn update_team(
    conn: &Connection,
    id: i64,
    name: Option<&str>,
    description: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
    if let Some(name) = name {
        let res = conn.execute(
            "UPDATE teams SET name = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, name, now],
        );
        if let Err(e) = res {
            return Err(if super::is_unique_violation(&e) {
                StoreError::Conflict(format!("team {name:?}"))
            } else {
                e.into()
            });
        }
    }
    if let Some(description) = description {
        conn.execute(
            "UPDATE teams SET description = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, description, now],
        )?;
    }
    Ok(())
}

/// Replaces the namespaces team `id` owns.
pub(in crate::store) fn set_namespaces(
    conn: &Connection,
    id: i64,
    namespaces: &[NamespacePattern],
    now: i64,
) -> Result<(), StoreError> {
    conn.execute("DELETE FROM team_namespaces WHERE team_id = ?1", [id])?;
    let mut stmt = conn.prepare_cached(
        "INSERT OR IGNORE INTO team_namespaces (team_id, cluster, namespace) VALUES (?1, ?2, ?3)",
    )?;
    for p in namespaces {
        stmt.execute(params![id, p.cluster, p.namespace])?;
    }
    conn.execute(
        "UPDATE teams SET updated_at = ?2 WHERE id = ?1",
        params![id, now],
    )?;
    Ok(())
}

/// Replaces team `id`'s members; an unknown user id is `NotFound`.
pub(in crate::store) fn set_members(
    conn: &Connection,
    id: i64,
    members: &[(i64, String)],
    now: i64,
) -> Result<(), StoreError> {
    conn.execute("DELETE FROM team_members WHERE team_id = ?1", [id])?;
    let mut stmt = conn.prepare_cached(
        "INSERT OR REPLACE INTO team_members (team_id, user_id, role) VALUES (?1, ?2, ?3)",
    )?;
    for (user_id, role) in members {
        super::users::require_user(conn, *user_id)?;
        stmt.execute(params![id, user_id, role])?;
    }
    conn.execute(
        "UPDATE teams SET updated_at = ?2 WHERE id = ?1",
        params![id, now],
    )?;
    Ok(())
}

/// Deletes team `id` with its memberships, namespaces and team tokens.
pub(in crate::store) fn delete_team(conn: &Connection, id: i64) -> Result<(), StoreError> {
    conn.execute("DELETE FROM teams WHERE id = ?1", [id])?;
    Ok(())
}

impl Read<'_> {
    /// The team with `id`, if any.
    pub fn get_team(&self, id: i64) -> Result<Option<TeamRecord>, StoreError> {
        let conn = self.0;
        let head = conn
            .query_row(
                "SELECT id, name, description, created_at, updated_at FROM teams WHERE id = ?1",
                [id],
                |r| {
                    Ok(TeamRecord {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        description: r.get(2)?,
                        namespaces: Vec::new(),
                        members: Vec::new(),
                        created_at: r.get(3)?,
                        updated_at: r.get(4)?,
                    })
                },
            )
            .optional()?;
        let Some(mut team) = head else {
            return Ok(None);
        };
        team.namespaces = namespaces_of(conn, id)?;
        let mut stmt = conn.prepare_cached(
            "SELECT m.user_id, u.username, m.role FROM team_members m
             JOIN users u ON u.id = m.user_id WHERE m.team_id = ?1 ORDER BY u.username",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(TeamMember {
                user_id: r.get(0)?,
                username: r.get(1)?,
                role: r.get(2)?,
            })
        })?;
        team.members = rows.collect::<Result<_, _>>()?;
        Ok(Some(team))
    }

    /// Every team, by name.
    pub fn list_teams(&self) -> Result<Vec<TeamRecord>, StoreError> {
        let ids: Vec<i64> = {
            let mut stmt = self
                .0
                .prepare("SELECT id FROM teams ORDER BY name COLLATE NOCASE")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.extend(self.get_team(id)?);
        }
        Ok(out)
    }

    /// Every team's namespace patterns, by team id (rule and channel scopes).
    pub fn team_scopes(&self) -> Result<HashMap<i64, Vec<NamespacePattern>>, StoreError> {
        Ok(self
            .list_teams()?
            .into_iter()
            .map(|t| (t.id, t.namespaces))
            .collect())
    }

    /// True when team `id` exists.
    pub fn team_exists(&self, id: i64) -> Result<bool, StoreError> {
        Ok(self.get_team(id)?.is_some())
    }

    /// The team roles user `user_id` holds.
    pub fn grants_for_user(&self, user_id: i64) -> Result<Vec<TeamGrantRecord>, StoreError> {
        let pairs: Vec<(i64, String, String)> = {
            let mut stmt = self.0.prepare_cached(
                "SELECT t.id, t.name, m.role FROM team_members m JOIN teams t ON t.id = m.team_id
                 WHERE m.user_id = ?1 ORDER BY t.name",
            )?;
            let rows = stmt.query_map([user_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let mut out = Vec::with_capacity(pairs.len());
        for (team_id, team_name, role) in pairs {
            out.push(TeamGrantRecord {
                team_id,
                namespaces: namespaces_of(self.0, team_id)?,
                team_name,
                role,
            });
        }
        Ok(out)
    }

    /// The grant of a team-scoped token: `role` within team `team_id`.
    pub fn grant_for_team(
        &self,
        team_id: i64,
        role: &str,
    ) -> Result<Option<TeamGrantRecord>, StoreError> {
        let name: Option<String> = self
            .0
            .query_row("SELECT name FROM teams WHERE id = ?1", [team_id], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(match name {
            Some(team_name) => Some(TeamGrantRecord {
                team_id,
                team_name,
                role: role.to_string(),
                namespaces: namespaces_of(self.0, team_id)?,
            }),
            None => None,
        })
    }
}

/// SQL keeping rows whose `cluster_col` and `namespace_col` fall inside one of `scopes`
/// (no scopes: no rows). `param` records each parameter and returns its placeholder, so
/// the condition fits both positional and numbered statements. Patterns are validated to
/// `[a-z0-9.-*]`, so GLOB sees only `*` as special.
pub(super) fn scope_condition(
    scopes: &[NamespacePattern],
    cluster_col: &str,
    namespace_col: &str,
    param: &mut dyn FnMut(rusqlite::types::Value) -> String,
) -> String {
    if scopes.is_empty() {
        return "0".to_string();
    }
    let terms: Vec<String> = scopes
        .iter()
        .map(|p| {
            let c = param(p.cluster.clone().into());
            let n = param(p.namespace.clone().into());
            format!("({cluster_col} GLOB {c} AND {namespace_col} GLOB {n})")
        })
        .collect();
    format!("({})", terms.join(" OR "))
}

impl Tx<'_> {
    pub fn insert_team(
        &self,
        name: &str,
        description: &str,
        namespaces: &[NamespacePattern],
        now: i64,
    ) -> Result<TeamRecord, StoreError> {
        insert_team(self.tx, name, description, namespaces, now)
    }

    pub fn update_team(
        &self,
        id: i64,
        name: Option<&str>,
        description: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        update_team(self.tx, id, name, description, now)
    }

    pub fn set_team_namespaces(
        &self,
        id: i64,
        namespaces: &[NamespacePattern],
        now: i64,
    ) -> Result<(), StoreError> {
        set_namespaces(self.tx, id, namespaces, now)
    }

    pub fn set_team_members(
        &self,
        id: i64,
        members: &[(i64, String)],
        now: i64,
    ) -> Result<(), StoreError> {
        set_members(self.tx, id, members, now)
    }

    pub fn delete_team(&self, id: i64) -> Result<(), StoreError> {
        delete_team(self.tx, id)
    }
}

impl Read<'_> {
    pub fn require_team(&self, id: i64) -> Result<TeamRecord, StoreError> {
        require_team(self.0, id)
    }
}

//! Who is calling and what they hold: fleet roles, team roles within namespace patterns,
//! and cluster agents.

use crate::store::{NamespacePattern, TeamGrantRecord};

/// Fleet-wide roles, in increasing power.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FleetRole {
    Viewer,
    Editor,
    Admin,
}

impl FleetRole {
    pub fn parse(s: &str) -> Option<FleetRole> {
        match s {
            "viewer" => Some(FleetRole::Viewer),
            "editor" => Some(FleetRole::Editor),
            "admin" => Some(FleetRole::Admin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FleetRole::Viewer => "viewer",
            FleetRole::Editor => "editor",
            FleetRole::Admin => "admin",
        }
    }
}

/// Roles within a team's namespaces, in increasing power.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TeamRole {
    Viewer,
    Editor,
    Admin,
}

impl TeamRole {
    pub fn parse(s: &str) -> Option<TeamRole> {
        match s {
            "team-viewer" => Some(TeamRole::Viewer),
            "team-editor" => Some(TeamRole::Editor),
            "team-admin" => Some(TeamRole::Admin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TeamRole::Viewer => "team-viewer",
            TeamRole::Editor => "team-editor",
            TeamRole::Admin => "team-admin",
        }
    }
}

/// A team role held by a caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamGrant {
    pub team_id: i64,
    pub team_name: String,
    pub role: TeamRole,
    pub namespaces: Vec<NamespacePattern>,
}

impl TeamGrant {
    /// Converts a stored grant; an unknown role string yields nothing (fail closed).
    pub fn from_record(r: TeamGrantRecord) -> Option<TeamGrant> {
        Some(TeamGrant {
            role: TeamRole::parse(&r.role)?,
            team_id: r.team_id,
            team_name: r.team_name,
            namespaces: r.namespaces,
        })
    }

    /// True when the team owns `namespace` in `cluster`.
    pub fn covers(&self, cluster: &str, namespace: &str) -> bool {
        self.namespaces.iter().any(|p| {
            super::pattern::matches(&p.cluster, cluster)
                && super::pattern::matches(&p.namespace, namespace)
        })
    }
}

/// How a caller proved who they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallerKind {
    /// A user, through a session cookie.
    User,
    /// An API token (bearer).
    Token,
}

/// A person or automation calling the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub kind: CallerKind,
    pub id: i64,
    pub name: String,
    pub fleet_role: Option<FleetRole>,
    pub teams: Vec<TeamGrant>,
    /// The session's CSRF token and id hash, for cookie-authenticated users.
    pub session: Option<SessionRef>,
}

/// The session a user call came through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRef {
    pub id_sha256: String,
    pub csrf_token: String,
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A user (session) or API token.
    Caller(Caller),
    /// A cluster's agent.
    Cluster { name: String },
}

impl Caller {
    /// True when the fleet role is at least `role`.
    pub fn has_fleet(&self, role: FleetRole) -> bool {
        self.fleet_role.is_some_and(|r| r >= role)
    }

    /// Team grants of at least `role`.
    pub fn grants_at_least(&self, role: TeamRole) -> impl Iterator<Item = &TeamGrant> {
        self.teams.iter().filter(move |g| g.role >= role)
    }
}

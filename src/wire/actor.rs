//! Who made a change: the `actor` of configuration-audit records, and the `pausedBy`
//! of a pause in the config feed.

use serde::{Deserialize, Serialize};

/// What kind of caller made a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ActorKind {
    User,
    Token,
    System,
}

impl ActorKind {
    /// `user`, `token` or `system`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::User => "user",
            ActorKind::Token => "token",
            ActorKind::System => "system",
        }
    }
}

/// A team whose role allowed a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ActorTeam {
    pub id: String,
    pub name: String,
}

/// Who made a change. `teams` is non-empty only when a team role (not a fleet role)
/// allowed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Actor {
    #[serde(rename = "type")]
    pub kind: ActorKind,
    pub id: Option<String>,
    pub name: String,
    #[serde(default)]
    pub teams: Vec<ActorTeam>,
}

impl Actor {
    /// The hub itself (or an offline CLI command run by the operator), named by `what`.
    pub fn system(what: &str) -> Actor {
        Actor {
            kind: ActorKind::System,
            id: None,
            name: what.to_string(),
            teams: Vec::new(),
        }
    }
}

//! Who the provider says the person is (the claims kerf reads) and what their groups
//! give them in kerf: the highest fleet role any mapped group gives, and per team the
//! highest team role. A person in no mapped group gets nothing and is not let in.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::auth::{FleetRole, TeamRole};
use crate::config::oidc::OidcConfig;

/// The person, as the verified claims name them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The issuer and `sub`: one per person and provider.
    pub subject: String,
    pub username: String,
    pub display_name: String,
    pub groups: Vec<String>,
}

/// A group and what it gives; `team` by id (config mappings are resolved to ids first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub group: String,
    pub grant: Grant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    Fleet(FleetRole),
    Team(i64, TeamRole),
}

/// What the mapped groups give a person.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Access {
    pub role: Option<FleetRole>,
    pub teams: BTreeMap<i64, TeamRole>,
}

/// The identity in `claims` under `cfg`'s claim names; `Err` names the missing claim.
pub fn identity(cfg: &OidcConfig, claims: &Map<String, Value>) -> Result<Identity, String> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::trim);
    let sub = text("sub")
        .filter(|s| !s.is_empty())
        .ok_or("the ID token has no sub")?;
    let username = text(&cfg.username_claim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("the provider sent no {} claim", cfg.username_claim))?;
    let display_name = text("name")
        .or_else(|| text(&cfg.email_claim))
        .unwrap_or(username);
    let groups = match claims.get(&cfg.groups_claim) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    };
    Ok(Identity {
        subject: format!("{} {sub}", cfg.issuer),
        username: username.to_string(),
        display_name: display_name.chars().take(200).collect(),
        groups,
    })
}

/// What `groups` give under `mappings`; `None` when no group is mapped.
pub fn access(groups: &[String], mappings: &[Mapping]) -> Option<Access> {
    let mut out = Access::default();
    let mut any = false;
    for m in mappings.iter().filter(|m| groups.contains(&m.group)) {
        any = true;
        match m.grant {
            Grant::Fleet(r) => out.role = out.role.max(Some(r)),
            Grant::Team(team, r) => {
                let held = out.teams.entry(team).or_insert(r);
                *held = (*held).max(r);
            }
        }
    }
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg() -> OidcConfig {
        toml::from_str(
            r#"issuer = "https://idp.example"
               client_id = "kerf""#,
        )
        .unwrap()
    }

    fn map(group: &str, grant: Grant) -> Mapping {
        Mapping {
            group: group.into(),
            grant,
        }
    }

    #[test]
    fn the_highest_role_of_each_kind_wins_and_unmapped_groups_give_nothing() {
        let mappings = [
            map("ops", Grant::Fleet(FleetRole::Viewer)),
            map("leads", Grant::Fleet(FleetRole::Editor)),
            map("shop", Grant::Team(7, TeamRole::Viewer)),
            map("shop-leads", Grant::Team(7, TeamRole::Admin)),
            map("pay", Grant::Team(9, TeamRole::Editor)),
        ];
        let groups = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = access(
            &groups(&["ops", "leads", "shop", "shop-leads", "x"]),
            &mappings,
        )
        .unwrap();
        assert_eq!(a.role, Some(FleetRole::Editor));
        assert_eq!(a.teams, BTreeMap::from([(7, TeamRole::Admin)]));
        let b = access(&groups(&["pay"]), &mappings).unwrap();
        assert_eq!(b.role, None);
        assert_eq!(b.teams, BTreeMap::from([(9, TeamRole::Editor)]));
        assert_eq!(access(&groups(&["x", "y"]), &mappings), None);
        assert_eq!(access(&[], &mappings), None);
    }

    #[test]
    fn the_identity_reads_the_configured_claims_and_one_group_as_a_string() {
        let c = cfg();
        let claims =
            json!({"sub": "42", "preferred_username": "ana", "name": "Ana Lima", "groups": "ops"});
        let id = identity(&c, claims.as_object().unwrap()).unwrap();
        assert_eq!(id.subject, "https://idp.example 42");
        assert_eq!(
            (id.username.as_str(), id.display_name.as_str()),
            ("ana", "Ana Lima")
        );
        assert_eq!(id.groups, vec!["ops".to_string()]);
        let none = json!({"sub": "42", "email": "a@x"});
        assert_eq!(
            identity(&c, none.as_object().unwrap()).unwrap_err(),
            "the provider sent no preferred_username claim"
        );
    }
}

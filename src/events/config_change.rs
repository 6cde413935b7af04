//! Configuration changes (`config_changed`): who changed what, from what, to what and
//! why. Pure vocabulary; `store::config_audit` writes and reads them, `api` serves them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The action names of the events contract's configuration table. Later issues add
/// theirs here (settings, policies, clusters, datasources, notifications...).
pub mod action {
    pub const USER_CREATED: &str = "UserCreated";
    pub const USER_UPDATED: &str = "UserUpdated";
    pub const USER_DELETED: &str = "UserDeleted";
    pub const PASSWORD_RESET: &str = "PasswordReset";
    pub const TOKEN_CREATED: &str = "TokenCreated";
    pub const TOKEN_REVOKED: &str = "TokenRevoked";
    pub const TEAM_CREATED: &str = "TeamCreated";
    pub const TEAM_UPDATED: &str = "TeamUpdated";
    pub const TEAM_DELETED: &str = "TeamDeleted";
    pub const SETTINGS_UPDATED: &str = "SettingsUpdated";
    pub const POLICY_CREATED: &str = "PolicyCreated";
    pub const POLICY_UPDATED: &str = "PolicyUpdated";
    pub const POLICY_DELETED: &str = "PolicyDeleted";
    pub const POLICY_REVERTED: &str = "PolicyReverted";
    pub const CLUSTER_POLICY_CREATED: &str = "ClusterPolicyCreated";
    pub const CLUSTER_POLICY_UPDATED: &str = "ClusterPolicyUpdated";
    pub const CLUSTER_POLICY_REJECTED: &str = "ClusterPolicyRejected";
    pub const CLUSTER_POLICY_DELETED: &str = "ClusterPolicyDeleted";
    pub const OVERRIDE_SET: &str = "OverrideSet";
    pub const OVERRIDE_CLEARED: &str = "OverrideCleared";
    pub const WORKLOAD_APPROVED: &str = "WorkloadApproved";
    pub const DATASOURCE_CREATED: &str = "DatasourceCreated";
    pub const DATASOURCE_UPDATED: &str = "DatasourceUpdated";
    pub const DATASOURCE_DELETED: &str = "DatasourceDeleted";
    pub const CLUSTER_CREATED: &str = "ClusterCreated";
    pub const CLUSTER_UPDATED: &str = "ClusterUpdated";
    pub const CLUSTER_DELETED: &str = "ClusterDeleted";
    pub const AUTOMATION_PAUSED: &str = "AutomationPaused";
    pub const AUTOMATION_RESUMED: &str = "AutomationResumed";
    pub const READINESS_CHANGED: &str = "ReadinessChanged";
    pub const NOTIFICATION_CHANNEL_CREATED: &str = "NotificationChannelCreated";
    pub const NOTIFICATION_CHANNEL_UPDATED: &str = "NotificationChannelUpdated";
    pub const NOTIFICATION_CHANNEL_DELETED: &str = "NotificationChannelDeleted";
    pub const NOTIFICATION_RULE_CREATED: &str = "NotificationRuleCreated";
    pub const NOTIFICATION_RULE_UPDATED: &str = "NotificationRuleUpdated";
    pub const NOTIFICATION_RULE_DELETED: &str = "NotificationRuleDeleted";
    pub const NOTIFICATION_DIGEST_UPDATED: &str = "NotificationDigestUpdated";
    pub const SSO_MAPPINGS_UPDATED: &str = "SsoMappingsUpdated";
}

/// Target types of the configuration table.
pub mod target {
    pub const SETTINGS: &str = "settings";
    pub const POLICY: &str = "policy";
    pub const CLUSTER_POLICY: &str = "cluster-policy";
    pub const WORKLOAD_OVERRIDE: &str = "workload-override";
    pub const APPROVAL: &str = "approval";
    pub const DATASOURCE: &str = "datasource";
    pub const NOTIFICATION: &str = "notification";
}

/// Longest accepted `reason`, in characters.
pub const MAX_REASON_CHARS: usize = 1024;

/// Object keys that must never appear in `before`/`after`: the recorder refuses them, so
/// a representation that grows a secret field fails loudly instead of leaking it.
pub const FORBIDDEN_KEYS: &[&str] = &[
    "password",
    "passwordHash",
    "password_hash",
    "oneTimePassword",
    "tokenValue",
    "token_sha256",
    "tokenSha256",
    "secret",
    "signingSecret",
    "csrfToken",
];

pub use crate::wire::actor::{Actor, ActorKind, ActorTeam};

/// What a change touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub name: Option<String>,
}

/// One change: the action of the contract's table, its target and the target's API
/// representation before and after (absent on create / delete respectively).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub action: &'static str,
    pub target: Target,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

impl Change {
    pub fn new(action: &'static str, kind: &str, id: impl ToString, name: Option<&str>) -> Self {
        Change {
            action,
            target: Target {
                kind: kind.to_string(),
                id: id.to_string(),
                name: name.map(str::to_string),
            },
            before: None,
            after: None,
        }
    }

    pub fn before(mut self, v: impl Serialize) -> Self {
        self.before = serde_json::to_value(v).ok();
        self
    }

    pub fn after(mut self, v: impl Serialize) -> Self {
        self.after = serde_json::to_value(v).ok();
        self
    }
}

/// Who is changing and why: travels from the request into the store transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditContext {
    pub actor: Actor,
    pub reason: Option<String>,
}

impl AuditContext {
    /// `user`, `token` or `system`.
    pub fn actor_kind_str(&self) -> &'static str {
        self.actor.kind.as_str()
    }
}

/// The first forbidden key found anywhere inside `v`, if any.
pub fn forbidden_key(v: &Value) -> Option<&'static str> {
    match v {
        Value::Object(map) => map.iter().find_map(|(k, child)| {
            FORBIDDEN_KEYS
                .iter()
                .find(|f| **f == k.as_str())
                .copied()
                .or_else(|| forbidden_key(child))
        }),
        Value::Array(items) => items.iter().find_map(forbidden_key),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_keys_are_found_at_any_depth() {
        assert_eq!(forbidden_key(&json!({"name": "a"})), None);
        assert_eq!(
            forbidden_key(&json!({"a": [{"b": {"passwordHash": "x"}}]})),
            Some("passwordHash")
        );
    }

    #[test]
    fn actors_serialize_with_their_type() {
        let v = serde_json::to_value(Actor::system("cli")).unwrap();
        assert_eq!(
            v,
            json!({"type": "system", "id": null, "name": "cli", "teams": []})
        );
    }
}

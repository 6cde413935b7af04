//! The recommender settings (schedule, lookback, step, retention, default analysis
//! policy), as stored in the database and served by the API. Validation names the field
//! at fault; the policy is validated by the engine itself.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::analysis::{self, Policy};

/// Settings key of the recommender document.
pub const RECOMMENDER_KEY: &str = "recommender";

/// How and when recommendations are made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct RecommenderSettings {
    /// Cron expression (UTC), 5 fields or 6 with seconds; `@hourly` etc. work.
    pub schedule: String,
    /// How far back each run looks, in seconds.
    pub lookback_seconds: i64,
    /// Query resolution, in seconds.
    pub step_seconds: u32,
    /// Days of recommendation and run history kept; 0 keeps only the latest.
    pub retention_days: u32,
    /// The default analysis policy (the engine's `Policy`; zero fields take defaults).
    /// A new hub starts with the `balanced` preset (`policy::presets`), not the engine's
    /// own defaults.
    #[schema(value_type = Object)]
    pub policy: Policy,
    /// Namespaces runs leave out (`*` globs); Kubernetes' own by default. A run's
    /// `collect.excluded` names what it left out.
    pub excluded_namespaces: Vec<String>,
}

/// Namespaces a new hub leaves out: the control plane's, as KRR does.
pub const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "kube-public", "kube-node-lease"];

impl Default for RecommenderSettings {
    fn default() -> Self {
        RecommenderSettings {
            schedule: super::schedule::DEFAULT_SCHEDULE.into(),
            lookback_seconds: 7 * 86_400,
            step_seconds: 60,
            retention_days: 30,
            policy: crate::policy::presets::fleet_default(),
            excluded_namespaces: SYSTEM_NAMESPACES.iter().map(|n| n.to_string()).collect(),
        }
    }
}

/// A setting that cannot be accepted, naming the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct SettingsError {
    pub field: String,
    pub message: String,
}

pub(super) fn bad(field: &str, message: impl Into<String>) -> SettingsError {
    SettingsError {
        field: field.into(),
        message: message.into(),
    }
}

impl RecommenderSettings {
    /// Validates every field and returns the settings with the policy normalized.
    pub fn validated(&self) -> Result<RecommenderSettings, SettingsError> {
        super::schedule::parse(&self.schedule).map_err(|m| bad("schedule", m))?;
        if !(3_600..=90 * 86_400).contains(&self.lookback_seconds) {
            return Err(bad(
                "lookbackSeconds",
                "must be from 3600 (1 hour) to 7776000 (90 days)",
            ));
        }
        if !(10..=3_600).contains(&self.step_seconds) {
            return Err(bad("stepSeconds", "must be from 10 to 3600"));
        }
        if self.retention_days > 3_650 {
            return Err(bad("retentionDays", "must be from 0 to 3650"));
        }
        let mut excluded = Vec::new();
        for (i, pattern) in self.excluded_namespaces.iter().enumerate() {
            let p = pattern.trim();
            let ok = !p.is_empty()
                && p.len() <= 63
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '*');
            if !ok {
                return Err(bad(
                    &format!("excludedNamespaces[{i}]"),
                    "must be a namespace name or a `*` glob (lower-case letters, digits, '-')",
                ));
            }
            if !excluded.iter().any(|e| e == p) {
                excluded.push(p.to_string());
            }
        }
        let policy = analysis::normalize_policy(&self.policy).map_err(|e| {
            bad(
                "policy",
                e.to_string()
                    .trim_start_matches("invalid policy: ")
                    .to_string(),
            )
        })?;
        Ok(RecommenderSettings {
            schedule: self.schedule.trim().to_string(),
            policy,
            excluded_namespaces: excluded,
            ..self.clone()
        })
    }

    /// The engine's identity of the normalized policy.
    pub fn policy_version(&self) -> String {
        analysis::policy_version(&self.policy).unwrap_or_else(|e| format!("invalid: {e}"))
    }

    /// The settings identity recommendations carry: the policy version plus the
    /// lookback and step that shaped the evidence. A change of any of them makes older
    /// recommendations `RecommendationStale` for the agent.
    pub fn identity(&self) -> String {
        let text = format!(
            "{}|lookback={}|step={}",
            self.policy_version(),
            self.lookback_seconds,
            self.step_seconds
        );
        format!("s1:{}", hex::encode(Sha256::digest(text.as_bytes())))
    }

    /// True when runs leave `namespace` out.
    pub fn excludes(&self, namespace: &str) -> bool {
        self.excluded_namespaces
            .iter()
            .any(|p| crate::policy::glob::glob_match(p, namespace))
    }

    /// History older than this many milliseconds before now is pruned.
    pub fn retention_ms(&self) -> i64 {
        i64::from(self.retention_days) * 86_400_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_have_a_stable_identity() {
        let s = RecommenderSettings::default().validated().unwrap();
        assert_eq!(s.identity(), RecommenderSettings::default().identity());
        assert!(s.identity().starts_with("s1:"));
    }

    #[test]
    fn a_new_hub_analyzes_with_the_fleet_default_and_leaves_system_namespaces_out() {
        let s = RecommenderSettings::default();
        assert_eq!(s.policy, crate::policy::presets::fleet_default());
        assert_ne!(s.policy, analysis::default_policy());
        assert!(s.excludes("kube-system") && s.excludes("kube-node-lease"));
        assert!(!s.excludes("shop"));
        // Settings stored before the key existed take the default exclusion.
        let old: RecommenderSettings = serde_json::from_str(r#"{"schedule":"@hourly"}"#).unwrap();
        assert!(old.excludes("kube-system"));
        let none: RecommenderSettings =
            serde_json::from_str(r#"{"excludedNamespaces":[]}"#).unwrap();
        assert!(!none.excludes("kube-system"));
    }

    #[test]
    fn identity_changes_with_policy_lookback_and_step() {
        let base = RecommenderSettings::default();
        let mut other = base.clone();
        other.lookback_seconds = 86_400;
        assert_ne!(base.identity(), other.identity());
        let mut other = base.clone();
        other.step_seconds = 30;
        assert_ne!(base.identity(), other.identity());
        let mut other = base.clone();
        other.policy.memory.oom_killed_coefficient = 2.0;
        let other = other.validated().unwrap();
        assert_ne!(base.identity(), other.identity());
    }

    #[test]
    fn bad_fields_are_named() {
        let cases: Vec<(&str, RecommenderSettings)> = vec![
            (
                "schedule",
                RecommenderSettings {
                    schedule: "often".into(),
                    ..Default::default()
                },
            ),
            (
                "lookbackSeconds",
                RecommenderSettings {
                    lookback_seconds: 60,
                    ..Default::default()
                },
            ),
            (
                "stepSeconds",
                RecommenderSettings {
                    step_seconds: 1,
                    ..Default::default()
                },
            ),
            (
                "retentionDays",
                RecommenderSettings {
                    retention_days: 9999,
                    ..Default::default()
                },
            ),
        ];
        for (field, s) in cases {
            assert_eq!(s.validated().unwrap_err().field, field);
        }
        let s = RecommenderSettings {
            excluded_namespaces: vec!["Kube_System".into()],
            ..Default::default()
        };
        assert_eq!(s.validated().unwrap_err().field, "excludedNamespaces[0]");
        let mut s = RecommenderSettings::default();
        s.policy.cpu.percentile = 150.0;
        let err = s.validated().unwrap_err();
        assert_eq!(err.field, "policy");
    }
}

//! Validation of policies and overrides. Every problem is reported at once, each with the
//! JSON path of the bad field, so the UI can show it where it belongs.

use serde::Serialize;

use super::model::{FreezeWindow, MaintenanceWindow, OverrideSpec, PolicySpec};

/// One bad field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FieldError {
    /// JSON path such as `guardrails.rollback.watchDuration` or `apply.maintenanceWindows[0].cron`.
    pub path: String,
    pub message: String,
}

#[derive(Default)]
struct Errors(Vec<FieldError>);

impl Errors {
    fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError {
            path: path.into(),
            message: message.into(),
        });
    }
}

/// Parses a duration such as `30s`, `10m`, `2h`, `7d` or `1h30m` into seconds.
pub fn parse_duration(text: &str) -> Option<u64> {
    let d = humantime::parse_duration(text.trim()).ok()?;
    (d.as_secs() > 0 && d.subsec_nanos() == 0).then_some(d.as_secs())
}

/// True for a valid five-field cron expression.
pub fn valid_cron(expr: &str) -> bool {
    crate::cron::Cron::five_fields(expr).is_some()
}

/// True for an IANA time zone name known to kerf's embedded database.
pub fn valid_timezone(name: &str) -> bool {
    crate::cron::Zone::parse(name).is_some()
}

/// The kinds a selector may name: those kerf rightsizes (Deployments, StatefulSets,
/// DaemonSets, Argo Rollouts and CronJobs, applied by the agent; bare ReplicaSets and
/// bare Jobs, recommended only).
pub const SELECTABLE_KINDS: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Rollout",
    "CronJob",
    "Job",
];

/// Why a selector may not name `kind`, if it may not: a kind kerf does not rightsize
/// would select nothing while the policy says it does.
fn unsupported_kind(kind: &str) -> Option<String> {
    if SELECTABLE_KINDS.contains(&kind) {
        return None;
    }
    let why = match kind {
        "Pod" => "kerf does not rightsize bare pods (nothing owns their template)".to_string(),
        other => format!("unsupported workload kind {other:?}"),
    };
    Some(format!(
        "{why}; a selector may name {}",
        SELECTABLE_KINDS.join(", ")
    ))
}

/// All problems of a policy document (empty when valid).
pub fn validate_policy(p: &PolicySpec) -> Vec<FieldError> {
    let mut e = Errors::default();
    if !valid_name(&p.name) {
        e.add("name", "must be 1-63 lower-case letters, digits or '-'");
    }
    if p.description.chars().count() > 1000 {
        e.add("description", "must be at most 1000 characters");
    } else if let Err(why) = crate::names::text(&p.description, true) {
        e.add("description", why);
    }
    if !(-1000..=1000).contains(&p.priority) {
        e.add("priority", "must be between -1000 and 1000");
    }
    for (i, ns) in p.selector.namespaces.iter().enumerate() {
        pattern(&mut e, &format!("selector.namespaces[{i}]"), ns);
    }
    for (i, c) in p.selector.clusters.iter().enumerate() {
        pattern(&mut e, &format!("selector.clusters[{i}]"), c);
    }
    for (i, n) in p.selector.names.iter().enumerate() {
        pattern(&mut e, &format!("selector.names[{i}]"), n);
    }
    for (i, k) in p.selector.kinds.iter().enumerate() {
        if let Some(why) = unsupported_kind(k) {
            e.add(format!("selector.kinds[{i}]"), why);
        }
    }
    for k in p.selector.labels.keys() {
        if k.is_empty() || k.len() > 316 {
            e.add(
                format!("selector.labels.{k}"),
                "label keys must be 1-316 characters",
            );
        }
    }
    if let Some(analysis) = &p.analysis {
        analysis_policy(&mut e, analysis);
    }
    if let Some(g) = &p.guardrails {
        duration(
            &mut e,
            "guardrails.learningPeriod",
            g.learning_period.as_deref(),
        );
        duration(&mut e, "guardrails.cooldown", g.cooldown.as_deref());
        if g.min_confidence.is_some_and(|c| c > 95) {
            e.add("guardrails.minConfidence", "must be between 0 and 95");
        }
        if g.change_tolerance.is_some_and(|t| !(0.0..1.0).contains(&t)) {
            e.add(
                "guardrails.changeTolerance",
                "must be a fraction in [0, 1), e.g. 0.05",
            );
        }
        if let Some(r) = &g.rollback {
            if r.throttling_ratio.is_some_and(|t| !(t > 0.0 && t <= 1.0)) {
                e.add(
                    "guardrails.rollback.throttlingRatio",
                    "must be a fraction in (0, 1]",
                );
            }
            duration(
                &mut e,
                "guardrails.rollback.watchDuration",
                r.watch_duration.as_deref(),
            );
        }
    }
    if let Some(a) = &p.apply {
        duration(&mut e, "apply.fallbackAfter", a.fallback_after.as_deref());
        for (i, w) in a.maintenance_windows.iter().flatten().enumerate() {
            maintenance(&mut e, &format!("apply.maintenanceWindows[{i}]"), w);
        }
        for (i, w) in a.freeze_windows.iter().flatten().enumerate() {
            freeze(&mut e, &format!("apply.freezeWindows[{i}]"), w);
        }
    }
    e.0
}

/// All problems of an override.
pub fn validate_override(o: &OverrideSpec) -> Vec<FieldError> {
    let mut e = Errors::default();
    for (i, c) in o.excluded_containers.iter().enumerate() {
        if c.is_empty() || c.len() > 63 {
            e.add(
                format!("excludedContainers[{i}]"),
                "must be a container name",
            );
        }
    }
    if let Some(t) = &o.expires_at {
        if crate::timestamp::parse_ms(t).is_none() {
            e.add("expiresAt", "must be an RFC 3339 timestamp");
        }
    }
    if o.reason.chars().count() > 1000 {
        e.add("reason", "must be at most 1000 characters");
    }
    e.0
}

fn valid_name(name: &str) -> bool {
    crate::names::cluster(name).is_ok()
}

fn pattern(e: &mut Errors, path: &str, value: &str) {
    let ok = !value.is_empty()
        && value.len() <= 253
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '*'));
    if !ok {
        e.add(
            path,
            "must be a name or a pattern of letters, digits, '-', '.', '_' and '*'",
        );
    }
}

fn duration(e: &mut Errors, path: &str, value: Option<&str>) {
    if let Some(v) = value {
        if parse_duration(v).is_none() {
            e.add(
                path,
                format!("{v:?} is not a duration such as 30m, 24h or 7d"),
            );
        }
    }
}

fn zone(e: &mut Errors, path: &str, tz: &str) {
    if !valid_timezone(tz) {
        e.add(
            format!("{path}.timezone"),
            format!("unknown time zone {tz:?}"),
        );
    }
}

fn maintenance(e: &mut Errors, path: &str, w: &MaintenanceWindow) {
    if !valid_cron(&w.cron) {
        e.add(
            format!("{path}.cron"),
            "must be a five-field cron expression",
        );
    }
    duration(e, &format!("{path}.duration"), Some(&w.duration));
    zone(e, path, &w.timezone);
}

fn freeze(e: &mut Errors, path: &str, w: &FreezeWindow) {
    let absolute = w.start.is_some() || w.end.is_some();
    let recurring = w.cron.is_some() || w.duration.is_some();
    if absolute == recurring {
        e.add(path, "give either start and end, or cron and duration");
        return;
    }
    if absolute {
        let start = w.start.as_deref().and_then(crate::timestamp::parse_ms);
        let end = w.end.as_deref().and_then(crate::timestamp::parse_ms);
        match (start, end) {
            (Some(s), Some(t)) if t > s => {}
            (Some(_), Some(_)) => e.add(format!("{path}.end"), "must be after start"),
            (None, _) => e.add(format!("{path}.start"), "must be an RFC 3339 timestamp"),
            (_, None) => e.add(format!("{path}.end"), "must be an RFC 3339 timestamp"),
        }
    } else {
        if !w.cron.as_deref().is_some_and(valid_cron) {
            e.add(
                format!("{path}.cron"),
                "must be a five-field cron expression",
            );
        }
        duration(
            e,
            &format!("{path}.duration"),
            Some(w.duration.as_deref().unwrap_or("")),
        );
    }
    zone(e, path, &w.timezone);
}

/// The engine's own normalization decides; its message names the field.
fn analysis_policy(e: &mut Errors, value: &serde_json::Value) {
    match serde_json::from_value::<crate::analysis::Policy>(value.clone()) {
        Err(err) => e.add("analysis", format!("not an analysis policy: {err}")),
        Ok(p) => {
            if let Err(err) = crate::analysis::normalize_policy(&p) {
                let text = err.to_string();
                let field = text
                    .split_whitespace()
                    .find(|w| {
                        w.contains('.') && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
                    })
                    .map(|f| format!("analysis.{f}"))
                    .unwrap_or_else(|| "analysis".into());
                e.add(field, text);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(v: serde_json::Value) -> PolicySpec {
        serde_json::from_value(v).expect("decodes")
    }

    #[test]
    fn a_selector_names_only_kinds_kerf_rightsizes_and_says_why_not_the_others() {
        let p = spec(
            json!({"name": "k", "selector": {"kinds": ["Deployment", "ReplicaSet", "Job", "CronJob", "Rollout", "Pod", "Node"]}}),
        );
        let errors = validate_policy(&p);
        let got: Vec<(&str, &str)> = errors
            .iter()
            .map(|e| (e.path.as_str(), e.message.as_str()))
            .collect();
        let tail = "; a selector may name Deployment, StatefulSet, DaemonSet, ReplicaSet, Rollout, CronJob, Job";
        assert_eq!(
            got,
            [
                (
                    "selector.kinds[5]",
                    format!(
                        "kerf does not rightsize bare pods (nothing owns their template){tail}"
                    )
                    .as_str()
                ),
                (
                    "selector.kinds[6]",
                    format!("unsupported workload kind \"Node\"{tail}").as_str()
                ),
            ]
        );
    }

    #[test]
    fn every_bad_field_is_reported_at_once_with_its_path() {
        let p = spec(json!({
            "name": "Bad Name",
            "selector": {"kinds": ["Pod"], "namespaces": ["ok-*", "no spaces"]},
            "analysis": {"cpu": {"percentile": 100}},
            "guardrails": {"minConfidence": 99, "cooldown": "soon", "changeTolerance": 1.5,
                           "rollback": {"throttlingRatio": 2, "watchDuration": "30m"}},
            "apply": {"fallbackAfter": "10m",
                      "maintenanceWindows": [{"cron": "61 * * * *", "duration": "2h", "timezone": "Mars/Olympus"}],
                      "freezeWindows": [{"start": "2026-12-24T00:00:00Z", "end": "2026-12-20T00:00:00Z"},
                                         {"cron": "0 0 * * 5"}]}
        }));
        let paths: Vec<String> = validate_policy(&p).into_iter().map(|e| e.path).collect();
        for want in [
            "name",
            "selector.kinds[0]",
            "selector.namespaces[1]",
            "analysis.cpu.percentile",
            "guardrails.minConfidence",
            "guardrails.cooldown",
            "guardrails.changeTolerance",
            "guardrails.rollback.throttlingRatio",
            "apply.maintenanceWindows[0].cron",
            "apply.maintenanceWindows[0].timezone",
            "apply.freezeWindows[0].end",
            "apply.freezeWindows[1].duration",
        ] {
            assert!(
                paths.iter().any(|p| p == want),
                "missing {want} in {paths:?}"
            );
        }
        assert!(!paths
            .iter()
            .any(|p| p == "apply.fallbackAfter" || p == "guardrails.rollback.watchDuration"));
    }

    #[test]
    fn a_complete_valid_policy_has_no_errors() {
        let p = spec(json!({
            "name": "prod-default", "priority": 10,
            "selector": {"clusters": ["prod-*"], "namespaces": ["shop"], "labels": {"tier": "web"}, "kinds": ["Deployment"]},
            "mode": {"cpu": "auto-patch", "memory": "audit"},
            "analysis": {"cpu": {"percentile": 90}, "memory": {"leakDetection": {}}},
            "guardrails": {"learningPeriod": "7d", "minConfidence": 70, "cooldown": "24h", "changeTolerance": 0.05,
                           "rollback": {"oomKills": 1, "restarts": 3, "throttlingRatio": 0.2, "watchDuration": "30m"}},
            "apply": {"strategy": "in-place", "fallbackAfter": "10m",
                      "maintenanceWindows": [{"cron": "0 2 * * 1-5", "duration": "2h", "timezone": "Europe/Berlin"}],
                      "freezeWindows": [{"start": "2026-12-24T00:00:00Z", "end": "2026-12-27T00:00:00Z"},
                                         {"cron": "0 0 * * 5", "duration": "3d"}]},
            "hpaCoordination": true
        }));
        assert_eq!(validate_policy(&p), vec![]);
    }

    #[test]
    fn unknown_fields_are_refused_when_decoding() {
        let err = serde_json::from_value::<PolicySpec>(json!({"name": "a", "colour": "red"}))
            .unwrap_err();
        assert!(err.to_string().contains("colour"));
    }

    #[test]
    fn durations_read_like_people_write_them() {
        assert_eq!(parse_duration("30m"), Some(1800));
        assert_eq!(parse_duration("7d"), Some(604_800));
        assert_eq!(parse_duration("1h30m"), Some(5400));
        assert_eq!(parse_duration("0s"), None);
        assert_eq!(parse_duration("soon"), None);
    }
}

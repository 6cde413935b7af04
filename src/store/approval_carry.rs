//! What becomes of a pending approval when a run supersedes the recommendation it
//! approved: carried over to the new one when that asks for the same values (each
//! suggested request and limit within the workload's change tolerance of the approved
//! one, the same settings changed), else lapsed with the reason. Pure.

use crate::wire::summary::SettingValues;
use crate::wire::RecommendationSummary;

const MIB: f64 = 1024.0 * 1024.0;

fn quantity(resource: &str, v: f64) -> String {
    match resource {
        "cpu" => format!("{}m", v.round()),
        _ => format!("{} MiB", (v / MIB).round()),
    }
}

/// Every suggested value of `s`: (container, resource, setting, value).
fn suggested(s: &RecommendationSummary) -> Vec<(String, &'static str, &'static str, f64)> {
    let mut out = Vec::new();
    for c in &s.containers {
        for (resource, r) in [("cpu", &c.cpu), ("memory", &c.memory)] {
            let Some(r) = r else { continue };
            for (setting, v) in [("request", &r.requests), ("limit", &r.limits)] {
                if let Some(SettingValues { suggested, .. }) = v {
                    out.push((c.name.clone(), resource, setting, *suggested));
                }
            }
        }
    }
    out
}

/// `Ok` when an approval of `approved` holds for `next` (`tolerance`: the workload's
/// change tolerance, a fraction); else why it lapses, in words.
pub fn carries_over(
    approved: &RecommendationSummary,
    next: &RecommendationSummary,
    tolerance: f64,
) -> Result<(), String> {
    let (old, new) = (suggested(approved), suggested(next));
    for (c, resource, setting, was) in &old {
        let now = new
            .iter()
            .find(|(c2, r2, s2, _)| c2 == c && r2 == resource && s2 == setting);
        match now {
            None => {
                return Err(format!(
                    "the new recommendation no longer changes the {resource} {setting} of {c} (approved: {})",
                    quantity(resource, *was)
                ))
            }
            Some((.., v)) if (v - was).abs() > tolerance * was.abs().max(1.0) => {
                return Err(format!(
                    "the new recommendation sets the {resource} {setting} of {c} to {} (approved: {}), more than {:.0} % apart",
                    quantity(resource, *v),
                    quantity(resource, *was),
                    tolerance * 100.0
                ))
            }
            Some(_) => {}
        }
    }
    if let Some((c, resource, setting, v)) = new.iter().find(|(c, r, s, _)| {
        !old.iter()
            .any(|(c2, r2, s2, _)| c2 == c && r2 == r && s2 == s)
    }) {
        return Err(format!(
            "the new recommendation also changes the {resource} {setting} of {c} (to {}), which was not approved",
            quantity(resource, *v)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(cpu: Option<f64>, memory: Option<f64>) -> RecommendationSummary {
        let setting = |v: f64| {
            serde_json::json!({"requests": {"current": v * 2.0, "suggested": v, "confidence": 90},
                "dataQuality": "available", "coverage": 1.0})
        };
        let mut c = serde_json::json!({"name": "app"});
        if let Some(v) = cpu {
            c["cpu"] = setting(v);
        }
        if let Some(v) = memory {
            c["memory"] = setting(v);
        }
        serde_json::from_value(serde_json::json!({"containers": [c], "dataQuality": "available", "confidence": 90, "coverage": 1.0,
            "notices": []}))
        .expect("summary")
    }

    #[test]
    fn the_same_values_within_tolerance_carry_over_and_others_lapse_with_the_reason() {
        let approved = summary(Some(100.0), Some(400.0 * MIB));
        assert_eq!(
            carries_over(&approved, &summary(Some(104.0), Some(410.0 * MIB)), 0.05),
            Ok(())
        );
        let moved =
            carries_over(&approved, &summary(Some(120.0), Some(400.0 * MIB)), 0.05).unwrap_err();
        assert!(
            moved.contains("cpu request of app to 120m (approved: 100m)"),
            "{moved}"
        );
        let gone = carries_over(&approved, &summary(Some(100.0), None), 0.05).unwrap_err();
        assert!(
            gone.contains("no longer changes the memory request of app (approved: 400 MiB)"),
            "{gone}"
        );
        let more = carries_over(&summary(Some(100.0), None), &approved, 0.05).unwrap_err();
        assert!(more.contains("also changes the memory request"), "{more}");
    }
}

//! Request and limit computation and the per-setting guards (contract §5 steps 12–17,
//! "Material change", "No-action reason selection").

use super::input::Signal;
use super::oom::OomFloor;
use super::output::{Recommendation, Setting};
use super::policy::Bounds;
use super::reason::Reason;
use super::trace::{rule, Disposition, SettingTrace, Step};

/// Everything the sizing rules need for one resource that is not blocked.
pub(crate) struct SizingInput<'a> {
    pub bounds: &'a Bounds,
    pub headroom: f64,
    pub ratio: f64,
    pub requests_only: bool,
    /// usage × headroom, 0 when usage is blocked.
    pub baseline: f64,
    /// The usable usage value (before headroom).
    pub usage: f64,
    pub usage_blocked: bool,
    /// A positive OOM floor and its coefficient.
    pub oom: Option<(OomFloor, f64)>,
    pub request: Signal,
    pub limit: Signal,
    /// Why the current limit cannot be used, if it cannot.
    pub limit_reason: Option<Reason>,
    /// Reasons that forbid reductions and the introduction of a limit.
    pub blockers: Vec<Reason>,
    pub confidence: i64,
}

/// The outcome of sizing one resource.
pub(crate) struct Sizing {
    pub recommendations: Vec<Recommendation>,
    pub settings: Vec<SettingTrace>,
    /// Some bound or limit guard changed or rejected a value.
    pub bound_applied: bool,
    /// When nothing is recommended: which reason explains it.
    pub no_action: Option<Reason>,
}

/// Material change: > 0, ≥ the absolute minimum, and (current = 0 or ≥ the relative
/// minimum). An unset current setting bypasses the thresholds.
pub(crate) fn is_material(current: f64, candidate: f64, unset: bool, bounds: &Bounds) -> bool {
    let change = (candidate - current).abs();
    if unset {
        return candidate > 0.0;
    }
    change > 0.0
        && change >= bounds.minimum_absolute_change
        && (current == 0.0 || change / current >= bounds.minimum_relative_change)
}

fn material_step(current: f64, candidate: f64, unset: bool, bounds: &Bounds) -> Step {
    if unset {
        return Step::calc(rule::INITIALIZE_UNSET, &[("candidate", candidate)]);
    }
    let change = (candidate - current).abs();
    let mut values = vec![
        ("current", current),
        ("candidate", candidate),
        ("absoluteChange", change),
        ("minimumAbsoluteChange", bounds.minimum_absolute_change),
        ("minimumRelativeChange", bounds.minimum_relative_change),
    ];
    if current > 0.0 {
        values.push(("relativeChange", change / current));
    }
    Step::guard(
        rule::MATERIAL_CHANGE,
        &values,
        is_material(current, candidate, false, bounds),
    )
}

#[derive(Default)]
struct Suppression {
    bound_applied: bool,
    by_blocker: Option<Reason>,
    by_bound: bool,
}

/// Computes the request and limit and decides each setting.
pub(crate) fn size(input: &SizingInput<'_>) -> Result<Sizing, String> {
    let b = input.bounds;
    let mut sup = Suppression::default();
    let mut req_steps = Vec::new();
    let mut raw = input.baseline;
    if input.usage_blocked {
        req_steps.push(Step::calc(rule::OOM_WITHOUT_USAGE, &[]));
    } else {
        req_steps.push(Step::calc(
            rule::USAGE_HEADROOM,
            &[
                ("usage", input.usage),
                ("coefficient", input.headroom),
                ("candidate", raw),
            ],
        ));
    }
    if let Some((floor, coefficient)) = input.oom {
        let candidate = raw.max(floor.floor);
        req_steps.push(Step::calc(
            rule::OOM_FLOOR,
            &[
                ("baseline", raw),
                ("floor", floor.floor),
                ("candidate", candidate),
                ("coefficient", coefficient),
            ],
        ));
        raw = candidate;
    }
    let mut request = raw.max(b.minimum).min(b.maximum);
    if input.usage_blocked {
        request = request.max(input.request.value);
    }
    req_steps.push(Step::calc(
        rule::REQUEST_BOUNDS,
        &[
            ("before", raw),
            ("minimum", b.minimum),
            ("maximum", b.maximum),
            ("candidate", request),
        ],
    ));
    sup.bound_applied |= request != raw;
    let limit_calc = if input.requests_only {
        None
    } else {
        Some(compute_limit(input, request, &mut sup)?)
    };
    let limit_usable = input.limit_reason.is_none();
    let limit_changing = match (&limit_calc, limit_usable) {
        (Some((_, _, limit)), true) => is_material(input.limit.value, *limit, input.limit.unset, b),
        _ => false,
    };
    let mut recommendations = Vec::new();
    let req_trace = decide_request(
        input,
        raw,
        request,
        limit_changing,
        req_steps,
        &mut sup,
        &mut recommendations,
    );
    let lim_trace = match limit_calc {
        None => SettingTrace::bare(
            Setting::Limits,
            Disposition::Disabled,
            vec![Reason::LimitChangesDisabled],
        ),
        Some((steps, _, _)) if !limit_usable => SettingTrace {
            setting: Setting::Limits,
            disposition: Disposition::Unavailable,
            reasons: input.limit_reason.into_iter().collect(),
            steps,
        },
        Some((steps, raw_limit, limit)) => {
            let retained = recommendations
                .first()
                .map_or(input.request.value, |r| r.suggested_value);
            let decision = Decision {
                steps,
                raw: raw_limit,
                candidate: limit,
                retained_request: retained,
            };
            decide_limit(input, decision, &mut sup, &mut recommendations)
        }
    };
    let no_action = if recommendations.is_empty() {
        Some(sup.by_blocker.unwrap_or(if sup.by_bound {
            Reason::BoundApplied
        } else {
            Reason::NoMaterialChange
        }))
    } else {
        None
    };
    Ok(Sizing {
        recommendations,
        settings: vec![req_trace, lim_trace],
        bound_applied: sup.bound_applied,
        no_action,
    })
}

/// (steps, raw limit, suggested limit).
fn compute_limit(
    input: &SizingInput<'_>,
    request: f64,
    sup: &mut Suppression,
) -> Result<(Vec<Step>, f64, f64), String> {
    let b = input.bounds;
    let raw = request * input.ratio;
    if !raw.is_finite() {
        return Err("suggested value overflow".into());
    }
    let mut limit = request.max(b.maximum.min(raw));
    if input.usage_blocked && input.limit_reason.is_none() {
        limit = limit.max(input.limit.value);
    }
    sup.bound_applied |= limit != raw;
    let steps = vec![
        Step::calc(
            rule::LIMIT_RATIO,
            &[
                ("request", request),
                ("ratio", input.ratio),
                ("candidate", raw),
            ],
        ),
        Step::calc(
            rule::LIMIT_BOUNDS,
            &[
                ("before", raw),
                ("minimum", request),
                ("maximum", b.maximum),
                ("candidate", limit),
            ],
        ),
    ];
    Ok((steps, raw, limit))
}

struct Decision {
    steps: Vec<Step>,
    raw: f64,
    candidate: f64,
    retained_request: f64,
}

fn decide_request(
    input: &SizingInput<'_>,
    raw: f64,
    request: f64,
    limit_changing: bool,
    mut steps: Vec<Step>,
    sup: &mut Suppression,
    recs: &mut Vec<Recommendation>,
) -> SettingTrace {
    let b = input.bounds;
    let current = input.request;
    let material = is_material(current.value, request, current.unset, b);
    let retained = |steps, reasons| SettingTrace {
        setting: Setting::Requests,
        disposition: Disposition::Retained,
        reasons,
        steps,
    };
    if request < current.value {
        let passed = input.blockers.is_empty();
        steps.push(Step::guard(rule::SAFE_REDUCTION, &[], passed));
        if !passed {
            if material {
                sup.by_blocker.get_or_insert(input.blockers[0]);
            }
            return retained(steps, input.blockers.clone());
        }
    }
    if input.limit_reason.is_none() && input.limit.value > 0.0 {
        let passed = request <= input.limit.value || (limit_changing && !input.requests_only);
        let values = [("candidate", request), ("currentLimit", input.limit.value)];
        steps.push(Step::guard(rule::REQUEST_FITS_LIMIT, &values, passed));
        if !passed {
            sup.bound_applied = true;
            sup.by_bound |= material;
            return retained(steps, vec![Reason::BoundApplied]);
        }
    }
    steps.push(material_step(current.value, request, current.unset, b));
    if !material {
        sup.by_bound |= is_material(current.value, raw, current.unset, b);
        return retained(steps, vec![Reason::NoMaterialChange]);
    }
    recs.push(recommendation(
        Setting::Requests,
        &current,
        request,
        input.confidence,
    ));
    SettingTrace {
        setting: Setting::Requests,
        disposition: Disposition::Recommended,
        reasons: Vec::new(),
        steps,
    }
}

fn decide_limit(
    input: &SizingInput<'_>,
    d: Decision,
    sup: &mut Suppression,
    recs: &mut Vec<Recommendation>,
) -> SettingTrace {
    let b = input.bounds;
    let current = input.limit;
    let mut steps = d.steps;
    let limit = d.candidate;
    let material = is_material(current.value, limit, current.unset, b);
    let retained = |steps, reasons| SettingTrace {
        setting: Setting::Limits,
        disposition: Disposition::Retained,
        reasons,
        steps,
    };
    let covers = limit >= d.retained_request;
    let values = [
        ("candidate", limit),
        ("retainedRequest", d.retained_request),
    ];
    steps.push(Step::guard(rule::LIMIT_COVERS_REQUEST, &values, covers));
    if !covers {
        sup.bound_applied = true;
        sup.by_bound |= material;
        return retained(steps, vec![Reason::BoundApplied]);
    }
    if limit < current.value || current.value == 0.0 {
        let passed = input.blockers.is_empty();
        steps.push(Step::guard(rule::SAFE_REDUCTION, &[], passed));
        if !passed {
            if material {
                sup.by_blocker.get_or_insert(input.blockers[0]);
            }
            return retained(steps, input.blockers.clone());
        }
    }
    steps.push(material_step(current.value, limit, current.unset, b));
    if !material {
        sup.by_bound |= is_material(current.value, d.raw, current.unset, b);
        return retained(steps, vec![Reason::NoMaterialChange]);
    }
    recs.push(recommendation(
        Setting::Limits,
        &current,
        limit,
        input.confidence,
    ));
    SettingTrace {
        setting: Setting::Limits,
        disposition: Disposition::Recommended,
        reasons: Vec::new(),
        steps,
    }
}

fn recommendation(
    setting: Setting,
    current: &Signal,
    suggested: f64,
    confidence: i64,
) -> Recommendation {
    Recommendation {
        setting,
        current_value: current.value,
        current_unset: current.unset,
        suggested_value: suggested,
        confidence,
    }
}

#[cfg(test)]
#[path = "sizing_tests.rs"]
mod tests;

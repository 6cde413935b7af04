//! Resources under pressure (pure): kerf does not lower a resource a container is short
//! of. `Throttled`: a CPU decrease while a changing container's CFS throttling ratio
//! (throttled / all periods, over the recent window: the agent's readings of its
//! kubelet over the last `guardrails.rollback.watchDuration`, and the hub's evidence when
//! it sends some) is above `guardrails.rollback.throttlingRatio`. `OOMKilled`: a memory
//! decrease while a changing container was OOM-killed within `guardrails.learningPeriod`
//! (its pods' last termination) or the hub's analysis saw an OOM kill
//! (`oom-kill-detected`). Only the pressed resource is refused; the other may change.

use super::values::fields_of;
use super::{Ctx, Finding};
use crate::policy::validate::parse_duration;
use crate::timestamp::format_ms;
use crate::wire::{EventResource, Reason};

/// The containers whose `r` goes down somewhere (request or limit).
fn lowered<'a>(c: &'a Ctx, r: EventResource) -> impl Iterator<Item = &'a str> + 'a {
    c.proposal
        .containers
        .iter()
        .filter(move |t| {
            fields_of(r)
                .iter()
                .any(|f| match (t.current.get(*f), t.target.get(*f)) {
                    (Some(now), Some(next)) => next < now,
                    _ => false,
                })
        })
        .map(|t| t.name.as_str())
}

/// The highest throttling ratio known for `container`: measured by the agent, or the
/// hub's evidence.
fn throttling(c: &Ctx, container: &str) -> Option<f64> {
    let measured = c.input.throttling.get(container).copied();
    let hub = c
        .recommendation
        .throttling
        .iter()
        .filter(|t| t.container == container)
        .map(|t| t.ratio)
        .fold(None, |acc: Option<f64>, r| {
            Some(acc.map_or(r, |a| a.max(r)))
        });
    match (measured, hub) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// `Throttled`: no CPU decrease for a container throttled above the threshold.
pub fn throttled(c: &Ctx, r: EventResource) -> Option<Finding> {
    if r != EventResource::Cpu {
        return None;
    }
    let threshold = c.policy.guardrails.rollback.throttling_ratio;
    if threshold <= 0.0 {
        return None;
    }
    let (container, ratio) = lowered(c, r)
        .filter_map(|name| throttling(c, name).map(|ratio| (name, ratio)))
        .find(|(_, ratio)| *ratio > threshold)?;
    Some(
        Finding::new(
            Reason::Throttled,
            format!(
                "container {container} is CPU-throttled in {:.0} % of its periods (threshold {:.0} %): kerf does not lower its CPU",
                ratio * 100.0,
                threshold * 100.0
            ),
        )
        .on(&[EventResource::Cpu])
        .detail("container", container)
        .detail("throttlingRatio", format!("{ratio:.2}"))
        .detail("threshold", format!("{threshold:.2}")),
    )
}

/// `OOMKilled`: no memory decrease for a container OOM-killed recently.
pub fn oom_killed(c: &Ctx, r: EventResource) -> Option<Finding> {
    if r != EventResource::Memory {
        return None;
    }
    let lookback_ms = parse_duration(&c.policy.guardrails.learning_period)
        .map_or(7 * 86_400_000, |s| s as i64 * 1000);
    let since = c.situation.now_ms - lookback_ms;
    let names: Vec<&str> = lowered(c, r).collect();
    let live = c.input.pods.iter().find_map(|p| {
        p.statuses.iter().find_map(|s| {
            let t = s.last_termination.as_ref()?;
            let at = t.finished_at_ms.unwrap_or(c.situation.now_ms);
            (names.contains(&s.name.as_str()) && t.reason == "OOMKilled" && at >= since)
                .then(|| (s.name.clone(), p.pod.name.clone(), at))
        })
    });
    let finding = |message: String| {
        Finding::new(Reason::OOMKilled, message)
            .on(&[EventResource::Memory])
            .detail("lookback", &c.policy.guardrails.learning_period)
    };
    if let Some((container, pod, at)) = live {
        return Some(
            finding(format!(
                "container {container} of pod {pod} was OOM-killed at {}: kerf does not lower its memory",
                format_ms(at)
            ))
            .detail("container", container)
            .detail("pod", pod)
            .detail("oomKilledAt", format_ms(at)),
        );
    }
    let hub = c.recommendation.containers.iter().find(|s| {
        names.contains(&s.name.as_str())
            && s.memory
                .as_ref()
                .is_some_and(|m| m.notices.iter().any(|n| n == "oom-kill-detected"))
    })?;
    Some(
        finding(format!(
            "the hub's analysis saw container {} OOM-killed: kerf does not lower its memory",
            hub.name
        ))
        .detail("container", &hub.name)
        .detail("source", "hub"),
    )
}

//! Previous-release fallback (contract §7): when the current rollout has missing usage,
//! too little history or too few samples, the first of up to three earlier rollouts whose
//! own evidence passes every check supplies the usage. Rollouts are never pooled.

use super::context::ContainerCtx;
use super::error::Error;
use super::input::CurrentIdentity;
use super::output::{DataQuality, QualityStatus, Resource, RolloutFallback};
use super::reason::Reason;
use super::release::{infer_release_start, BoundaryView};
use super::trace::TraceFallback;
use super::usage::Usage;

/// At most this many previous releases are examined (skipped entries use a slot).
const MAX_PREVIOUS_RELEASES: usize = 3;

/// The usage a previous rollout supplied.
pub(crate) struct Fallback {
    pub usage: Usage,
    pub rollout: RolloutFallback,
}

/// Whether the current usage reasons call for a fallback.
pub(crate) fn wants_fallback(reasons: &[Reason]) -> bool {
    !reasons.contains(&Reason::UnknownSeriesIdentity)
        && reasons.iter().any(|r| {
            matches!(
                r,
                Reason::MissingUsage | Reason::InsufficientHistory | Reason::InsufficientSamples
            )
        })
}

/// Tries previous releases in order; returns every attempt and the accepted one, if any.
pub(crate) fn try_previous_releases(
    ctx: &ContainerCtx<'_>,
    resource: Resource,
    current: &DataQuality,
) -> Result<(Vec<TraceFallback>, Option<Fallback>), Error> {
    let container = ctx.container;
    let mut seen = vec![container.target.release.as_str()];
    let mut attempts = Vec::new();
    let entries = container.previous_releases.iter().enumerate();
    for (r, entry) in entries.take(MAX_PREVIOUS_RELEASES) {
        if entry.release.is_empty() || seen.contains(&entry.release.as_str()) {
            continue;
        }
        seen.push(&entry.release);
        let eval = entry
            .evaluation_time
            .min(ctx.evaluation_time)
            .min(ctx.identity.release_started_at);
        if eval <= ctx.window_start {
            attempts.push(rejected(&entry.release, vec![Reason::MissingUsage]));
            continue;
        }
        let view = BoundaryView {
            workload_uid: &container.target.workload_uid,
            release: &entry.release,
            series: [&entry.cpu, &entry.memory],
            oom_kills: &container.oom_kills,
            window_start: ctx.window_start,
            evaluation_time: eval,
        };
        let asserted = CurrentIdentity {
            release: entry.release.clone(),
            release_started_at: entry.release_started_at,
            ..CurrentIdentity::default()
        };
        let boundary = infer_release_start(&asserted, &view);
        let identity = boundary.identity;
        let [cpu_facts, memory_facts] = &boundary.facts;
        let series = match resource {
            Resource::Memory => (entry.memory.as_slice(), memory_facts.as_slice()),
            Resource::Cpu => (entry.cpu.as_slice(), cpu_facts.as_slice()),
        };
        let start = ctx.window_start.max(identity.release_started_at);
        let path = format!("previousReleases[{r}].{}", resource.as_str());
        let usage = ctx.measure(resource, series, &entry.release, (start, eval), &path)?;
        if usage.winner.is_none() || !usage.quality.reasons.is_empty() {
            attempts.push(rejected(&entry.release, usage.quality.reasons));
            continue;
        }
        attempts.push(TraceFallback {
            release: entry.release.clone(),
            selected: true,
            reasons: Vec::new(),
        });
        let mut current_quality = current.clone();
        current_quality.status = QualityStatus::Unavailable;
        let rollout = RolloutFallback {
            release: entry.release.clone(),
            release_started_at: identity.release_started_at,
            release_start_inferred: identity.release_start_inferred,
            evaluation_time: eval,
            current_data_quality: current_quality,
        };
        return Ok((attempts, Some(Fallback { usage, rollout })));
    }
    Ok((attempts, None))
}

fn rejected(release: &str, reasons: Vec<Reason>) -> TraceFallback {
    TraceFallback {
        release: release.to_string(),
        selected: false,
        reasons,
    }
}

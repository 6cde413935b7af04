//! The per-resource pipeline (contract §5 "Per resource"): identity, usage, fallback,
//! OOM evidence, current settings, inventory, then either a blocked result or sizing.

use super::context::ContainerCtx;
use super::error::Error;
use super::fallback::{try_previous_releases, wants_fallback};
use super::guards::{identity_reasons, inventory_reason, signal_reason};
use super::input::Signal;
use super::oom::{oom_floor, FloorBases};
use super::output::{
    DataQuality, OomAdjustment, QualityStatus, Resource, ResourceAnalysis, ResourceEvidence,
    Setting,
};
use super::reason::Reason;
use super::series::OomKill;
use super::sizing::{size, SizingInput};
use super::trace::{method, DecisionTrace, Disposition, SettingTrace, TraceSource, TRACE_VERSION};
use super::usage::{Aggregation, Usage};

/// Analyzes one resource of one container. `oom_kills` are the selected events (memory
/// only; empty for CPU).
pub(crate) fn analyze_resource(
    ctx: &ContainerCtx<'_>,
    resource: Resource,
    oom_kills: &[&OomKill],
) -> Result<ResourceAnalysis, Error> {
    let target = &ctx.container.target;
    let (eval, fresh) = (ctx.evaluation_time, ctx.policy.evidence.freshness_seconds);
    let rsa = ctx.identity.release_started_at;
    let obs = ctx.observation(resource);
    let mut quality = DataQuality::empty();
    identity_reasons(&ctx.identity, target, eval, fresh)
        .into_iter()
        .for_each(|r| quality.add(r));
    let identity_blocked = !quality.reasons.is_empty();
    let path = format!("{}.series", resource.as_str());
    let current = ctx.measure(
        resource,
        (&obs.series, ctx.facts(resource)),
        &target.release,
        (ctx.segment_start(), eval),
        &path,
    )?;
    quality = DataQuality {
        reasons: quality.reasons,
        ..current.quality.clone()
    };
    current.quality.reasons.iter().for_each(|r| quality.add(*r));
    let mut ra = Analysis::new(ctx, resource, current);
    if !identity_blocked && wants_fallback(&ra.usage.quality.reasons) {
        let (attempts, accepted) = try_previous_releases(ctx, resource, &quality)?;
        ra.trace_fallbacks = attempts;
        if let Some(fb) = accepted {
            quality = fb.usage.quality.clone();
            ra.source_release = fb.rollout.release.clone();
            ra.usage = Usage {
                fresh_pods: ra.usage.fresh_pods,
                ..fb.usage
            };
            ra.rollout = Some(fb.rollout);
            ra.notices.push(Reason::PreviousReleaseUsage);
        }
    }
    let usage_blocked = !quality.reasons.is_empty();
    let unknown_oom = oom_kills.iter().any(|k| k.memory_limit_bytes == 0.0);
    if !oom_kills.is_empty() {
        ra.notices.push(Reason::OomKillDetected);
    }
    let request_pair = [Reason::MissingCurrentRequest, Reason::StaleCurrentRequest];
    let limit_pair = [Reason::MissingCurrentLimit, Reason::StaleCurrentLimit];
    let request_reason = signal_reason(&obs.current_request, rsa, eval, fresh, request_pair);
    let limit_reason = signal_reason(&obs.current_limit, rsa, eval, fresh, limit_pair);
    request_reason
        .into_iter()
        .chain(limit_reason)
        .for_each(|r| quality.add(r));
    if ctx.identity.release_start_inferred {
        quality.add(Reason::InferredReleaseStart);
    }
    let inventory = inventory_reason(
        &ctx.container.inventory,
        ra.usage.fresh_pods,
        rsa,
        eval,
        fresh,
    );
    inventory.into_iter().for_each(|r| quality.add(r));
    if unknown_oom {
        quality.add(Reason::UnknownOomMemoryLimit);
    }
    let rules = Rules::of(ctx, resource);
    let usage_value = ra.usage.winner.as_ref().map_or(0.0, |w| w.value);
    let baseline = if usage_blocked {
        0.0
    } else {
        usage_value * rules.headroom
    };
    if !baseline.is_finite() {
        return Err(ctx.error(resource, resource.as_str(), "suggested value overflow"));
    }
    let floor = if identity_blocked || request_reason.is_some() || oom_kills.is_empty() {
        None
    } else {
        let limit = &obs.current_limit;
        let bases = FloorBases {
            current_limit: if limit_reason.is_none() {
                limit.value
            } else {
                0.0
            },
            current_request: obs.current_request.value,
            usage_baseline: baseline,
            coefficient: ctx.policy.memory.oom_killed_coefficient,
        };
        let f =
            oom_floor(oom_kills, &bases).map_err(|t| ctx.error(resource, resource.as_str(), &t))?;
        (f.floor > 0.0).then_some(f)
    };
    if identity_blocked || request_reason.is_some() || (usage_blocked && floor.is_none()) {
        return Ok(ra.blocked(quality, oom_kills));
    }
    let blockers: Vec<Reason> = inventory
        .into_iter()
        .chain(unknown_oom.then_some(Reason::UnknownOomMemoryLimit))
        .collect();
    let sizing = size(&SizingInput {
        bounds: rules.bounds,
        headroom: rules.headroom,
        ratio: rules.ratio,
        requests_only: rules.requests_only,
        baseline,
        usage: usage_value,
        usage_blocked,
        oom: floor.map(|f| (f, ctx.policy.memory.oom_killed_coefficient)),
        request: obs.current_request,
        limit: obs.current_limit,
        limit_reason,
        blockers,
        confidence: if usage_blocked {
            0
        } else {
            ra.usage.confidence
        },
    })
    .map_err(|t| ctx.error(resource, resource.as_str(), &t))?;
    if sizing.bound_applied {
        quality.add(Reason::BoundApplied);
    }
    if rules.requests_only {
        quality.add(Reason::LimitChangesDisabled);
    }
    quality.status = if quality.reasons.is_empty() {
        QualityStatus::Available
    } else {
        QualityStatus::Partial
    };
    if sizing.no_action == Some(Reason::NoMaterialChange) {
        quality.add(Reason::NoMaterialChange);
    }
    let oom_adjustment = floor.map(|f| OomAdjustment {
        baseline_request_bytes: baseline,
        oom_request_floor_bytes: f.floor,
        used_usage_fallback: f.used_usage_fallback,
        used_current_fallback: f.used_current_fallback,
    });
    let source = if usage_blocked {
        oom_source(&target.release, oom_kills)
    } else {
        ra.source()
    };
    Ok(ResourceAnalysis {
        decision_trace: DecisionTrace {
            version: TRACE_VERSION.to_string(),
            source,
            fallbacks: ra.trace_fallbacks.clone(),
            settings: sizing.settings,
        },
        target: target.clone(),
        resource,
        recommendations: sizing.recommendations,
        evidence: ra.evidence(oom_kills),
        data_quality: quality,
        no_action_reason: sizing.no_action,
        notices: ra.notices.clone(),
        oom_adjustment,
        memory_leak: None,
        rollout_fallback: ra.rollout.clone(),
    })
}

/// The sizing policy of one resource.
struct Rules<'a> {
    headroom: f64,
    ratio: f64,
    bounds: &'a super::policy::Bounds,
    requests_only: bool,
}

impl<'a> Rules<'a> {
    fn of(ctx: &'a ContainerCtx<'_>, resource: Resource) -> Rules<'a> {
        let (cpu, mem) = (&ctx.policy.cpu, &ctx.policy.memory);
        match resource {
            Resource::Cpu => Rules {
                headroom: cpu.headroom_coefficient,
                ratio: cpu.limits_to_requests_ratio,
                bounds: &cpu.bounds,
                requests_only: cpu.requests_only,
            },
            Resource::Memory => Rules {
                headroom: mem.headroom_coefficient,
                ratio: mem.limits_to_requests_ratio,
                bounds: &mem.bounds,
                requests_only: mem.requests_only,
            },
        }
    }
}

/// State carried through one resource analysis.
struct Analysis<'c, 'a> {
    ctx: &'c ContainerCtx<'a>,
    resource: Resource,
    usage: Usage,
    source_release: String,
    trace_fallbacks: Vec<super::trace::TraceFallback>,
    rollout: Option<super::output::RolloutFallback>,
    notices: Vec<Reason>,
}

impl<'c, 'a> Analysis<'c, 'a> {
    fn new(ctx: &'c ContainerCtx<'a>, resource: Resource, usage: Usage) -> Self {
        Analysis {
            ctx,
            resource,
            usage,
            source_release: ctx.container.target.release.clone(),
            trace_fallbacks: Vec::new(),
            rollout: None,
            notices: Vec::new(),
        }
    }

    fn source(&self) -> TraceSource {
        let (method, percentile) = match self.ctx.aggregation(self.resource) {
            Aggregation::Maximum => (method::MAXIMUM, 0.0),
            Aggregation::Percentile(p) => (method::PERCENTILE, p),
        };
        let w = self.usage.winner.as_ref();
        TraceSource {
            release: self.source_release.clone(),
            series_id: w.map(|w| w.series_id.clone()).unwrap_or_default(),
            pod_uid: w.map(|w| w.pod_uid.clone()).unwrap_or_default(),
            timestamp: w.map_or(0, |w| w.timestamp),
            method: method.to_string(),
            percentile,
        }
    }

    fn evidence(&self, oom_kills: &[&OomKill]) -> ResourceEvidence {
        let obs = self.ctx.observation(self.resource);
        let aggregated_usage = match &self.usage.winner {
            Some(w) => Signal {
                available: true,
                unset: false,
                value: w.value,
                timestamp: w.timestamp,
            },
            None => Signal::default(),
        };
        ResourceEvidence {
            aggregated_usage,
            current_request: obs.current_request.canonical(),
            current_limit: obs.current_limit.canonical(),
            identity: self.ctx.identity.clone(),
            inventory: self.ctx.container.inventory.clone(),
            oom_kills: oom_kills.iter().map(|k| (*k).clone()).collect(),
        }
    }

    /// Step 11: no sizing; every reason is reported on both settings.
    fn blocked(self, mut quality: DataQuality, oom_kills: &[&OomKill]) -> ResourceAnalysis {
        quality.status = QualityStatus::Unavailable;
        let reasons = quality.reasons.clone();
        let settings = [Setting::Requests, Setting::Limits]
            .map(|s| SettingTrace::bare(s, Disposition::Unavailable, reasons.clone()))
            .to_vec();
        ResourceAnalysis {
            decision_trace: DecisionTrace {
                version: TRACE_VERSION.to_string(),
                source: self.source(),
                fallbacks: self.trace_fallbacks.clone(),
                settings,
            },
            target: self.ctx.container.target.clone(),
            resource: self.resource,
            recommendations: Vec::new(),
            evidence: self.evidence(oom_kills),
            no_action_reason: reasons.first().copied(),
            data_quality: quality,
            notices: self.notices,
            oom_adjustment: None,
            memory_leak: None,
            rollout_fallback: self.rollout,
        }
    }
}

/// Trace source of the OOM-only path: the latest selected event.
fn oom_source(release: &str, oom_kills: &[&OomKill]) -> TraceSource {
    let last = oom_kills.last();
    TraceSource {
        release: release.to_string(),
        series_id: String::new(),
        pod_uid: last.map(|k| k.pod_uid.clone()).unwrap_or_default(),
        timestamp: last.map_or(0, |k| k.timestamp),
        method: method::OOM_KILL.to_string(),
        percentile: 0.0,
    }
}

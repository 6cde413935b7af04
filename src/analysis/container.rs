//! One container: release-boundary inference, OOM selection, memory then CPU analysis,
//! and the hand-off to the optional leak detector (contract §5 step 3, §10).

use super::context::ContainerCtx;
use super::error::Error;
use super::input::Input;
use super::leak::{self, LeakContext};
use super::oom::select_oom_kills;
use super::output::{Resource, ResourceAnalysis};
use super::policy::Policy;
use super::reason::Reason;
use super::release::{infer_release_start, BoundaryView};
use super::resource::analyze_resource;
use super::series::Series;

/// Memory-quality reasons that prevent the leak detector from running.
const LEAK_BLOCKERS: [Reason; 5] = [
    Reason::MissingIdentity,
    Reason::AmbiguousIdentity,
    Reason::StaleIdentity,
    Reason::UnknownReleaseStart,
    Reason::UnknownSeriesIdentity,
];

/// Analyzes container `index` of `input`; returns its memory and CPU results.
pub(crate) fn analyze_container(
    input: &Input,
    index: usize,
    policy: &Policy,
) -> Result<[ResourceAnalysis; 2], Error> {
    let container = &input.containers[index];
    let target = &container.target;
    let view = BoundaryView {
        workload_uid: &target.workload_uid,
        release: &target.release,
        series: [&container.cpu.series, &container.memory.series],
        oom_kills: &container.oom_kills,
        window_start: input.window_start,
        evaluation_time: input.evaluation_time,
    };
    let boundary = infer_release_start(&container.identity, &view);
    let ctx = ContainerCtx {
        index,
        container,
        policy,
        window_start: input.window_start,
        evaluation_time: input.evaluation_time,
        identity: boundary.identity,
        facts: boundary.facts,
    };
    let kills = select_oom_kills(
        &container.oom_kills,
        &target.workload_uid,
        &target.release,
        ctx.segment_start(),
        ctx.evaluation_time,
    );
    let mut memory = analyze_resource(&ctx, Resource::Memory, &kills)?;
    if let Some(leak_policy) = &policy.memory.leak_detection {
        let series: Vec<&Series> = container
            .memory
            .series
            .iter()
            .filter(|s| !s.workload_uid.is_empty() && s.workload_uid == target.workload_uid)
            .filter(|s| !s.release.is_empty() && s.release == target.release)
            .collect();
        let leak_ctx = LeakContext {
            window_start: ctx.window_start,
            release_started_at: ctx.identity.release_started_at,
            evaluation_time: ctx.evaluation_time,
            series: &series,
            oom_kills: &kills,
            minimum_coverage: policy.evidence.minimum_coverage,
            freshness_seconds: policy.evidence.freshness_seconds,
        };
        let blockers: Vec<Reason> = memory
            .data_quality
            .reasons
            .iter()
            .copied()
            .filter(|r| LEAK_BLOCKERS.contains(r))
            .collect();
        let analysis = if blockers.is_empty() {
            leak::detect(&leak_ctx, leak_policy)
        } else {
            leak::not_run(&leak_ctx, leak_policy, blockers)
        };
        if is_potential_leak(&analysis) {
            memory.notices.push(Reason::PotentialMemoryLeak);
        }
        memory.memory_leak = Some(analysis);
    }
    let cpu = analyze_resource(&ctx, Resource::Cpu, &[])?;
    Ok([memory, cpu])
}

/// Reads `status` through its serialized form, so this stays correct whatever Rust type
/// the leak module chooses for it.
fn is_potential_leak(analysis: &leak::MemoryLeakAnalysis) -> bool {
    serde_json::to_value(analysis)
        .ok()
        .and_then(|v| {
            v.get("status")
                .and_then(|s| s.as_str())
                .map(|s| s == "potential-leak")
        })
        .unwrap_or(false)
}

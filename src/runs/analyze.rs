//! One chunk of a run's analysis: synchronous CPU work (run it on the blocking pool).
//! A chunk is analyzed in one engine call; when that fails, each workload is analyzed
//! alone so one bad workload never costs the others their recommendation.

use std::collections::HashMap;

use serde::Serialize;

use super::summary::{notices_column, summarize};
use super::workload::WorkloadGroup;
use crate::analysis::{
    self, ContainerObservation, Input, Policy, ResourceAnalysis, DETECTOR_VERSION,
    INPUT_SCHEMA_VERSION, OUTPUT_SCHEMA_VERSION,
};
use crate::datasource::Window;
use crate::store::{NewRecommendation, WorkloadSeen};

/// What every workload of a run shares.
#[derive(Debug, Clone)]
pub struct ChunkContext {
    pub run_id: String,
    pub now_ms: i64,
    pub window: Window,
    pub policy: Policy,
    pub policy_version: String,
    pub settings_identity: String,
    /// (per vCPU-hour, per GiB-hour) for this cluster.
    pub prices: (f64, f64),
}

/// The outcome of one chunk.
#[derive(Debug, Default)]
pub struct ChunkOutcome {
    pub analyzed: Vec<(WorkloadSeen, NewRecommendation)>,
    pub failed: Vec<(WorkloadSeen, String)>,
}

/// The stored form of one workload's engine output: the output header plus its results.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkloadAnalysis<'a> {
    schema_version: &'a str,
    detector_version: &'a str,
    policy_version: &'a str,
    results: Vec<&'a ResourceAnalysis>,
}

/// Analyzes `groups` and turns each into a recommendation or a failure.
pub fn analyze_chunk(groups: Vec<WorkloadGroup>, ctx: &ChunkContext) -> ChunkOutcome {
    let mut out = ChunkOutcome::default();
    let mut metas = Vec::with_capacity(groups.len());
    let mut containers = Vec::new();
    for g in groups {
        if g.containers.is_empty() {
            out.failed
                .push((g.seen, "no container of this workload was observed".into()));
            continue;
        }
        metas.push((g.seen, g.info.replicas, g.containers.len()));
        containers.extend(g.containers);
    }
    let input = input_of(ctx, containers);
    match analysis::analyze(&input, &ctx.policy) {
        Ok(output) => {
            let mut by_key: HashMap<(String, String, String), Vec<&ResourceAnalysis>> =
                HashMap::new();
            for r in &output.results {
                let t = &r.target;
                by_key
                    .entry((t.namespace.clone(), t.kind.clone(), t.name.clone()))
                    .or_default()
                    .push(r);
            }
            for (seen, replicas, _) in metas {
                let key = (seen.namespace.clone(), seen.kind.clone(), seen.name.clone());
                let results = by_key.remove(&key).unwrap_or_default();
                push_result(&mut out, ctx, seen, replicas, results);
            }
        }
        Err(e) if metas.len() == 1 => {
            let (seen, _, _) = metas.pop().expect("one workload");
            out.failed.push((seen, e.to_string()));
        }
        Err(_) => {
            let mut rest = input.containers.into_iter();
            for (seen, replicas, n) in metas {
                let own: Vec<ContainerObservation> = rest.by_ref().take(n).collect();
                let input = input_of(ctx, own);
                match analysis::analyze(&input, &ctx.policy) {
                    Ok(output) => {
                        let results = output.results.iter().collect();
                        push_result(&mut out, ctx, seen, replicas, results);
                    }
                    Err(e) => out.failed.push((seen, e.to_string())),
                }
            }
        }
    }
    out
}

fn input_of(ctx: &ChunkContext, containers: Vec<ContainerObservation>) -> Input {
    Input {
        schema_version: INPUT_SCHEMA_VERSION.into(),
        evaluation_time: ctx.window.end_ms,
        window_start: ctx.window.start_ms,
        containers,
    }
}

fn push_result(
    out: &mut ChunkOutcome,
    ctx: &ChunkContext,
    seen: WorkloadSeen,
    replicas: Option<u32>,
    results: Vec<&ResourceAnalysis>,
) {
    if results.is_empty() {
        out.failed.push((
            seen,
            "the engine returned no result for this workload".into(),
        ));
        return;
    }
    let summary = summarize(&results, replicas, ctx.prices);
    let doc = WorkloadAnalysis {
        schema_version: OUTPUT_SCHEMA_VERSION,
        detector_version: DETECTOR_VERSION,
        policy_version: &ctx.policy_version,
        results,
    };
    let analysis = match analysis::json::to_vec_compact(&doc) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            out.failed.push((seen, e.to_string()));
            return;
        }
    };
    let rec = NewRecommendation {
        id: uuid::Uuid::new_v4().to_string(),
        workload_id: seen.id.clone(),
        run_id: ctx.run_id.clone(),
        created_at: ctx.now_ms,
        policy_version: ctx.policy_version.clone(),
        settings_identity: ctx.settings_identity.clone(),
        cost_delta: summary.cost_delta,
        summary: summary.json.to_string(),
        analysis,
        has_changes: summary.has_changes,
        data_quality: summary.data_quality.to_string(),
        notices: notices_column(&summary.notices),
        confidence: summary.confidence,
    };
    out.analyzed.push((seen, rec));
}

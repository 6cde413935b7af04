//! One chunk of a run's analysis: synchronous CPU work (run it on the blocking pool).
//! Each workload is analyzed under its effective policy's `analysis` (resolved from the
//! run's [`PolicySet`]) and its recommendation records that policy's identity. The
//! workloads of a chunk that share an analysis policy go to the engine in one call; when
//! that fails, each is analyzed alone so one bad workload never costs the others their
//! recommendation.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::live_check::{self, SeenRequests};
use super::summary::{notices_column, summarize, with_hpa};
use super::workload::WorkloadGroup;
use crate::analysis::{
    self, ContainerObservation, Input, Policy, ResourceAnalysis, DETECTOR_VERSION,
    INPUT_SCHEMA_VERSION, OUTPUT_SCHEMA_VERSION,
};
use crate::datasource::{Hpa, Window};
use crate::policy::{PolicySet, WorkloadRef};
use crate::store::{NewRecommendation, WorkloadSeen};
use crate::workload::{ContainerRole, WorkloadKey};

/// What every workload of a run shares.
#[derive(Debug, Clone)]
pub struct ChunkContext {
    pub run_id: String,
    pub now_ms: i64,
    pub window: Window,
    /// Policies and overrides, loaded once per run.
    pub policies: PolicySet,
    /// (per vCPU-hour, per GiB-hour) for this cluster.
    pub prices: (f64, f64),
}

/// The outcome of one chunk.
#[derive(Debug, Default)]
pub struct ChunkOutcome {
    pub analyzed: Vec<(WorkloadSeen, NewRecommendation)>,
    pub failed: Vec<(WorkloadSeen, String)>,
    /// The requests in force the run read, to check live changes against.
    pub observed: Vec<SeenRequests>,
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

/// Workloads sharing one analysis policy: the policy, its version, and each workload
/// with its effective-policy identity.
struct PolicyGroup {
    policy: Policy,
    version: String,
    /// Each workload with its effective-policy identity and change tolerance.
    members: Vec<(WorkloadGroup, String, f64)>,
}

/// Analyzes `groups` and turns each into a recommendation or a failure.
pub fn analyze_chunk(groups: Vec<WorkloadGroup>, ctx: &ChunkContext) -> ChunkOutcome {
    let mut out = ChunkOutcome::default();
    let mut by_policy: BTreeMap<String, PolicyGroup> = BTreeMap::new();
    for g in groups {
        if let Some(why) = g.info.unreadable.clone() {
            out.failed.push((g.seen, why));
            continue;
        }
        if g.containers.is_empty() {
            out.failed
                .push((g.seen, "no container of this workload was observed".into()));
            continue;
        }
        out.observed
            .push(live_check::seen(&g.seen, g.info.replicas, &g.containers));
        let s = &g.seen;
        let w = WorkloadRef::from_columns(&s.cluster, &s.namespace, &s.kind, &s.name, &s.labels);
        let r = ctx.policies.resolve(&s.id, &w, ctx.now_ms);
        let batch = crate::datasource::mapping::pods::is_batch(&s.kind);
        let key = format!("{batch}:{}", r.effective.analysis);
        if !by_policy.contains_key(&key) {
            let parsed = serde_json::from_value::<Policy>(r.effective.analysis.clone())
                .map_err(|e| e.to_string())
                .and_then(|p| analysis::normalize_policy(&p).map_err(|e| e.to_string()))
                .map(|p| super::batch::evidence_for(&s.kind, p, ctx.window));
            match parsed {
                Ok(policy) => {
                    let version = analysis::policy_version(&policy).unwrap_or_default();
                    let group = PolicyGroup {
                        policy,
                        version,
                        members: Vec::new(),
                    };
                    by_policy.insert(key.clone(), group);
                }
                Err(e) => {
                    out.failed
                        .push((g.seen, format!("effective analysis policy: {e}")));
                    continue;
                }
            }
        }
        if let Some(group) = by_policy.get_mut(&key) {
            group
                .members
                .push((g, r.identity, r.effective.guardrails.change_tolerance));
        }
    }
    for group in by_policy.into_values() {
        analyze_group(&mut out, ctx, group);
    }
    out
}

fn analyze_group(out: &mut ChunkOutcome, ctx: &ChunkContext, group: PolicyGroup) {
    let PolicyGroup {
        policy,
        version,
        members,
    } = group;
    let mut metas = Vec::with_capacity(members.len());
    let mut containers = Vec::new();
    for (g, identity, tolerance) in members {
        let hpa = g.info.hpa.map(|h| (h, g.containers.clone()));
        let made = (identity, tolerance);
        let who = Who {
            seen: g.seen,
            replicas: g.info.replicas,
            roles: g.info.roles,
            hpa,
        };
        metas.push((who, g.containers.len(), made));
        containers.extend(g.containers);
    }
    let input = input_of(ctx, containers);
    let made = |(identity, change_tolerance): (String, f64)| Made {
        policy_version: version.clone(),
        evidence: policy.evidence.clone(),
        identity,
        change_tolerance,
    };
    match analysis::analyze(&input, &policy) {
        Ok(output) => {
            let mut by_key: HashMap<WorkloadKey, Vec<&ResourceAnalysis>> = HashMap::new();
            for r in &output.results {
                let t = &r.target;
                by_key
                    .entry(WorkloadKey::new(&t.namespace, t.kind.clone(), &t.name))
                    .or_default()
                    .push(r);
            }
            for (who, _, identity) in metas {
                let s = &who.seen;
                let key = WorkloadKey::new(&s.namespace, s.kind.clone(), &s.name);
                let results = by_key.remove(&key).unwrap_or_default();
                push_result(out, ctx, &made(identity), who, results);
            }
        }
        Err(e) if metas.len() == 1 => {
            let (who, _, _) = metas.pop().expect("one workload");
            out.failed.push((who.seen, e.to_string()));
        }
        Err(_) => {
            let mut rest = input.containers.into_iter();
            for (who, n, identity) in metas {
                let own: Vec<ContainerObservation> = rest.by_ref().take(n).collect();
                let input = input_of(ctx, own);
                match analysis::analyze(&input, &policy) {
                    Ok(output) => {
                        let results = output.results.iter().collect();
                        push_result(out, ctx, &made(identity), who, results);
                    }
                    Err(e) => out.failed.push((who.seen, e.to_string())),
                }
            }
        }
    }
}

/// What a recommendation was made under.
struct Made {
    policy_version: String,
    /// The evidence rules the engine ran under.
    evidence: analysis::EvidencePolicy,
    /// The workload's effective-policy identity.
    identity: String,
    /// Its effective `guardrails.changeTolerance`.
    change_tolerance: f64,
}

fn input_of(ctx: &ChunkContext, containers: Vec<ContainerObservation>) -> Input {
    Input {
        schema_version: INPUT_SCHEMA_VERSION.into(),
        evaluation_time: ctx.window.end_ms,
        window_start: ctx.window.start_ms,
        containers,
    }
}

/// The workload a result is for: its row, replicas, its sidecars and init containers,
/// and its HPA with its containers.
struct Who {
    seen: WorkloadSeen,
    replicas: Option<u32>,
    roles: BTreeMap<String, ContainerRole>,
    hpa: Option<(Hpa, Vec<ContainerObservation>)>,
}

fn push_result(
    out: &mut ChunkOutcome,
    ctx: &ChunkContext,
    made: &Made,
    who: Who,
    results: Vec<&ResourceAnalysis>,
) {
    let Who {
        seen,
        replicas,
        roles,
        hpa,
    } = who;
    if results.is_empty() {
        out.failed.push((
            seen,
            "the engine returned no result for this workload".into(),
        ));
        return;
    }
    let window = (ctx.window.start_ms, ctx.window.end_ms);
    let mut summary = summarize(&results, (replicas, &roles), ctx.prices, window);
    if let Some(c) = super::batch::confidence(&seen.kind, &results, &made.evidence) {
        summary.confidence = c;
    }
    if let Some((hpa, containers)) = &hpa {
        with_hpa(&mut summary, Some(hpa), containers);
    }
    let doc = WorkloadAnalysis {
        schema_version: OUTPUT_SCHEMA_VERSION,
        detector_version: DETECTOR_VERSION,
        policy_version: &made.policy_version,
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
        policy_version: made.policy_version.clone(),
        settings_identity: made.identity.clone(),
        cost_delta: summary.cost_delta,
        summary: summary.stored(),
        analysis,
        has_changes: summary.has_changes,
        data_quality: summary.data_quality.to_string(),
        notices: notices_column(&summary.notices),
        confidence: summary.confidence,
        risk: summary.risk,
        change_tolerance: made.change_tolerance,
    };
    out.analyzed.push((seen, rec));
}

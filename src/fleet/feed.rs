//! The two feeds an agent reads, resolved at one `now` so they agree: the config feed
//! (pause, freeze, agent settings, per-workload effective policy and identity) and the
//! recommendation feed (latest recommendation per workload with its values, coverage,
//! staleness against the current effective policy and any pending approval).

use super::effective::workload_ref;
use super::{effective, pause};
use std::collections::HashMap;

use crate::policy::{EffectivePolicy, PolicySet};
use crate::runs::Runs;
use crate::store::approvals::ApprovalRecord;
use crate::store::{RecommendationRow, Store, StoreError, WorkloadRow};
use crate::timestamp::format_ms;
use crate::wire::recommendation_feed::{DataCoverage, FeedWorkload, PendingApproval};
use crate::wire::{
    Actor, AgentSettings, ConfigFeed, FeedFlags, RecommendationFeed, RecommendationItem,
    RecommendationSummary, WorkloadConfig,
};

/// The config feed of active cluster `cluster` at `now`, handing the agent `agent`.
pub async fn config(
    store: &Store,
    runs: &Runs,
    now: i64,
    cluster: &str,
    agent: AgentSettings,
) -> Result<ConfigFeed, StoreError> {
    let name = cluster.to_string();
    let (c, applying, linked) = store
        .reading(move |r| {
            Ok((
                r.active_cluster(&name)?,
                pause::applying(r, &name, now)?,
                r.cluster_datasource(&name)?.is_some(),
            ))
        })
        .await?;
    let frozen = c
        .freeze
        .as_ref()
        .filter(|f| f.until.is_none_or(|u| u > now));
    let workloads = effective::effective_for_cluster(store, runs, now, cluster).await?;
    Ok(ConfigFeed {
        cluster: cluster.to_string(),
        server_time: format_ms(now),
        flags: FeedFlags {
            paused: applying.is_some(),
            pause_scope: applying.as_ref().map(|p| pause::scope_kind(&p.scope)),
            frozen: frozen.is_some(),
        },
        pause: applying.as_ref().map(pause::view),
        freeze: super::clusters::freeze_view(frozen),
        agent,
        usage_source: if runs.reads_embedded(linked) {
            crate::wire::UsageSource::Embedded
        } else {
            crate::wire::UsageSource::Prometheus
        },
        workloads: workloads
            .into_iter()
            .map(|w| entry(w.workload, w.effective, w.identity))
            .collect(),
        version: None,
        since: None,
        deleted: Vec::new(),
        unreadable: Vec::new(),
    })
}

/// One page of the recommendation feed of `cluster` at `now`: up to `limit` workloads
/// after workload id `after`. The second value is the last id when more follow.
pub async fn recommendations(
    store: &Store,
    runs: &Runs,
    now: i64,
    cluster: &str,
    after: String,
    limit: usize,
) -> Result<(RecommendationFeed, Option<String>), StoreError> {
    let settings = runs
        .recommender()
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?;
    let name = cluster.to_string();
    let (page, approvals) = store
        .reading(move |r| {
            let page = r.cluster_feed(&name, &after, limit)?;
            Ok((page, r.pending_approvals(&name)?))
        })
        .await?;
    let (rows, more_after) = (page.items, page.next);
    let policies = runs
        .policy_set(Some(cluster), &settings)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?;
    let mut items = Vec::with_capacity(rows.len());
    for (w, r) in rows {
        items.push(item(&w, r, &policies, &approvals, now)?);
    }
    let feed = RecommendationFeed {
        cluster: cluster.to_string(),
        settings_identity: settings.identity(),
        policy_version: settings.policy_version(),
        items,
        next: None,
        version: None,
        since: None,
        deleted: Vec::new(),
    };
    Ok((feed, more_after))
}

/// Workload `w`'s config feed entry under its effective policy.
fn entry(w: WorkloadRow, effective: EffectivePolicy, identity: String) -> WorkloadConfig {
    WorkloadConfig {
        workload_id: w.seen.id,
        namespace: w.seen.namespace,
        kind: w.seen.kind,
        name: w.seen.name,
        mode: effective.mode.clone(),
        policy_identity: identity,
        policy: std::sync::Arc::new(effective),
    }
}

/// Workload `w`'s config feed entry at `now`, resolved in `policies`.
pub fn workload_config(w: WorkloadRow, policies: &PolicySet, now: i64) -> WorkloadConfig {
    let r = policies.resolve(&w.seen.id, &workload_ref(&w), now);
    entry(w, r.effective, r.identity)
}

/// Workload `w`'s recommendation feed item for its latest recommendation `r` at `now`:
/// staleness against its effective policy in `policies`, and its pending approval.
pub fn item(
    w: &WorkloadRow,
    r: RecommendationRow,
    policies: &PolicySet,
    approvals: &HashMap<String, ApprovalRecord>,
    now: i64,
) -> Result<RecommendationItem, StoreError> {
    let summary: RecommendationSummary = serde_json::from_str(&r.summary)
        .map_err(|e| StoreError::Task(format!("summary of {}: {e}", r.id)))?;
    let current = policies.resolve(&w.seen.id, &workload_ref(w), now);
    let approval = approvals.get(&r.id).map(|a| PendingApproval {
        id: a.id.clone(),
        approved_by: serde_json::from_str::<Actor>(&a.actor)
            .map(|actor| actor.name)
            .unwrap_or_default(),
        approved_at: format_ms(a.created_at),
    });
    Ok(RecommendationItem {
        recommendation_id: r.id,
        workload_id: w.seen.id.clone(),
        workload: FeedWorkload {
            namespace: w.seen.namespace.clone(),
            kind: w.seen.kind.clone(),
            name: w.seen.name.clone(),
            uid: w.seen.uid.clone(),
        },
        created_at: format_ms(r.created_at),
        run_id: r.run_id,
        policy_version: r.policy_version,
        recommendation_stale: r.settings_identity != current.identity,
        settings_identity: r.settings_identity,
        policy_identity: current.identity,
        mode: current.effective.mode,
        approval,
        stale: w.stale,
        has_changes: w.has_changes,
        confidence: summary.confidence,
        coverage: summary.coverage,
        data_coverage: DataCoverage {
            covered_seconds: summary.covered_seconds,
            covered: summary
                .covered_seconds
                .map(|s| crate::timestamp::human_duration(s.max(0) as u64)),
            fraction: summary.coverage,
        },
        data_quality: summary.data_quality,
        notices: summary.notices,
        containers: summary.containers,
        estimated_monthly_cost_delta: r.cost_delta,
        flags: flags(&w.seen.labels),
        throttling: summary.throttling,
    })
}

/// Workload labels that mark a JVM with a fixed heap (as written, or as
/// kube-state-metrics spells an allow-listed label).
const JVM_FIXED_HEAP_LABELS: [&str; 2] = [
    "kerf.getkerf.dev/jvm-fixed-heap",
    "kerf_getkerf_dev_jvm_fixed_heap",
];

/// The hub's flags for a workload whose stored labels (JSON) are `labels`.
fn flags(labels: &str) -> Vec<String> {
    let labels: std::collections::BTreeMap<String, String> =
        serde_json::from_str(labels).unwrap_or_default();
    let jvm = JVM_FIXED_HEAP_LABELS
        .iter()
        .any(|l| labels.get(*l).map(String::as_str) == Some("true"));
    jvm.then(|| "jvm-fixed-heap".to_string())
        .into_iter()
        .collect()
}

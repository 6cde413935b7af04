//! Raw query results → `resource-analysis-input/v2`, as the spec's adapter guidance
//! says: one series per container lifetime with a distinct ID and the pod UID, the
//! release of the pod that produced it, current settings only when every current replica
//! agrees, OOM events from the reason/timestamp join, previous releases newest first, and
//! `available: false` wherever the source cannot tell. Shared by Prometheus and the demo.

pub mod hpa;
pub mod labels;
pub mod pods;
pub mod requests_limits;

use crate::fingerprint::fnv1a;
use std::collections::BTreeMap;

use crate::analysis::{
    ContainerObservation, CurrentIdentity, Inventory, OomKill, PreviousRelease,
    ResourceObservation, SampleKind, Series, Target,
};
use crate::datasource::raw::{label, RawSeries, RawSettings, RawUsage};
use crate::datasource::{Window, WorkloadInfo};

pub use pods::{PodIndex, PodMeta, WorkloadKey};
pub use requests_limits::SettingsIndex;
use requests_limits::{oom_terminations, Setting};

/// Without kube-state-metrics a workload is guessed from its pod name; it is included
/// only when it reported usage this close to the window end.
const UNINDEXED_RECENT_MS: i64 = 10 * 60_000;

/// Every lifetime of one logical container, by release.
#[derive(Default)]
struct ContainerSeries {
    cpu: Vec<Series>,
    memory: Vec<Series>,
    ooms: Vec<OomKill>,
}

/// Maps one batch of usage and settings. Workloads without a pod alive at the window end
/// are left out (they no longer run anything to rightsize).
pub fn map_batch(
    window: Window,
    pods: &PodIndex,
    raw_settings: &RawSettings,
    usage: RawUsage,
) -> (Vec<ContainerObservation>, Vec<WorkloadInfo>) {
    let settings = SettingsIndex::build(raw_settings);
    map_with(
        window,
        pods,
        &settings,
        &raw_settings.oom_terminations,
        usage,
    )
}

/// As [`map_batch`], with the settings already indexed (a streamed group maps workload
/// by workload against one index).
pub fn map_with(
    window: Window,
    pods: &PodIndex,
    settings: &SettingsIndex,
    ooms: &[RawSeries],
    usage: RawUsage,
) -> (Vec<ContainerObservation>, Vec<WorkloadInfo>) {
    let mut groups: BTreeMap<WorkloadKey, BTreeMap<String, ContainerSeries>> = BTreeMap::new();
    let mut unindexed_last: BTreeMap<WorkloadKey, i64> = BTreeMap::new();
    for (series, is_cpu) in usage
        .cpu
        .into_iter()
        .map(|s| (s, true))
        .chain(usage.memory.into_iter().map(|s| (s, false)))
    {
        let container = series.label(label::CONTAINER).to_string();
        if container.is_empty() || container == "POD" || series.samples.is_empty() {
            continue;
        }
        let Some((key, lifetime)) = lifetime_of(series, pods, is_cpu) else {
            continue;
        };
        if !pods.ksm_present {
            let last = lifetime.samples.iter().map(|s| s.timestamp).max();
            let slot = unindexed_last.entry(key.clone()).or_insert(0);
            *slot = (*slot).max(last.unwrap_or(0));
        }
        let entry = groups.entry(key).or_default().entry(container).or_default();
        if is_cpu {
            entry.cpu.push(lifetime);
        } else {
            entry.memory.push(lifetime);
        }
    }
    for t in oom_terminations(ooms, pods, settings, |m| pods.workload_uid(&m.workload)) {
        if let Some(c) = groups
            .get_mut(&t.pod.workload)
            .and_then(|g| g.get_mut(&t.container))
        {
            c.ooms.push(t.kill);
        }
    }
    let mut observations = Vec::new();
    let mut workloads = Vec::new();
    for (key, containers) in groups {
        let alive = pods.alive_pods(&key);
        let current = if pods.ksm_present {
            match current_release(&alive) {
                Some(c) if pods::is_batch(&key.kind) => Some(last_run_seen(c, &containers)),
                Some(c) => Some(c),
                None => continue,
            }
        } else {
            if unindexed_last.get(&key).copied().unwrap_or(0) < window.end_ms - UNINDEXED_RECENT_MS
            {
                continue;
            }
            None
        };
        let workload_uid = if pods.ksm_present {
            pods.workload_uid(&key)
        } else {
            String::new()
        };
        let release_pods: Vec<(&PodMeta, i64)> = match &current {
            Some(c) => alive
                .iter()
                .filter(|(m, _)| m.release == c.release)
                .copied()
                .collect(),
            None => Vec::new(),
        };
        let names: Vec<String> = containers.keys().cloned().collect();
        let roles = names
            .iter()
            .map(|n| (n.clone(), settings.role(&release_pods, n)))
            .filter(|(_, role)| !role.is_app())
            .collect();
        for (container, series) in containers {
            let target = Target {
                namespace: key.namespace.clone(),
                kind: key.kind.clone(),
                name: key.name.clone(),
                container: container.clone(),
                workload_uid: workload_uid.clone(),
                release: current
                    .as_ref()
                    .map(|c| c.release.clone())
                    .unwrap_or_default(),
            };
            observations.push(observe(
                target,
                current.as_ref(),
                &release_pods,
                pods,
                settings,
                series,
                (&key, window),
            ));
        }
        workloads.push(WorkloadInfo {
            containers: names,
            roles,
            uid: workload_uid,
            ..workload_info(pods, &key)
        });
    }
    (observations, workloads)
}

/// One container's series for a chart: `series` (the raw series of `resource`) mapped
/// as runs map them, then those of `workload`'s `container`.
pub fn chart_series(
    window: Window,
    pods: &PodIndex,
    (workload, container): (&WorkloadKey, &str),
    resource: crate::datasource::UsageResource,
    series: Vec<RawSeries>,
) -> Vec<crate::analysis::Series> {
    use crate::datasource::UsageResource;
    let usage = match resource {
        UsageResource::Cpu => RawUsage {
            cpu: series,
            memory: Vec::new(),
        },
        UsageResource::Memory => RawUsage {
            cpu: Vec::new(),
            memory: series,
        },
    };
    let (containers, _) = map_batch(window, pods, &RawSettings::default(), usage);
    containers
        .into_iter()
        .find(|c| {
            let t = &c.target;
            t.kind == workload.kind && t.name == workload.name && t.container == container
        })
        .map(|c| match resource {
            UsageResource::Cpu => c.cpu.series,
            UsageResource::Memory => c.memory.series,
        })
        .unwrap_or_default()
}

/// Workload `key` as a streamed piece that could not be read, saying why (the run
/// records it and analyzes the others).
pub fn unreadable_piece(
    pods: &PodIndex,
    window: Window,
    datasource: &str,
    key: &WorkloadKey,
    why: &str,
) -> crate::datasource::Collection {
    let mut info = workload_info(pods, key);
    info.unreadable = Some(format!(
        "datasource {datasource}: workload {}/{}/{}: {why}",
        key.namespace, key.kind, key.name
    ));
    let mut piece = crate::datasource::Collection::empty(window);
    piece.workloads.push(info);
    piece
}

/// What the inventory tells of workload `key`, its containers not yet known.
pub fn workload_info(pods: &PodIndex, key: &WorkloadKey) -> WorkloadInfo {
    WorkloadInfo {
        namespace: key.namespace.clone(),
        kind: key.kind.clone(),
        name: key.name.clone(),
        uid: pods.workload_uid(key),
        replicas: pods.replicas(key).map(|s| s.value.max(0.0) as u32),
        containers: Vec::new(),
        roles: BTreeMap::new(),
        labels: pods.labels(key),
        hpa: pods.hpa(key),
        unreadable: None,
    }
}

/// The release running at the window end.
struct Current {
    release: String,
    /// Latest time a pod of it was seen.
    seen_ms: i64,
    /// Pods of more than one release are alive (a rollout in progress).
    ambiguous: bool,
}

fn current_release(alive: &[(&PodMeta, i64)]) -> Option<Current> {
    // The release of the newest pod wins; several alive releases make it ambiguous.
    let newest = alive
        .iter()
        .max_by_key(|(m, seen)| (m.created_ms, *seen, m.uid.clone()))?;
    let release = newest.0.release.clone();
    let seen_ms = alive
        .iter()
        .filter(|(m, _)| m.release == release)
        .map(|(_, t)| *t)
        .max()
        .unwrap_or(0);
    let ambiguous = alive.iter().any(|(m, _)| m.release != release);
    Some(Current {
        release,
        seen_ms,
        ambiguous,
    })
}

/// Batch work: its latest run was last seen at the latest usage sample of its pods
/// (they are counted alive from their creation, since they seldom run at the end).
fn last_run_seen(mut current: Current, containers: &BTreeMap<String, ContainerSeries>) -> Current {
    let last = containers
        .values()
        .flat_map(|c| c.cpu.iter().chain(c.memory.iter()))
        .filter(|s| s.release == current.release)
        .filter_map(|s| s.samples.iter().map(|x| x.timestamp).max())
        .max();
    current.seen_ms = current.seen_ms.max(last.unwrap_or(0));
    current
}

/// Attributes one raw usage series to its workload and gives it a lifetime ID.
fn lifetime_of(series: RawSeries, pods: &PodIndex, is_cpu: bool) -> Option<(WorkloadKey, Series)> {
    let (ns, pod, container) = (
        series.label(label::NAMESPACE),
        series.label(label::POD),
        series.label(label::CONTAINER),
    );
    let first = series.samples.iter().map(|s| s.timestamp).min()?;
    let instance = match series.label(label::CGROUP_ID) {
        "" => String::new(),
        id => format!("/{:016x}", fnv1a(id.as_bytes())),
    };
    let kind = if is_cpu {
        SampleKind::CpuCounterSeconds
    } else {
        SampleKind::Gauge
    };
    let (key, pod_uid, workload_uid, release) = if pods.ksm_present {
        let meta = pods.resolve(ns, pod, first)?;
        (
            meta.workload.clone(),
            meta.uid.clone(),
            pods.workload_uid(&meta.workload),
            meta.release.clone(),
        )
    } else {
        (
            guess_workload(ns, pod),
            String::new(),
            String::new(),
            String::new(),
        )
    };
    let owner = if pod_uid.is_empty() {
        format!("{ns}/{pod}")
    } else {
        pod_uid.clone()
    };
    let id = format!("{owner}/{container}{instance}");
    let RawSeries { samples, .. } = series;
    Some((
        key,
        Series {
            id,
            pod_uid,
            workload_uid,
            release,
            kind,
            samples,
        },
    ))
}

/// A workload guessed from a pod name when kube-state-metrics is missing: the identity
/// stays unknown (`available: false`), so nothing is recommended from the guess.
fn guess_workload(namespace: &str, pod: &str) -> WorkloadKey {
    let parts: Vec<&str> = pod.rsplitn(3, '-').collect();
    let (kind, name) = match parts.as_slice() {
        [suffix, hash, name] if suffix.len() == 5 && (6..=10).contains(&hash.len()) => {
            ("Deployment", name.to_string())
        }
        [ordinal, rest @ ..] if ordinal.parse::<u32>().is_ok() && !rest.is_empty() => {
            let name = pod.trim_end_matches(ordinal).trim_end_matches('-');
            ("StatefulSet", name.to_string())
        }
        _ => ("Pod", pod.to_string()),
    };
    WorkloadKey {
        namespace: namespace.to_string(),
        kind: kind.to_string(),
        name,
    }
}

/// When `release` of `key` began, as the engine is given it: the source's start
/// (`PodIndex::release_started`) raised to the window start, since an earlier one is
/// the same inside the window and the engine reads a start before the first sample
/// it can see as a boundary it must infer; 0 when unknown (the engine infers it).
fn release_start(pods: &PodIndex, window: Window, key: &WorkloadKey, release: &str) -> i64 {
    match pods.release_started(key, release) {
        0 => 0,
        t => t.max(window.start_ms),
    }
}

fn observe(
    target: Target,
    current: Option<&Current>,
    release_pods: &[(&PodMeta, i64)],
    pods: &PodIndex,
    settings: &SettingsIndex,
    series: ContainerSeries,
    (key, window): (&WorkloadKey, Window),
) -> ContainerObservation {
    let ksm = pods.ksm_present;
    let container = target.container.as_str();
    let identity = match current {
        Some(c) => CurrentIdentity {
            available: true,
            workload_uid: target.workload_uid.clone(),
            release: c.release.clone(),
            timestamp: c.seen_ms,
            release_started_at: release_start(pods, window, key, &c.release),
            ambiguous: c.ambiguous,
            release_start_inferred: false,
        },
        None => CurrentIdentity::default(),
    };
    let inventory = match current {
        // Batch work wants no replicas: every run in the window is current (its
        // freshness spans the window), so its inventory is the pods its runs had.
        Some(c) if pods::is_batch(&key.kind) => {
            let runs = run_pods(&series, &c.release);
            Inventory {
                available: true,
                timestamp: c.seen_ms,
                eligible: runs,
                observed: runs,
                excluded: 0,
            }
        }
        Some(_) => match pods.replicas(key) {
            Some(desired) => Inventory {
                available: true,
                timestamp: desired.timestamp,
                eligible: desired.value.max(0.0) as i64,
                observed: release_pods.len() as i64,
                excluded: 0,
            },
            None => Inventory::default(),
        },
        None => Inventory::default(),
    };
    let mut previous_releases = previous_releases(&target, &series);
    for p in &mut previous_releases {
        p.release_started_at = release_start(pods, window, key, &p.release);
    }
    let signal = |s| settings.signal(release_pods, container, s, ksm);
    ContainerObservation {
        inventory,
        identity,
        cpu: ResourceObservation {
            series: series.cpu,
            current_request: signal(Setting::CpuRequest),
            current_limit: signal(Setting::CpuLimit),
        },
        memory: ResourceObservation {
            series: series.memory,
            current_request: signal(Setting::MemoryRequest),
            current_limit: signal(Setting::MemoryLimit),
        },
        oom_kills: series.ooms,
        previous_releases,
        target,
    }
}

/// The pods of `release` one container's usage was seen in (batch work's runs).
fn run_pods(series: &ContainerSeries, release: &str) -> i64 {
    let uids: std::collections::BTreeSet<&str> = series
        .cpu
        .iter()
        .chain(series.memory.iter())
        .filter(|s| s.release == release)
        .map(|s| s.pod_uid.as_str())
        .collect();
    uids.len() as i64
}

/// Other releases of the same workload UID seen in the window, newest first.
fn previous_releases(target: &Target, series: &ContainerSeries) -> Vec<PreviousRelease> {
    let mut by_release: BTreeMap<&str, PreviousRelease> = BTreeMap::new();
    for (s, is_cpu) in series
        .cpu
        .iter()
        .map(|s| (s, true))
        .chain(series.memory.iter().map(|s| (s, false)))
    {
        if s.workload_uid != target.workload_uid
            || s.release == target.release
            || s.release.is_empty()
        {
            continue;
        }
        let entry = by_release
            .entry(&s.release)
            .or_insert_with(|| PreviousRelease {
                release: s.release.clone(),
                ..PreviousRelease::default()
            });
        let last = s.samples.iter().map(|x| x.timestamp).max().unwrap_or(0);
        entry.evaluation_time = entry.evaluation_time.max(last);
        if is_cpu {
            entry.cpu.push(s.clone());
        } else {
            entry.memory.push(s.clone());
        }
    }
    let mut out: Vec<PreviousRelease> = by_release.into_values().collect();
    out.sort_by(|a, b| {
        b.evaluation_time
            .cmp(&a.evaluation_time)
            .then(a.release.cmp(&b.release))
    });
    out
}

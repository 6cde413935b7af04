//! Current requests/limits as analysis `Signal`s, and OOM terminations as `OomKill`s,
//! from kube-state-metrics answers.

use std::collections::HashMap;

use crate::analysis::{OomKill, Sample, Signal};
use crate::datasource::raw::{label, metric, RawSeries, RawSettings};
use crate::workload::ContainerRole;

use super::pods::{PodIndex, PodMeta};

/// Which setting of which resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    CpuRequest,
    CpuLimit,
    MemoryRequest,
    MemoryLimit,
}

/// Latest value of every (pod UID, container, setting) at the window end, and the
/// memory-limit history of pods with an OOM termination.
#[derive(Debug, Default)]
pub struct SettingsIndex {
    now: HashMap<(String, String, Setting), Sample>,
    /// Raw memory-limit samples per (pod UID, container), in time order.
    memory_limits: HashMap<(String, String), Vec<Sample>>,
    /// OOM kills inferred from restarts (no termination timestamp exported): per
    /// (pod UID, container), the step times at which a restart was first seen while
    /// the last termination reason was `OOMKilled`, once per restart.
    inferred: HashMap<(String, String), Vec<i64>>,
    /// Per (pod UID, container) of `spec.initContainers`: a sidecar or an init
    /// container (app containers are not listed).
    roles: HashMap<(String, String), ContainerRole>,
}

impl SettingsIndex {
    pub fn build(raw: &RawSettings) -> SettingsIndex {
        let mut idx = SettingsIndex::default();
        for s in &raw.settings_now {
            let name = s.label(label::NAME);
            let key = || {
                (
                    s.label(label::UID).to_string(),
                    s.label(label::CONTAINER).to_string(),
                )
            };
            if name == metric::INIT_INFO {
                let role = ContainerRole::of_init_container(Some(s.label(label::RESTART_POLICY)));
                idx.roles.insert(key(), role);
                continue;
            }
            if matches!(name, metric::INIT_REQUESTS | metric::INIT_LIMITS) {
                // A sidecar when its info says so; an init container until then.
                idx.roles.entry(key()).or_insert(ContainerRole::Init);
            }
            let is_limit = matches!(name, metric::LIMITS | metric::INIT_LIMITS);
            let setting = match (s.label(label::RESOURCE), is_limit) {
                ("cpu", false) => Setting::CpuRequest,
                ("cpu", true) => Setting::CpuLimit,
                ("memory", false) => Setting::MemoryRequest,
                ("memory", true) => Setting::MemoryLimit,
                _ => continue,
            };
            if let Some(last) = s.last() {
                let key = (
                    s.label(label::UID).to_string(),
                    s.label(label::CONTAINER).to_string(),
                    setting,
                );
                idx.now.insert(key, last);
            }
        }
        for s in &raw.memory_limits {
            let key = (
                s.label(label::UID).to_string(),
                s.label(label::CONTAINER).to_string(),
            );
            let history = idx.memory_limits.entry(key).or_default();
            history.extend(s.samples.iter().copied());
            history.sort_by_key(|x| x.timestamp);
        }
        idx.inferred = inferred_kills(&raw.restarts, &raw.oom_reasons);
        // A container that ended in an OOM kill and was not restarted: killed within
        // the step before its terminated reason is first seen.
        for s in &raw.terminated_ooms {
            let first = s
                .samples
                .iter()
                .filter(|x| x.value > 0.0)
                .map(|x| x.timestamp)
                .min();
            if let Some(t) = first {
                let key = (
                    s.label(label::UID).to_string(),
                    s.label(label::CONTAINER).to_string(),
                );
                let kills = idx.inferred.entry(key).or_default();
                if !kills.contains(&t) {
                    kills.push(t);
                    kills.sort_unstable();
                }
            }
        }
        idx
    }

    /// The setting in force across `pods` (alive pods of the current release, with their
    /// last-seen time). Absent everywhere → known unset; different values → unknown.
    pub fn signal(
        &self,
        pods: &[(&PodMeta, i64)],
        container: &str,
        setting: Setting,
        ksm_present: bool,
    ) -> Signal {
        if !ksm_present || pods.is_empty() {
            return Signal::default();
        }
        let scale = match setting {
            Setting::CpuRequest | Setting::CpuLimit => 1000.0, // cores → millicores
            _ => 1.0,
        };
        let found: Vec<Option<Sample>> = pods
            .iter()
            .map(|(p, _)| {
                self.now
                    .get(&(p.uid.clone(), container.to_string(), setting))
                    .copied()
            })
            .collect();
        let oldest_seen = pods.iter().map(|(_, t)| *t).min().unwrap_or(0);
        if found.iter().all(Option::is_none) {
            return Signal {
                available: true,
                unset: true,
                value: 0.0,
                timestamp: oldest_seen,
            };
        }
        let values: Vec<Sample> = found.iter().flatten().copied().collect();
        let first = values[0].value;
        let consistent = values.len() == found.len() && values.iter().all(|s| s.value == first);
        if !consistent || !first.is_finite() || first < 0.0 {
            return Signal::default();
        }
        Signal {
            available: true,
            unset: false,
            value: first * scale,
            timestamp: values.iter().map(|s| s.timestamp).min().unwrap_or(0),
        }
    }

    /// The role of `container` in `pods` (the current release's): what the first pod
    /// that lists it among its init containers says, else an app container.
    pub fn role(&self, pods: &[(&PodMeta, i64)], container: &str) -> ContainerRole {
        pods.iter()
            .find_map(|(p, _)| {
                self.roles
                    .get(&(p.uid.clone(), container.to_string()))
                    .copied()
            })
            .unwrap_or_default()
    }

    /// The memory limit (bytes) in force at `at_ms`: the latest limit sample at or
    /// before it. 0 when unknown at that time or unlimited — never a later limit (the
    /// spec: "do not substitute today's limit"; pods resized in place change theirs).
    pub fn memory_limit_at(&self, uid: &str, container: &str, at_ms: i64) -> f64 {
        let Some(history) = self
            .memory_limits
            .get(&(uid.to_string(), container.to_string()))
        else {
            return 0.0;
        };
        let before = history.partition_point(|x| x.timestamp <= at_ms);
        before
            .checked_sub(1)
            .map(|i| history[i].value)
            .filter(|v| v.is_finite() && *v > 0.0)
            .unwrap_or(0.0)
    }
}

/// Restart increments seen while the last termination reason is `OOMKilled`: each is
/// a kill between the step before and the step it is seen at.
fn inferred_kills(
    restarts: &[RawSeries],
    reasons: &[RawSeries],
) -> HashMap<(String, String), Vec<i64>> {
    let key = |s: &RawSeries| {
        (
            s.label(label::UID).to_string(),
            s.label(label::CONTAINER).to_string(),
        )
    };
    let mut oom_at: HashMap<(String, String), std::collections::HashSet<i64>> = HashMap::new();
    for s in reasons {
        let times = oom_at.entry(key(s)).or_default();
        times.extend(
            s.samples
                .iter()
                .filter(|x| x.value > 0.0)
                .map(|x| x.timestamp),
        );
    }
    let mut out: HashMap<(String, String), Vec<i64>> = HashMap::new();
    for s in restarts {
        let k = key(s);
        let Some(times) = oom_at.get(&k) else {
            continue;
        };
        let mut samples = s.samples.clone();
        samples.sort_by_key(|x| x.timestamp);
        for pair in samples.windows(2) {
            let grew = pair[1].value - pair[0].value;
            if grew >= 1.0 && grew.is_finite() && times.contains(&pair[1].timestamp) {
                let kills = out.entry(k.clone()).or_default();
                kills.extend(std::iter::repeat_n(
                    pair[1].timestamp,
                    grew.round() as usize,
                ));
            }
        }
    }
    out
}

/// The suffix of an inferred OOM kill's event ID: its time is the first step at which
/// the restart was seen (within one step after the kill), not the termination time.
pub const INFERRED_SUFFIX: &str = "inferred";

/// One OOM termination attributed to a pod.
#[derive(Debug, Clone)]
pub struct Termination {
    pub pod: PodMeta,
    pub container: String,
    pub kill: OomKill,
}

/// Distinct termination times of every joined OOM series, attributed through the pod
/// index (the event's identity is its pod's workload and release).
pub fn oom_terminations(
    raw: &[RawSeries],
    pods: &PodIndex,
    settings: &SettingsIndex,
    workload_uid: impl Fn(&PodMeta) -> String,
) -> Vec<Termination> {
    let mut out = Vec::new();
    for s in raw {
        let uid = s.label(label::UID);
        let meta = match pods.pod(uid) {
            Some(m) => m,
            None => continue,
        };
        let container = s.label(label::CONTAINER);
        let mut times: Vec<i64> = s
            .samples
            .iter()
            .filter(|x| x.value.is_finite() && x.value > 0.0)
            .map(|x| (x.value * 1000.0).round() as i64)
            .collect();
        times.sort_unstable();
        times.dedup();
        for ts in times {
            out.push(Termination {
                pod: meta.clone(),
                container: container.to_string(),
                kill: OomKill {
                    id: format!("{uid}/{container}/{ts}"),
                    pod_uid: uid.to_string(),
                    workload_uid: workload_uid(meta),
                    release: meta.release.clone(),
                    timestamp: ts,
                    memory_limit_bytes: settings.memory_limit_at(uid, container, ts),
                },
            });
        }
    }
    // Containers without a termination timestamp: the kills inferred from restarts.
    let timed: std::collections::HashSet<(String, String)> = raw
        .iter()
        .map(|s| {
            (
                s.label(label::UID).to_string(),
                s.label(label::CONTAINER).to_string(),
            )
        })
        .collect();
    let mut inferred: Vec<_> = settings
        .inferred
        .iter()
        .filter(|(k, _)| !timed.contains(*k))
        .collect();
    inferred.sort();
    for ((uid, container), times) in inferred {
        let Some(meta) = pods.pod(uid) else { continue };
        for (n, ts) in times.iter().enumerate() {
            // Several restarts in one step are told apart by their rank.
            let rank = times[..n].iter().filter(|t| *t == ts).count();
            let id = match rank {
                0 => format!("{uid}/{container}/{ts}/{INFERRED_SUFFIX}"),
                r => format!("{uid}/{container}/{ts}/{INFERRED_SUFFIX}-{r}"),
            };
            out.push(Termination {
                pod: meta.clone(),
                container: container.clone(),
                kill: OomKill {
                    id,
                    pod_uid: uid.clone(),
                    workload_uid: workload_uid(meta),
                    release: meta.release.clone(),
                    timestamp: *ts,
                    memory_limit_bytes: settings.memory_limit_at(uid, container, *ts),
                },
            });
        }
    }
    out
}

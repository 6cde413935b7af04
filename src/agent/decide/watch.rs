//! The health watch after a change (pure). For `guardrails.rollback.watchDuration`
//! after a change became live the agent counts, over the changed workload's pods, the
//! containers' OOM kills and restarts (from their restart counts and last terminations,
//! from the moment the change is live: a pod made since counts from zero, one that was
//! there from its count then, so kerf's own restart of a `RestartContainer` resize is
//! not counted) and
//! the CFS throttling ratio of the changed containers (the kubelets' counters since the
//! change). Reaching `oomKills` (when memory changed) or `restarts` (OOM kills among
//! them only when memory changed: a CPU change is not blamed for a memory problem), or a
//! throttling ratio above `throttlingRatio` (when CPU changed, over at least
//! [`MIN_PERIODS`]), restores the previous values: `rolled_back OOMKills|Restarts|
//! Throttling`. A threshold of 0 is off. The watch lives in the record, so it survives
//! an agent restart.

use std::collections::BTreeMap;

use super::guardrails::human;
use super::values::fields_of;
use crate::cluster::{CpuCounters, Pod};
use crate::policy::validate::parse_duration;
use crate::wire::{EventResource, Reason};

use super::super::state::{ContainerValues, Operation, RollbackCause, Seen, Step, Watch};

/// Throttling is judged once this many CFS periods (100 ms each) were counted.
pub const MIN_PERIODS: u64 = 100;

/// Where a watch stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Watching,
    /// The watch duration passed without crossing a threshold.
    Passed,
    RollBack(RollbackCause),
}

fn changes(containers: &[ContainerValues], r: EventResource) -> bool {
    containers
        .iter()
        .any(|c| fields_of(r).iter().any(|f| c.from.get(*f) != c.to.get(*f)))
}

/// The watch of the change `op`, live at `now_ms` (`None` without thresholds).
pub fn start(op: &Operation, now_ms: i64) -> Option<Watch> {
    let thresholds = op.watch.clone()?;
    let duration = parse_duration(&thresholds.watch_duration)? as i64 * 1000;
    Some(Watch {
        until_ms: now_ms + duration,
        hpa: op.hpa.clone(),
        thresholds,
        ..unwatched(op, now_ms)
    })
}

/// `op`'s watch at `now_ms` with nothing counted yet, no thresholds and no HPA.
fn unwatched(op: &Operation, now_ms: i64) -> Watch {
    Watch {
        event_id: op.event_id.clone(),
        recommendation_id: op.recommendation_id.clone(),
        strategy: op.strategy,
        started_ms: now_ms,
        until_ms: now_ms,
        containers: op.containers.clone(),
        hpa: None,
        thresholds: crate::policy::EffectiveRollback {
            oom_kills: 0,
            restarts: 0,
            throttling_ratio: 0.0,
            watch_duration: "0s".into(),
        },
        seen: Vec::new(),
        oom_kills: 0,
        restarts: 0,
        periods: 0,
        throttled: 0,
        progress: None,
        generation: op.template_generation.unwrap_or(0),
        undoing: false,
    }
}

/// Counts what happened on `pods` since the last look; `counters` are the kubelets'
/// CFS counters of those pods (empty when unknown). True when a count moved (the
/// record should be written).
pub fn observe(w: &mut Watch, pods: &[&Pod], counters: &[CpuCounters]) -> bool {
    let names: Vec<&str> = w.containers.iter().map(|c| c.name.as_str()).collect();
    let mut moved = false;
    let by_pod: BTreeMap<(&str, &str), &CpuCounters> = counters
        .iter()
        .map(|c| ((c.pod.name.as_str(), c.container.as_str()), c))
        .collect();
    for p in pods.iter().filter(|p| !p.deleting) {
        for s in p
            .statuses
            .iter()
            .filter(|s| names.contains(&s.name.as_str()))
        {
            let counter = by_pod.get(&(p.pod.name.as_str(), s.name.as_str()));
            let index = w
                .seen
                .iter()
                .position(|x| x.pod_uid == p.uid && x.container == s.name);
            let i = if let Some(i) = index {
                i
            } else {
                // A pod made since the change counts from zero; one that was there, from now.
                let new = p.created_ms.is_some_and(|c| c >= w.started_ms);
                let (periods, throttled) = match (new, counter) {
                    (false, Some(c)) => (c.periods, c.throttled_periods),
                    _ => (0, 0),
                };
                w.seen.push(Seen {
                    pod_uid: p.uid.clone(),
                    container: s.name.clone(),
                    restarts: if new { 0 } else { s.restart_count },
                    periods,
                    throttled,
                    // A new pod's counters start at zero with it.
                    counted: new || counter.is_some(),
                });
                moved = true;
                if !new {
                    continue;
                }
                w.seen.len() - 1
            };
            let seen = &mut w.seen[i];
            if s.restart_count > seen.restarts {
                let n = (s.restart_count - seen.restarts) as u32;
                w.restarts += n;
                let oom = s.last_termination.as_ref().is_some_and(|t| {
                    t.reason == "OOMKilled" && t.finished_at_ms.is_none_or(|at| at >= w.started_ms)
                });
                if oom {
                    w.oom_kills += n;
                }
                seen.restarts = s.restart_count;
                moved = true;
            }
            if let Some(c) = counter {
                if seen.counted {
                    // A restarted container's counters start again from zero.
                    let base = |now: u64, then: u64| if now >= then { now - then } else { now };
                    w.periods += base(c.periods, seen.periods);
                    w.throttled += base(c.throttled_periods, seen.throttled);
                } else {
                    moved = true;
                }
                seen.periods = c.periods;
                seen.throttled = c.throttled_periods;
                seen.counted = true;
            }
        }
    }
    moved
}

/// The throttling ratio counted so far, once there are enough periods.
pub fn throttling_ratio(w: &Watch) -> Option<f64> {
    (w.periods >= MIN_PERIODS).then(|| w.throttled as f64 / w.periods as f64)
}

/// What the watch says at `now_ms`.
pub fn judge(w: &Watch, now_ms: i64) -> Verdict {
    let t = &w.thresholds;
    let duration = t.watch_duration.clone();
    let elapsed = human(((now_ms - w.started_ms).max(0) / 1000) as u64);
    let cause = |reason: Reason, message: String, key: &str, value: String| {
        let mut details = BTreeMap::new();
        details.insert(key.to_string(), value);
        details.insert("watchDuration".to_string(), duration.clone());
        Verdict::RollBack(RollbackCause {
            reason,
            message,
            details,
        })
    };
    if t.oom_kills > 0
        && changes(&w.containers, EventResource::Memory)
        && w.oom_kills >= t.oom_kills
    {
        return cause(
            Reason::OOMKills,
            format!(
                "{} OOM kills within {elapsed} after the change (threshold {}, watch {duration})",
                w.oom_kills, t.oom_kills
            ),
            "oomKills",
            w.oom_kills.to_string(),
        );
    }
    // OOM kills are blamed on the change only when it touched memory.
    let restarts = if changes(&w.containers, EventResource::Memory) {
        w.restarts
    } else {
        w.restarts.saturating_sub(w.oom_kills)
    };
    if t.restarts > 0 && restarts >= t.restarts {
        return cause(
            Reason::Restarts,
            format!(
                "{restarts} container restarts within {elapsed} after the change (threshold {}, watch {duration})",
                t.restarts
            ),
            "restarts",
            restarts.to_string(),
        );
    }
    if let Some(ratio) = throttling_ratio(w) {
        if t.throttling_ratio > 0.0
            && changes(&w.containers, EventResource::Cpu)
            && ratio > t.throttling_ratio
        {
            return cause(
                Reason::Throttling,
                format!(
                    "CPU throttled in {:.0} % of periods within {elapsed} after the change (threshold {:.0} %, watch {duration})",
                    ratio * 100.0,
                    t.throttling_ratio * 100.0
                ),
                "throttlingRatio",
                format!("{ratio:.2}"),
            );
        }
    }
    // A rollout still under way is followed past the watch's end (`stall`).
    if now_ms >= w.until_ms && super::stall::settled(w) {
        Verdict::Passed
    } else {
        Verdict::Watching
    }
}

/// The watch of a rollback's rollout (`undoing`): no thresholds, only whether the
/// previous values roll out again (`stall`). `None` in place: the kubelet's verdicts on
/// the resize say it.
pub fn start_undo(op: &Operation, now_ms: i64) -> Option<Watch> {
    (op.strategy == crate::policy::Strategy::Rollout).then(|| Watch {
        undoing: true,
        ..unwatched(op, now_ms)
    })
}

/// The operation that restores the values before `w`'s change, with the same strategy.
pub fn rollback(w: &Watch, cause: RollbackCause, event_id: String, now_ms: i64) -> Operation {
    let containers = w
        .containers
        .iter()
        .map(|c| ContainerValues {
            name: c.name.clone(),
            role: c.role,
            from: c.to,
            to: c.from,
        })
        .collect();
    Operation {
        event_id,
        reason: cause.reason,
        strategy: w.strategy,
        recommendation_id: w.recommendation_id.clone(),
        approval: None,
        containers,
        started_ms: now_ms,
        step: match w.strategy {
            crate::policy::Strategy::InPlace => Step::InPlace {
                deferred_since_ms: None,
            },
            _ => Step::Rollout,
        },
        // A rollback does not wait for a Deferred resize: it rolls out at once.
        fallback_after_ms: 0,
        fallback: None,
        attempts: 0,
        window: None,
        hpa: w.hpa.as_ref().map(|h| h.reversed()),
        hpa_done: false,
        watch: None,
        rollback: Some(cause),
        retry_at_ms: None,
        template_generation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::state::ContainerValues;
    use crate::cluster::{ContainerStatus, PodPhase, PodRef, ResizeState, Resources, Termination};
    use crate::policy::{EffectiveRollback, Strategy};

    const T0: i64 = 1_800_000_000_000;
    const MIB: u64 = 1 << 20;

    fn watch(from_mem: u64, to_mem: u64, cpu: (u64, u64)) -> Watch {
        let r = |cpu: u64, mem: u64| Resources {
            cpu_request: Some(cpu),
            cpu_limit: Some(cpu * 2),
            memory_request: Some(mem * MIB),
            memory_limit: Some(mem * MIB),
        };
        Watch {
            event_id: "e1".into(),
            recommendation_id: "r1".into(),
            strategy: Strategy::InPlace,
            started_ms: T0,
            until_ms: T0 + 1_800_000,
            containers: vec![ContainerValues {
                name: "app".into(),
                role: Default::default(),
                from: r(cpu.0, from_mem),
                to: r(cpu.1, to_mem),
            }],
            hpa: None,
            thresholds: EffectiveRollback {
                oom_kills: 1,
                restarts: 3,
                throttling_ratio: 0.25,
                watch_duration: "30m".into(),
            },
            seen: Vec::new(),
            oom_kills: 0,
            restarts: 0,
            periods: 0,
            throttled: 0,
            progress: None,
            generation: 0,
            undoing: false,
        }
    }

    fn pod(uid: &str, created: i64, restarts: i32, last: Option<&str>) -> Pod {
        Pod {
            pod: PodRef::new("shop", uid),
            uid: uid.into(),
            owner: None,
            controller: None,
            node: Some("n1".into()),
            phase: PodPhase::Running,
            ready: true,
            qos: None,
            generation: 1,
            observed_generation: Some(1),
            labels: Default::default(),
            revision: None,
            containers: Vec::new(),
            statuses: vec![ContainerStatus {
                name: "app".into(),
                ready: true,
                restart_count: restarts,
                resources: None,
                allocated: None,
                last_termination: last.map(|r| Termination {
                    reason: r.into(),
                    exit_code: 137,
                    finished_at_ms: Some(T0 + 60_000),
                }),
            }],
            resize: ResizeState::Settled,
            created_ms: Some(created),
            deleting: false,
            unschedulable: None,
        }
    }

    #[test]
    fn restarts_before_the_change_are_not_counted_and_an_oom_after_it_rolls_back() {
        let mut w = watch(512, 256, (500, 500));
        // kerf's own resize restarted the container once: the baseline.
        let before = pod("p1", T0 - 86_400_000, 1, Some("Completed"));
        assert!(observe(&mut w, &[&before], &[]));
        assert_eq!((w.restarts, w.oom_kills), (0, 0));
        assert_eq!(judge(&w, T0 + 10_000), Verdict::Watching);
        let killed = pod("p1", T0 - 86_400_000, 2, Some("OOMKilled"));
        assert!(observe(&mut w, &[&killed], &[]));
        assert_eq!((w.restarts, w.oom_kills), (1, 1));
        match judge(&w, T0 + 70_000) {
            Verdict::RollBack(c) => {
                assert_eq!(c.reason, Reason::OOMKills);
                assert_eq!(c.details["oomKills"], "1");
                assert_eq!(c.details["watchDuration"], "30m");
            }
            other => panic!("expected a rollback, got {other:?}"),
        }
        // The rollback restores the values before, the same way.
        let op = rollback(
            &w,
            RollbackCause {
                reason: Reason::OOMKills,
                message: String::new(),
                details: Default::default(),
            },
            "e2".into(),
            T0,
        );
        assert_eq!(op.containers[0].to, w.containers[0].from);
        assert_eq!(op.strategy, Strategy::InPlace);
    }

    #[test]
    fn pods_made_after_the_change_count_from_zero_and_oom_counts_only_for_memory_changes() {
        // A CPU-only change: OOM kills are not blamed on it.
        let mut w = watch(512, 512, (500, 250));
        let fresh = pod("p2", T0 + 1_000, 3, Some("OOMKilled"));
        observe(&mut w, &[&fresh], &[]);
        assert_eq!((w.restarts, w.oom_kills), (3, 3));
        assert_eq!(judge(&w, T0 + 70_000), Verdict::Watching);
        // Crashes for another reason are.
        let mut w = watch(512, 512, (500, 250));
        let crashing = pod("p3", T0 + 1_000, 3, Some("Error"));
        observe(&mut w, &[&crashing], &[]);
        match judge(&w, T0 + 70_000) {
            Verdict::RollBack(c) => {
                assert_eq!(c.reason, Reason::Restarts);
                assert_eq!(c.details["restarts"], "3");
            }
            other => panic!("expected Restarts, got {other:?}"),
        }
    }

    #[test]
    fn throttling_is_judged_on_the_counters_since_the_change_and_the_watch_ends() {
        let mut w = watch(512, 512, (500, 250));
        let p = pod("p1", T0 - 1_000, 0, None);
        let counters = |periods, throttled| {
            vec![CpuCounters {
                pod: PodRef::new("shop", "p1"),
                container: "app".into(),
                periods,
                throttled_periods: throttled,
            }]
        };
        // Before the change: 1000 periods, 900 throttled; not counted.
        observe(&mut w, &[&p], &counters(1000, 900));
        observe(&mut w, &[&p], &counters(1050, 910));
        assert_eq!(throttling_ratio(&w), None, "too few periods yet");
        observe(&mut w, &[&p], &counters(1200, 930));
        assert_eq!(throttling_ratio(&w), Some(0.15));
        assert_eq!(judge(&w, T0 + 60_000), Verdict::Watching);
        assert_eq!(judge(&w, T0 + 1_800_000), Verdict::Passed);
        observe(&mut w, &[&p], &counters(1400, 1030));
        match judge(&w, T0 + 90_000) {
            Verdict::RollBack(c) => {
                assert_eq!(c.reason, Reason::Throttling);
                assert_eq!(c.details["throttlingRatio"], "0.33");
            }
            other => panic!("expected Throttling, got {other:?}"),
        }
        // A threshold of 0 is off.
        w.thresholds.throttling_ratio = 0.0;
        assert_eq!(judge(&w, T0 + 90_000), Verdict::Watching);
    }

    #[test]
    fn a_cronjobs_watch_waits_for_its_next_run_and_lasts_its_duration_from_it() {
        use crate::agent::decide::next_run::{follow, MAX_WAIT_MS};
        let mut live = crate::agent::decide::fixture::fixture().live;
        live.strategy = crate::cluster::UpdateStrategy::NextRun;
        let mut w = watch(512, 256, (500, 500));
        let hour = 3_600_000;
        // A night without a run: still watching, long past `watchDuration`.
        follow(&mut w, Some(&live), &[], T0 + 10 * hour);
        assert_eq!(judge(&w, T0 + 10 * hour), Verdict::Watching);
        // The run in progress before the change is not the next run.
        let old = pod("old", T0 - hour, 0, None);
        follow(&mut w, Some(&live), &[&old], T0 + 20 * hour);
        assert_eq!(judge(&w, T0 + 20 * hour), Verdict::Watching);
        // The next run starts a day later: 30 minutes from its pod, then passed.
        let next = pod("next", T0 + 24 * hour, 0, None);
        follow(&mut w, Some(&live), &[&old, &next], T0 + 24 * hour + 10_000);
        assert_eq!(w.until_ms, T0 + 24 * hour + 1_800_000);
        assert_eq!(judge(&w, T0 + 24 * hour + 60_000), Verdict::Watching);
        assert_eq!(judge(&w, T0 + 25 * hour), Verdict::Passed);
        // No run at all: it passes after the longest wait, having nothing to judge.
        let mut idle = watch(512, 256, (500, 500));
        follow(&mut idle, Some(&live), &[], T0 + 9 * 24 * hour);
        assert_eq!(idle.until_ms, T0 + MAX_WAIT_MS);
        // Other workloads keep the wall clock.
        let mut plain = watch(512, 256, (500, 500));
        live.strategy = crate::cluster::UpdateStrategy::Recreate;
        follow(&mut plain, Some(&live), &[], T0 + 10 * hour);
        assert_eq!(plain.until_ms, T0 + 1_800_000);
    }
}

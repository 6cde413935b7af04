//! One group's settings and OOM kills (queries 9, 9b, 10, 11 and 16–19 of
//! docs/contracts/datasource.md) from the stored kube-state-metrics series, as
//! Prometheus answers them: the current requests and limits as a raw `[5m]` range
//! (those of the finished latest runs of batch work as a raw `[W]` one); the OOM
//! terminations and the restart inference (init containers and sidecars always, app
//! containers without a termination time) as range queries on the step grid (`steps`);
//! the memory-limit history of the OOM-killed pods as a raw `[W]` range.

use std::collections::BTreeSet;

use super::inventory::NOW_RANGE_MS;
use super::promql::{grouping, larger, max_by, max_over_time, range_at};
use super::selection::Selection;
use super::steps::{walk, Answer, Grid, Piece};
use crate::datasource::raw::{label, metric, Labels, RawSeries, RawSettings};
use crate::datasource::Window;
use crate::store::usage::{LabelMatcher, METRIC_NAME};
use crate::store::{StoreError, UsageRead};

/// What OOM series are grouped by (`max by (namespace, pod, uid, container)`).
const CONTAINER: [&str; 4] = [label::NAMESPACE, label::POD, label::UID, label::CONTAINER];
const OOM_KILLED: &str = "OOMKilled";

/// The settings of group `sel` over `window` (`window_ms`: the `[W]` of its queries).
pub fn group_settings(
    r: &UsageRead<'_>,
    (sel, finished, batch): (&Selection, Option<&Selection>, Option<&Selection>),
    window: Window,
    window_ms: i64,
) -> Result<RawSettings, StoreError> {
    let end = window.end_ms;
    let grid = Grid::of(window);
    let settings = |sel: &Selection| {
        sel.query(metric::SETTINGS_NOW)
            .matching(LabelMatcher::one_of(label::RESOURCE, ["cpu", "memory", ""]))
    };
    let mut settings_now = range_at(r, &settings(sel), end, NOW_RANGE_MS)?;
    // The latest runs of batch work that no longer run: their settings over `[W]`.
    if let Some(finished) = finished {
        settings_now.extend(range_at(r, &settings(finished), end, window_ms)?);
    }
    let oom_terminations = oom_terminations(r, sel, grid)?;
    let (mut restarts, mut oom_reasons) = (Vec::new(), Vec::new());
    // Query 16: containers last terminated by an OOM kill at some time of the window:
    // init containers and sidecars (no termination time is exported of theirs), and
    // app containers too when none of theirs has one.
    let reason = reasons(sel, oom_terminations.is_empty());
    let killed = max_by(&CONTAINER, max_over_time(r, &reason, end, window_ms)?, end);
    if !killed.is_empty() {
        let pods = sel.pods_of(&killed);
        restarts = restart_counts(r, &pods, grid)?;
        oom_reasons = oom_reasons_at_steps(r, &pods, grid)?;
    }
    // Query 19: batch work's pods that ended in an OOM kill and were not restarted.
    let terminated_ooms = match batch {
        Some(b) => {
            let q = b
                .query(&[metric::TERMINATED_NOW_REASON])
                .matching(LabelMatcher::equal("reason", OOM_KILLED));
            positive_at_steps(r, &q, grid)?
        }
        None => Vec::new(),
    };
    let with_kills: Vec<RawSeries> = oom_terminations
        .iter()
        .chain(&killed)
        .chain(&terminated_ooms)
        .cloned()
        .collect();
    let memory_limits = if with_kills.is_empty() {
        Vec::new()
    } else {
        let limits = sel
            .pods_of(&with_kills)
            .query(&[metric::LIMITS, metric::INIT_LIMITS])
            .matching(LabelMatcher::equal(label::RESOURCE, "memory"));
        range_at(r, &limits, end, window_ms)?
    };
    Ok(RawSettings {
        settings_now,
        memory_limits,
        oom_terminations,
        restarts,
        oom_reasons,
        terminated_ooms,
    })
}

/// `kube_pod_init_container_status_last_terminated_reason{reason="OOMKilled",S}`, and
/// with `apps` the same of app containers.
fn reasons(sel: &Selection, apps: bool) -> crate::store::usage::SeriesQuery {
    let names: &[&str] = if apps {
        &[metric::TERMINATED_REASON, metric::INIT_LAST_REASON]
    } else {
        &[metric::INIT_LAST_REASON]
    };
    sel.query(names)
        .matching(LabelMatcher::equal("reason", OOM_KILLED))
}

/// Query 11, a range query: `max by (namespace, pod, uid, container)
/// (last_terminated_timestamp{S} and on (namespace, pod, uid, container)
/// (last_terminated_reason{reason="OOMKilled",S} > 0))`. Only the containers that
/// have an `OOMKilled` reason are read; both metrics are walked together, so each step
/// joins what it sees of both.
fn oom_terminations(
    r: &UsageRead<'_>,
    sel: &Selection,
    grid: Grid,
) -> Result<Vec<RawSeries>, StoreError> {
    let window = (grid.first - super::promql::LOOKBACK_MS + 1, grid.end);
    let apps = sel
        .query(&[metric::TERMINATED_REASON])
        .matching(LabelMatcher::equal("reason", OOM_KILLED));
    let oom = r.series(&apps.between(window.0, window.1))?;
    if oom.is_empty() {
        return Ok(Vec::new());
    }
    let uids: BTreeSet<&str> = oom
        .iter()
        .map(|s| s.labels.get(label::UID).map_or("", String::as_str))
        .collect();
    // The timestamp series have no `reason` label: "" takes them with the OOM reasons.
    let both = sel
        .query(&[metric::TERMINATED_TIMESTAMP, metric::TERMINATED_REASON])
        .matching(LabelMatcher::one_of("reason", [OOM_KILLED, ""]))
        .matching(LabelMatcher::one_of(label::UID, uids));
    let mut answer = Answer::default();
    walk(r, &both, grid, |piece| join_at_steps(piece, &mut answer))?;
    Ok(answer.into_series())
}

fn join_at_steps(piece: &Piece, answer: &mut Answer) {
    for (i, &t) in piece.steps.iter().enumerate() {
        let killed: BTreeSet<Labels> = piece
            .series
            .iter()
            .filter(|(l, _)| {
                l.get(METRIC_NAME).map(String::as_str) == Some(metric::TERMINATED_REASON)
            })
            .filter(|(_, v)| v[i].is_some_and(|v| v > 0.0))
            .map(|(l, _)| grouping(&CONTAINER, l))
            .collect();
        let times = piece.series.iter().filter(|(l, _)| {
            l.get(METRIC_NAME).map(String::as_str) == Some(metric::TERMINATED_TIMESTAMP)
        });
        let joined = times.filter_map(|(l, v)| {
            let key = grouping(&CONTAINER, l);
            Some((key, v[i]?)).filter(|(key, _)| killed.contains(key))
        });
        push_max(answer, t, joined);
    }
}

/// `max by (…)` of one step's values, into the answer.
fn push_max(answer: &mut Answer, t: i64, values: impl Iterator<Item = (Labels, f64)>) {
    let mut max: Vec<(Labels, f64)> = Vec::new();
    for (key, v) in values {
        match max.iter_mut().find(|(k, _)| *k == key) {
            Some((_, m)) => *m = larger(*m, v),
            None => max.push((key, v)),
        }
    }
    for (key, v) in max {
        answer.push(key, t, v);
    }
}

/// Query 17, a range query: `max by (namespace, pod, uid, container)
/// (kube_pod_container_status_restarts_total{S'})`.
fn restart_counts(
    r: &UsageRead<'_>,
    sel: &Selection,
    grid: Grid,
) -> Result<Vec<RawSeries>, StoreError> {
    let mut answer = Answer::default();
    let restarts = sel.query(&[metric::RESTARTS, metric::INIT_RESTARTS]);
    walk(r, &restarts, grid, |piece| {
        for (i, &t) in piece.steps.iter().enumerate() {
            let values = piece
                .series
                .iter()
                .filter_map(|(l, v)| Some((grouping(&CONTAINER, l), v[i]?)));
            push_max(&mut answer, t, values);
        }
    })?;
    Ok(answer.into_series())
}

/// Query 18, a range query: `max by (namespace, pod, uid, container)
/// (kube_pod_container_status_last_terminated_reason{reason="OOMKilled",S'} > 0)`.
fn oom_reasons_at_steps(
    r: &UsageRead<'_>,
    sel: &Selection,
    grid: Grid,
) -> Result<Vec<RawSeries>, StoreError> {
    positive_at_steps(r, &reasons(sel, true), grid)
}

/// `max by (namespace, pod, uid, container) (q > 0)` as a range query.
fn positive_at_steps(
    r: &UsageRead<'_>,
    q: &crate::store::usage::SeriesQuery,
    grid: Grid,
) -> Result<Vec<RawSeries>, StoreError> {
    let mut answer = Answer::default();
    walk(r, q, grid, |piece| {
        for (i, &t) in piece.steps.iter().enumerate() {
            let values = piece.series.iter().filter_map(|(l, v)| {
                let v = v[i].filter(|v| *v > 0.0)?;
                Some((grouping(&CONTAINER, l), v))
            });
            push_max(&mut answer, t, values);
        }
    })?;
    Ok(answer.into_series())
}

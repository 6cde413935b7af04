//! Maintenance and freeze windows at a moment: cron (five fields) + duration in an IANA
//! time zone, or (freeze only) an absolute RFC 3339 range.
//!
//! A recurring window opens at each cron occurrence in local time and stays open for
//! `duration` of elapsed time, so "02:00 Europe/Berlin for 2h" is 02:00-04:00 local on
//! ordinary nights, and still two hours long on the nights the clocks change. A start in
//! the spring-forward gap (02:30 on the last Sunday of March) opens at the first minute
//! after the gap (03:00 CEST); a start in the autumn overlap opens once, at its first
//! occurrence. Windows that cannot be read (bad cron, zone or duration: validation
//! refuses them, but a feed is not trusted) are ignored and named in `unreadable`.

use crate::cron::{Cron, Zone};
use crate::policy::model::{FreezeWindow, MaintenanceWindow};
use crate::policy::validate::parse_duration;

/// An open window: when it opened and when it closes (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start_ms: i64,
    pub end_ms: i64,
}

/// A recurring window, read.
struct Recurring {
    cron: Cron,
    zone: Zone,
    duration_ms: i64,
}

impl Recurring {
    fn read(cron: &str, duration: &str, timezone: &str) -> Option<Recurring> {
        Some(Recurring {
            cron: Cron::five_fields(cron)?,
            zone: Zone::parse(timezone)?,
            duration_ms: parse_duration(duration)? as i64 * 1000,
        })
    }

    /// The occurrence open at `now_ms`, if any (the latest start whose span covers it).
    fn open_at(&self, now_ms: i64) -> Option<Span> {
        let start = self.cron.latest_until(self.zone, now_ms)?;
        let span = Span {
            start_ms: start,
            end_ms: start + self.duration_ms,
        };
        (now_ms < span.end_ms).then_some(span)
    }

    /// The first occurrence starting after `now_ms`.
    fn next_after(&self, now_ms: i64) -> Option<Span> {
        let start = self.cron.next_after(self.zone, now_ms)?;
        Some(Span {
            start_ms: start,
            end_ms: start + self.duration_ms,
        })
    }
}

/// Where maintenance stands for a workload at a moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Maintenance {
    /// A window is open until `end_ms`.
    Open(Span),
    /// No window is open; `next` is the next one (none when no window is readable).
    Closed { next: Option<Span> },
}

/// Maintenance at `now_ms` over `windows` (any open window opens maintenance).
pub fn maintenance(windows: &[MaintenanceWindow], now_ms: i64) -> Maintenance {
    let read: Vec<Recurring> = windows
        .iter()
        .filter_map(|w| Recurring::read(&w.cron, &w.duration, &w.timezone))
        .collect();
    if let Some(open) = read
        .iter()
        .filter_map(|r| r.open_at(now_ms))
        .max_by_key(|s| s.end_ms)
    {
        return Maintenance::Open(open);
    }
    Maintenance::Closed {
        next: read
            .iter()
            .filter_map(|r| r.next_after(now_ms))
            .min_by_key(|s| s.start_ms),
    }
}

/// The freeze window in force at `now_ms`, if any (the one that ends last).
pub fn freeze(windows: &[FreezeWindow], now_ms: i64) -> Option<Span> {
    windows
        .iter()
        .filter_map(|w| freeze_span(w, now_ms))
        .max_by_key(|s| s.end_ms)
}

fn freeze_span(w: &FreezeWindow, now_ms: i64) -> Option<Span> {
    match (&w.start, &w.end, &w.cron, &w.duration) {
        (Some(start), Some(end), _, _) => {
            let span = Span {
                start_ms: crate::timestamp::parse_ms(start)?,
                end_ms: crate::timestamp::parse_ms(end)?,
            };
            (span.start_ms <= now_ms && now_ms < span.end_ms).then_some(span)
        }
        (_, _, Some(cron), Some(duration)) => {
            Recurring::read(cron, duration, &w.timezone)?.open_at(now_ms)
        }
        _ => None,
    }
}

/// Windows of either list that cannot be read, as `maintenanceWindows[i]` /
/// `freezeWindows[i]` (they are ignored; the agent reports them in its message).
pub fn unreadable(maintenance: &[MaintenanceWindow], freezes: &[FreezeWindow]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, w) in maintenance.iter().enumerate() {
        if Recurring::read(&w.cron, &w.duration, &w.timezone).is_none() {
            out.push(format!("maintenanceWindows[{i}]"));
        }
    }
    for (i, w) in freezes.iter().enumerate() {
        let ok = match (&w.start, &w.end, &w.cron, &w.duration) {
            (Some(s), Some(e), _, _) => {
                crate::timestamp::parse_ms(s).is_some() && crate::timestamp::parse_ms(e).is_some()
            }
            (_, _, Some(c), Some(d)) => Recurring::read(c, d, &w.timezone).is_some(),
            _ => false,
        };
        if !ok {
            out.push(format!("freezeWindows[{i}]"));
        }
    }
    out
}

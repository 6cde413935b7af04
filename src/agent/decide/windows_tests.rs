//! Maintenance and freeze windows across daylight-saving changes, in several zones.

use super::windows::{freeze, maintenance, unreadable, Maintenance, Span};
use crate::policy::model::{FreezeWindow, MaintenanceWindow};
use crate::timestamp::parse_ms;

fn at(text: &str) -> i64 {
    parse_ms(text).expect("RFC 3339")
}

fn mw(cron: &str, duration: &str, tz: &str) -> MaintenanceWindow {
    MaintenanceWindow {
        cron: cron.into(),
        duration: duration.into(),
        timezone: tz.into(),
    }
}

fn span(start: &str, end: &str) -> Span {
    Span {
        start_ms: at(start),
        end_ms: at(end),
    }
}

fn open(windows: &[MaintenanceWindow], now: &str) -> Option<Span> {
    match maintenance(windows, at(now)) {
        Maintenance::Open(s) => Some(s),
        Maintenance::Closed { .. } => None,
    }
}

fn next(windows: &[MaintenanceWindow], now: &str) -> Option<Span> {
    match maintenance(windows, at(now)) {
        Maintenance::Closed { next } => next,
        Maintenance::Open(s) => panic!("open {s:?} at {now}"),
    }
}

#[test]
fn a_nightly_berlin_window_keeps_local_time_and_its_length_across_both_changes() {
    let w = [mw("0 2 * * *", "2h", "Europe/Berlin")];
    // Winter: 02:00 CET = 01:00 UTC.
    assert_eq!(
        open(&w, "2027-01-10T01:30:00Z"),
        Some(span("2027-01-10T01:00:00Z", "2027-01-10T03:00:00Z"))
    );
    // Summer: 02:00 CEST = 00:00 UTC.
    assert_eq!(
        open(&w, "2027-07-10T00:10:00Z"),
        Some(span("2027-07-10T00:00:00Z", "2027-07-10T02:00:00Z"))
    );
    // 2027-03-28: 02:00 CET jumps to 03:00 CEST; 02:00 does not exist, the window opens at
    // 03:00 CEST (01:00 UTC) and lasts two hours of elapsed time.
    assert_eq!(
        next(&w, "2027-03-27T23:00:00Z"),
        Some(span("2027-03-28T01:00:00Z", "2027-03-28T03:00:00Z"))
    );
    assert_eq!(open(&w, "2027-03-28T00:30:00Z"), None);
    // 2027-10-31: 03:00 CEST falls back to 02:00 CET; 02:00 happens twice and the window
    // opens once, at the first (00:00 UTC), for two hours.
    assert_eq!(
        next(&w, "2027-10-30T22:00:00Z"),
        Some(span("2027-10-31T00:00:00Z", "2027-10-31T02:00:00Z"))
    );
    assert_eq!(open(&w, "2027-10-31T02:30:00Z"), None, "no second opening");
    assert_eq!(
        next(&w, "2027-10-31T02:30:00Z"),
        Some(span("2027-11-01T01:00:00Z", "2027-11-01T03:00:00Z"))
    );
}

#[test]
fn next_window_in_new_york_across_the_spring_change() {
    // Weekdays 02:30 America/New_York for 1h. 2027-03-14 (Sunday) is the change; the next
    // weekday, Monday 2027-03-15 02:30 EDT, is 06:30 UTC (the Friday before, 07:30 UTC).
    let w = [mw("30 2 * * 1-5", "1h", "America/New_York")];
    assert_eq!(
        next(&w, "2027-03-12T09:00:00Z"),
        Some(span("2027-03-15T06:30:00Z", "2027-03-15T07:30:00Z"))
    );
    assert_eq!(
        open(&w, "2027-03-12T07:45:00Z"),
        Some(span("2027-03-12T07:30:00Z", "2027-03-12T08:30:00Z"))
    );
}

#[test]
fn a_window_that_spans_midnight_and_the_latest_of_overlapping_windows_count() {
    let w = [
        mw("0 23 * * *", "3h", "UTC"),
        mw("0 1 * * *", "30m", "Asia/Tokyo"),
    ];
    assert_eq!(
        open(&w, "2027-05-02T01:00:00Z"),
        Some(span("2027-05-01T23:00:00Z", "2027-05-02T02:00:00Z"))
    );
    // Of two open windows, the one that stays open longest.
    let both = [
        mw("0 10 * * *", "1h", "UTC"),
        mw("30 10 * * *", "2h", "UTC"),
    ];
    assert_eq!(
        open(&both, "2027-05-02T10:45:00Z"),
        Some(span("2027-05-02T10:30:00Z", "2027-05-02T12:30:00Z"))
    );
    // The earliest next start of several windows.
    assert_eq!(
        next(&both, "2027-05-02T13:00:00Z").map(|s| s.start_ms),
        Some(at("2027-05-03T10:00:00Z"))
    );
}

#[test]
fn freeze_windows_absolute_and_recurring() {
    let absolute = FreezeWindow {
        start: Some("2026-12-22T00:00:00Z".into()),
        end: Some("2026-12-24T00:00:00Z".into()),
        cron: None,
        duration: None,
        timezone: "UTC".into(),
    };
    // Friday 18:00 Sydney for 62h: the weekend, across the April change (AEDT → AEST).
    let weekend = FreezeWindow {
        start: None,
        end: None,
        cron: Some("0 18 * * 5".into()),
        duration: Some("62h".into()),
        timezone: "Australia/Sydney".into(),
    };
    let list = [absolute, weekend];
    assert_eq!(
        freeze(&list, at("2026-12-23T12:00:00Z")),
        Some(span("2026-12-22T00:00:00Z", "2026-12-24T00:00:00Z"))
    );
    assert_eq!(
        freeze(&list, at("2026-12-24T00:00:00Z")),
        None,
        "end is exclusive"
    );
    // On Christmas Day (a Friday) the weekend window starts too and ends later.
    assert_eq!(
        freeze(&list, at("2026-12-25T12:00:00Z")).map(|s| s.end_ms),
        Some(at("2026-12-27T21:00:00Z"))
    );
    // 2027-04-02 18:00 AEDT = 07:00 UTC; clocks go back on Sunday 04-04; 62h later is
    // 2027-04-04T21:00Z.
    assert_eq!(
        freeze(&list, at("2027-04-04T20:59:00Z")),
        Some(span("2027-04-02T07:00:00Z", "2027-04-04T21:00:00Z"))
    );
    assert_eq!(freeze(&list, at("2027-04-04T21:00:00Z")), None);
}

#[test]
fn unreadable_windows_are_ignored_and_named() {
    let bad = [
        mw("every night", "2h", "UTC"),
        mw("0 2 * * *", "forever", "UTC"),
        mw("0 2 * * *", "2h", "Mars/Olympus"),
        mw("0 0 2 * * *", "2h", "UTC"),
    ];
    assert_eq!(
        maintenance(&bad, at("2027-01-01T02:30:00Z")),
        Maintenance::Closed { next: None }
    );
    let half = FreezeWindow {
        start: Some("2027-01-01T00:00:00Z".into()),
        end: None,
        cron: None,
        duration: None,
        timezone: "UTC".into(),
    };
    assert_eq!(
        unreadable(&bad, &[half]),
        [
            "maintenanceWindows[0]",
            "maintenanceWindows[1]",
            "maintenanceWindows[2]",
            "maintenanceWindows[3]",
            "freezeWindows[0]"
        ]
    );
}

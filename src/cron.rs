//! Cron: the one place kerf reads and evaluates cron expressions (croner) and IANA time
//! zones (chrono-tz, embedded). Run schedules (UTC), digest slots and maintenance and
//! freeze windows (local time in a zone) all ask it. Pure: every question carries the
//! time it is asked from, in Unix milliseconds.
//!
//! Two readings, as the callers have always had them: [`Cron::parse`] (5 fields, 6 with
//! seconds, or an alias such as `@hourly`, around whitespace ignored; run schedules
//! and digests) and [`Cron::five_fields`] (exactly five fields; policies' windows).

use std::str::FromStr;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds};

/// A cron expression, read.
#[derive(Debug, Clone)]
pub struct Cron(croner::Cron);

/// An IANA time zone known to kerf's embedded database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone(Tz);

impl Zone {
    /// The zone named `name` (`Europe/Berlin`, `UTC`), if there is one.
    pub fn parse(name: &str) -> Option<Zone> {
        Tz::from_str(name).ok().map(Zone)
    }

    fn at(self, ms: i64) -> Option<DateTime<Tz>> {
        Some(DateTime::<Utc>::from_timestamp_millis(ms)?.with_timezone(&self.0))
    }

    /// `ms` in this zone's local time, for people: `Mon 29 Mar 2027 09:00 CEST`.
    pub fn label(self, ms: i64) -> Option<String> {
        Some(self.at(ms)?.format("%a %d %b %Y %H:%M %Z").to_string())
    }
}

impl Cron {
    /// Five fields, or six with seconds, or an alias; the error names the expression
    /// and says what is wrong with it.
    pub fn parse(expr: &str) -> Result<Cron, String> {
        CronParser::builder()
            .seconds(Seconds::Optional)
            .build()
            .parse(expr.trim())
            .map(Cron)
            .map_err(|e| format!("{expr:?} is not a cron expression: {e}"))
    }

    /// Exactly five fields (minute to weekday), or `None`.
    pub fn five_fields(expr: &str) -> Option<Cron> {
        if expr.split_whitespace().count() != 5 {
            return None;
        }
        croner::Cron::from_str(expr).ok().map(Cron)
    }

    /// The first occurrence strictly after `after_ms`, in UTC; `None` when it never
    /// fires again.
    pub fn next_after_utc(&self, after_ms: i64) -> Option<i64> {
        let after: DateTime<Utc> = DateTime::from_timestamp_millis(after_ms)?;
        self.0
            .find_next_occurrence(&after, false)
            .ok()
            .map(|t| t.timestamp_millis())
    }

    /// The first occurrence strictly after `after_ms`, in `zone`'s local time.
    pub fn next_after(&self, zone: Zone, after_ms: i64) -> Option<i64> {
        let t = self
            .0
            .find_next_occurrence(&zone.at(after_ms)?, false)
            .ok()?;
        Some(t.timestamp_millis())
    }

    /// The latest occurrence at or before `ms`, in `zone`'s local time.
    pub fn latest_until(&self, zone: Zone, ms: i64) -> Option<i64> {
        let t = self.0.find_previous_occurrence(&zone.at(ms)?, true).ok()?;
        Some(t.timestamp_millis())
    }

    /// The latest occurrence strictly before `before_ms`, in `zone`'s local time.
    pub fn latest_before(&self, zone: Zone, before_ms: i64) -> Option<i64> {
        let t = self
            .0
            .find_previous_occurrence(&zone.at(before_ms)?, false)
            .ok()?;
        Some(t.timestamp_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z (a Thursday)

    #[test]
    fn both_readings_agree_on_five_fields_and_only_parse_takes_seconds_and_aliases() {
        assert!(Cron::parse(" 0 * * * * ").is_ok());
        assert!(Cron::five_fields("0 * * * *").is_some());
        assert!(Cron::parse("* * * * * *").is_ok());
        assert!(Cron::five_fields("* * * * * *").is_none());
        assert!(Cron::five_fields("@daily").is_none());
        assert!(Cron::five_fields("61 * * * *").is_none());
        let err = Cron::parse("every hour").unwrap_err();
        assert!(
            err.starts_with("\"every hour\" is not a cron expression: "),
            "{err}"
        );
    }

    #[test]
    fn occurrences_are_found_in_the_zone_asked_for() {
        let nine = Cron::five_fields("0 9 * * *").expect("cron");
        let utc = Zone::parse("UTC").expect("zone");
        let berlin = Zone::parse("Europe/Berlin").expect("zone");
        assert_eq!(nine.next_after_utc(T0), Some(T0 + 9 * 3_600_000));
        assert_eq!(nine.next_after(utc, T0), Some(T0 + 9 * 3_600_000));
        // 09:00 CET is 08:00 UTC.
        assert_eq!(nine.next_after(berlin, T0), Some(T0 + 8 * 3_600_000));
        let slot = T0 + 8 * 3_600_000;
        assert_eq!(nine.latest_until(berlin, slot), Some(slot));
        assert_eq!(nine.latest_before(berlin, slot), Some(slot - 86_400_000));
        assert_eq!(
            berlin.label(slot).as_deref(),
            Some("Thu 01 Jan 2026 09:00 CET")
        );
        assert!(Zone::parse("Mars/Olympus").is_none());
    }
}

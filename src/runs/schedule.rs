//! Cron schedules of recommendation runs: parsing (5 fields, or 6 with seconds, or
//! aliases such as `@hourly`) and the pure [`next_due`], in UTC. The cron itself is
//! `crate::cron`'s.

use crate::cron::Cron;

/// The default schedule: at minute 0 of every hour (UTC).
pub const DEFAULT_SCHEDULE: &str = "0 * * * *";

/// Parses a cron expression; the error says what is wrong with it.
pub fn parse(schedule: &str) -> Result<Cron, String> {
    Cron::parse(schedule)
}

/// The first time strictly after `after_ms` (Unix ms) at which `schedule` fires, in UTC.
/// `None` when the schedule never fires again.
pub fn next_due(schedule: &Cron, after_ms: i64) -> Option<i64> {
    schedule.next_after_utc(after_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    #[test]
    fn hourly_default_fires_at_the_next_full_hour() {
        let cron = parse(DEFAULT_SCHEDULE).unwrap();
        assert_eq!(next_due(&cron, T0), Some(T0 + 3_600_000));
        assert_eq!(next_due(&cron, T0 + 1), Some(T0 + 3_600_000));
        assert_eq!(next_due(&cron, T0 + 3_599_999), Some(T0 + 3_600_000));
    }

    #[test]
    fn next_due_is_strictly_after_the_given_time() {
        let cron = parse("*/15 * * * *").unwrap();
        assert_eq!(next_due(&cron, T0 + 900_000), Some(T0 + 1_800_000));
    }

    #[test]
    fn six_fields_schedule_by_the_second_and_aliases_work() {
        let every_second = parse("* * * * * *").unwrap();
        assert_eq!(next_due(&every_second, T0 + 250), Some(T0 + 1000));
        let daily = parse("@daily").unwrap();
        assert_eq!(next_due(&daily, T0), Some(T0 + 86_400_000));
    }

    #[test]
    fn junk_schedules_are_refused_with_the_expression_named() {
        for bad in ["", "every hour", "61 * * * *", "* * *"] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }
}

//! When a channel's digest is due: a cron expression evaluated in an IANA time zone, so
//! "Monday 09:00 in Europe/Berlin" stays 09:00 local across daylight-saving changes.
//! Pure: every function takes the times it compares. The cron and the zone are
//! `crate::cron`'s.

use serde::{Deserialize, Serialize};

use crate::cron::{Cron, Zone};
use crate::notify::FieldError;

/// Monday 09:00.
pub const DEFAULT_SCHEDULE: &str = "0 9 * * 1";
/// Two digests are at least this far apart (a digest is a summary, not a feed).
const MIN_INTERVAL_MS: i64 = 3_600_000;

/// `PUT /v1/notifications/channels/{id}/digest`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DigestInput {
    pub enabled: bool,
    /// Cron (5 fields, or an alias such as `@weekly`); default Monday 09:00.
    pub schedule: Option<String>,
    /// IANA zone; default the hub's (`notifications.time_zone`).
    pub time_zone: Option<String>,
    /// Why (recorded in the audit).
    pub reason: Option<String>,
}

/// Checks a schedule and zone; errors name `schedule` or `timeZone`.
pub fn validate(schedule: &str, tz: &str) -> Result<(), Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut err = |field: &str, message: String| {
        errors.push(FieldError {
            field: field.into(),
            message,
        })
    };
    if Zone::parse(tz).is_none() {
        err(
            "timeZone",
            format!("{tz:?} is not an IANA time zone (e.g. Europe/Berlin)"),
        );
    }
    match Cron::parse(schedule) {
        Err(e) => err("schedule", e),
        Ok(_) if schedule.split_whitespace().count() == 6 => err(
            "schedule",
            "digests are scheduled to the minute: use 5 fields".into(),
        ),
        Ok(_) => {
            // Two consecutive slots from a fixed point show how often it fires.
            let first = next_slot(schedule, tz, 1_767_225_600_000);
            let second = first.and_then(|f| next_slot(schedule, tz, f));
            match (first, second) {
                (None, _) => err("schedule", "never fires".into()),
                (Some(a), Some(b)) if b - a < MIN_INTERVAL_MS => err(
                    "schedule",
                    "fires more than once an hour; a digest is a summary".into(),
                ),
                _ => {}
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The first slot strictly after `after_ms`, or `None` (bad schedule or zone, or never).
pub fn next_slot(schedule: &str, tz: &str, after_ms: i64) -> Option<i64> {
    let cron = Cron::parse(schedule).ok()?;
    cron.next_after(Zone::parse(tz)?, after_ms)
}

/// The latest slot in `(after_ms, now_ms]`: the one digest owed now. Missed slots
/// before it (the hub was down) are not owed separately.
pub fn due_slot(schedule: &str, tz: &str, after_ms: i64, now_ms: i64) -> Option<i64> {
    let cron = Cron::parse(schedule).ok()?;
    let slot = cron.latest_until(Zone::parse(tz)?, now_ms)?;
    (slot > after_ms).then_some(slot)
}

/// The latest slot strictly before `before_ms`: where the digest of the slot at
/// `before_ms` starts counting.
pub fn previous_slot(schedule: &str, tz: &str, before_ms: i64) -> Option<i64> {
    let cron = Cron::parse(schedule).ok()?;
    cron.latest_before(Zone::parse(tz)?, before_ms)
}

/// A slot's local time, for people: `Mon 29 Mar 2027 09:00 CEST`.
pub fn local_label(tz: &str, ms: i64) -> String {
    match Zone::parse(tz).and_then(|z| z.label(ms)) {
        Some(label) => label,
        None => crate::timestamp::format_ms(ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
            .single()
            .expect("valid")
            .timestamp_millis()
    }

    #[test]
    fn monday_nine_in_berlin_stays_nine_local_across_the_spring_change() {
        // 2027-03-28 is the last Sunday of March: CET (+1) becomes CEST (+2).
        let before = next_slot(DEFAULT_SCHEDULE, "Europe/Berlin", utc(2027, 3, 20, 0, 0));
        assert_eq!(before, Some(utc(2027, 3, 22, 8, 0)));
        let after = next_slot(DEFAULT_SCHEDULE, "Europe/Berlin", utc(2027, 3, 22, 9, 0));
        assert_eq!(after, Some(utc(2027, 3, 29, 7, 0)));
        assert_eq!(
            local_label("Europe/Berlin", utc(2027, 3, 29, 7, 0)),
            "Mon 29 Mar 2027 09:00 CEST"
        );
    }

    #[test]
    fn the_owed_slot_is_the_latest_one_not_yet_done() {
        let s = DEFAULT_SCHEDULE;
        let done = utc(2027, 3, 22, 8, 0);
        assert_eq!(
            due_slot(s, "Europe/Berlin", done, utc(2027, 3, 29, 6, 59)),
            None
        );
        assert_eq!(
            due_slot(s, "Europe/Berlin", done, utc(2027, 3, 29, 7, 0)),
            Some(utc(2027, 3, 29, 7, 0))
        );
        // Down for three weeks: one digest, for the latest slot.
        assert_eq!(
            due_slot(s, "Europe/Berlin", done, utc(2027, 4, 13, 0, 0)),
            Some(utc(2027, 4, 12, 7, 0))
        );
        assert_eq!(
            due_slot(
                s,
                "Europe/Berlin",
                utc(2027, 4, 12, 7, 0),
                utc(2027, 4, 13, 0, 0)
            ),
            None
        );
    }

    #[test]
    fn the_hour_after_the_slot_owes_nothing_more_across_the_change() {
        // 09:00 CEST on 29 March is 07:00 UTC; a fixed offset kept from the week before
        // (CET) would put it at 08:00 UTC. At that hour the one owed slot is still the
        // 07:00 one, and once it is done nothing more is owed until next week.
        let (s, tz) = (DEFAULT_SCHEDULE, "Europe/Berlin");
        let week_before = utc(2027, 3, 22, 8, 0);
        let slot = utc(2027, 3, 29, 7, 0);
        let hour_after = utc(2027, 3, 29, 8, 0);
        assert_eq!(due_slot(s, tz, week_before, hour_after), Some(slot));
        assert_eq!(due_slot(s, tz, slot, hour_after), None);
        assert_eq!(due_slot(s, tz, slot, utc(2027, 4, 5, 6, 59)), None);
        assert_eq!(next_slot(s, tz, hour_after), Some(utc(2027, 4, 5, 7, 0)));
        assert_eq!(previous_slot(s, tz, slot), Some(week_before));
    }

    #[test]
    fn schedules_that_are_junk_too_frequent_or_in_no_zone_are_refused() {
        assert!(validate(DEFAULT_SCHEDULE, "UTC").is_ok());
        assert!(validate("@weekly", "America/New_York").is_ok());
        let fields = |s: &str, tz: &str| -> Vec<String> {
            validate(s, tz)
                .unwrap_err()
                .into_iter()
                .map(|e| e.field)
                .collect()
        };
        assert_eq!(fields("*/5 * * * *", "UTC"), ["schedule"]);
        assert_eq!(fields("0 0 9 * * 1", "UTC"), ["schedule"]);
        assert_eq!(
            fields("sometimes", "Mars/Olympus"),
            ["timeZone", "schedule"]
        );
    }
}

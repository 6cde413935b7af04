//! Timestamps at kerf's edges: Unix milliseconds inside (database, engine), RFC 3339 in
//! the API, the CLI and config documents. The one place that converts between them.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Parses an RFC 3339 timestamp into Unix milliseconds.
pub fn parse_ms(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}

/// RFC 3339 in UTC with exactly three fractional digits, so formatted times sort as text.
const FIXED_MS: &[time::format_description::BorrowedFormatItem<'static>] = time::macros::format_description!(
    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
);

/// Formats Unix milliseconds as RFC 3339 in UTC with millisecond precision, e.g.
/// `2026-11-04T10:15:00.000Z` (empty for out-of-range values).
pub fn format_ms(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .ok()
        .and_then(|t| t.format(FIXED_MS).ok())
        .unwrap_or_default()
}

/// `3d 4h`, `45m`, `20s`: the two largest units of a duration, as people read it.
pub fn human_duration(seconds: u64) -> String {
    let units = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];
    let parts: Vec<String> = units
        .iter()
        .scan(seconds, |left, (size, unit)| {
            let n = *left / size;
            *left %= size;
            Some((n, *unit))
        })
        .filter(|(n, _)| *n > 0)
        .take(2)
        .map(|(n, u)| format!("{n}{u}"))
        .collect();
    if parts.is_empty() {
        "0s".into()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn milliseconds_round_trip_through_rfc3339() {
        let ms = 1_793_787_300_123;
        assert_eq!(super::format_ms(ms), "2026-11-04T10:15:00.123Z");
        assert_eq!(
            super::format_ms(1_793_787_300_000),
            "2026-11-04T10:15:00.000Z"
        );
        assert!(super::format_ms(1_793_787_300_320) < super::format_ms(1_793_787_300_325));
        assert_eq!(super::parse_ms(&super::format_ms(ms)), Some(ms));
        assert_eq!(
            super::parse_ms("2026-11-04T11:15:00+01:00"),
            Some(1_793_787_300_000)
        );
        assert_eq!(super::parse_ms("yesterday"), None);
    }
}

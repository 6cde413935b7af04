//! Timestamps at kerf's edges: Unix milliseconds inside (database, engine), RFC 3339 in
//! the API, the CLI and config documents. The one place that converts between them.

use chrono::{DateTime, Datelike, Timelike};

/// Parses an RFC 3339 timestamp into Unix milliseconds.
///
/// chrono's parser, held to the grammar kerf has always accepted: ASCII only (chrono
/// alone also takes U+2212 as an offset's minus sign), any ASCII separator between date
/// and time, and a leap second only at the end of a month in UTC, standing for its last
/// nanosecond. Sub-millisecond digits are dropped toward zero.
pub fn parse_ms(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if !text.is_ascii() || bytes.len() < 19 {
        return None;
    }
    let leap = &bytes[17..19] == b"60";
    let mut fixed = text.to_owned();
    fixed.replace_range(10..11, "T");
    if leap {
        fixed.replace_range(17..19, "59");
    }
    let t = DateTime::parse_from_rfc3339(&fixed).ok()?.to_utc();
    let nanos = if leap {
        let last_of_month = t.checked_add_signed(chrono::TimeDelta::seconds(1))?.day() == 1;
        if (t.hour(), t.minute(), t.second()) != (23, 59, 59) || !last_of_month {
            return None;
        }
        999_999_999
    } else {
        t.timestamp_subsec_nanos()
    };
    let total = i128::from(t.timestamp()) * 1_000_000_000 + i128::from(nanos);
    i64::try_from(total / 1_000_000).ok()
}

/// Formats Unix milliseconds as RFC 3339 in UTC with exactly three fractional digits
/// (so formatted times sort as text), e.g. `2026-11-04T10:15:00.000Z`; years -9999 to
/// 9999, empty outside them.
pub fn format_ms(ms: i64) -> String {
    let Some(t) = DateTime::from_timestamp_millis(ms).filter(|t| t.year().abs() <= 9999) else {
        return String::new();
    };
    format!(
        "{}{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        if t.year() < 0 { "-" } else { "" },
        t.year().unsigned_abs(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.timestamp_subsec_millis()
    )
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

    /// RFC 3339 as kerf has read it since the first release: pinned case by case, so a
    /// change of date-time crate cannot move an accepted input, its instant, or a byte of
    /// the text the API writes.
    #[test]
    fn rfc3339_edge_cases_keep_their_meaning() {
        let parsed: &[(&str, Option<i64>)] = &[
            ("2026-11-04T10:15:00.123Z", Some(1_793_787_300_123)),
            ("2026-11-04T10:15:00Z", Some(1_793_787_300_000)),
            ("2026-11-04t10:15:00z", Some(1_793_787_300_000)),
            // Any ASCII separator between date and time, as RFC 3339's note allows.
            ("2026-11-04 10:15:00Z", Some(1_793_787_300_000)),
            ("2026-11-04_10:15:00Z", Some(1_793_787_300_000)),
            ("2026-11-04\u{e9}10:15:00Z", None),
            // Fractions: any number of digits, cut (not rounded) to the millisecond.
            ("2026-11-04T10:15:00.1Z", Some(1_793_787_300_100)),
            ("2026-11-04T10:15:00.123999999Z", Some(1_793_787_300_123)),
            (
                "2026-11-04T10:15:00.99999999999999Z",
                Some(1_793_787_300_999),
            ),
            ("2026-11-04T10:15:00.Z", None),
            ("2026-11-04T10:15:00,5Z", None),
            // Offsets on input.
            ("2026-11-04T11:15:00+01:00", Some(1_793_787_300_000)),
            ("2026-11-04T05:45:00-04:30", Some(1_793_787_300_000)),
            ("2026-11-04T10:15:00-00:00", Some(1_793_787_300_000)),
            ("2026-11-04T10:15:00+23:59", Some(1_793_700_960_000)),
            ("2026-11-04T10:15:00+24:00", None),
            ("2026-11-04T10:15:00+01:60", None),
            ("2026-11-04T10:15:00+0100", None),
            ("2026-11-04T10:15:00+01", None),
            ("2026-11-04T10:15:00\u{2212}01:00", None),
            ("2026-11-04T10:15:00", None),
            // Leap years.
            ("2024-02-29T00:00:00Z", Some(1_709_164_800_000)),
            ("2000-02-29T12:00:00Z", Some(951_825_600_000)),
            ("2023-02-29T00:00:00Z", None),
            ("1900-02-29T00:00:00Z", None),
            // Out-of-range fields.
            ("2026-13-01T00:00:00Z", None),
            ("2026-11-31T00:00:00Z", None),
            ("2026-11-04T24:00:00Z", None),
            ("2026-11-04T10:60:00Z", None),
            // A leap second stands for the last millisecond before it, and only at the
            // end of a month in UTC.
            ("1998-12-31T23:59:60Z", Some(915_148_799_999)),
            ("2016-12-31T23:59:60.5Z", Some(1_483_228_799_999)),
            ("2015-07-01T01:59:60+02:00", Some(1_435_708_799_999)),
            ("2026-11-04T10:15:60Z", None),
            // Before 1970, and sub-millisecond digits dropped toward zero there too.
            ("1969-12-31T23:59:59.999Z", Some(-1)),
            ("1969-12-31T23:59:59.9995Z", Some(0)),
            // Far past and future: four-digit years only, the instant itself may leave them.
            ("0000-01-01T00:00:00Z", Some(-62_167_219_200_000)),
            ("0000-01-01T00:00:00+23:59", Some(-62_167_305_540_000)),
            ("9999-12-31T23:59:59.999Z", Some(253_402_300_799_999)),
            ("9999-12-31T23:59:59-23:59", Some(253_402_387_139_000)),
            ("10000-01-01T00:00:00Z", None),
            ("+2026-11-04T10:15:00Z", None),
            ("-0001-12-31T00:00:00Z", None),
            // Nothing around it.
            (" 2026-11-04T10:15:00Z", None),
            ("2026-11-04T10:15:00Z ", None),
            ("2026-11-04", None),
            ("", None),
        ];
        for (text, ms) in parsed {
            assert_eq!(super::parse_ms(text), *ms, "parse_ms({text:?})");
        }

        let formatted: &[(i64, &str)] = &[
            (0, "1970-01-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (1_709_164_800_000, "2024-02-29T00:00:00.000Z"),
            (951_825_600_007, "2000-02-29T12:00:00.007Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
            (253_402_300_800_000, ""),
            (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
            (-62_167_219_200_001, "-0001-12-31T23:59:59.999Z"),
            (-377_705_116_800_000, "-9999-01-01T00:00:00.000Z"),
            (-377_705_116_800_001, ""),
            (i64::MAX, ""),
            (i64::MIN, ""),
        ];
        for (ms, text) in formatted {
            assert_eq!(super::format_ms(*ms), *text, "format_ms({ms})");
        }
    }
}

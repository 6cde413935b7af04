//! The parameter types the query structs share: page sizes, times, the cursors of each
//! kind of list, and the time window and paging both audit logs take. Each refuses a
//! bad value with the words the API has always answered.

use serde::de::{Deserializer, Error as _};
use serde::Deserialize;
use serde_json::Value;

use super::{cursor_value, seq_value, MAX_LIMIT};

/// What every refused cursor says.
pub const NOT_A_CURSOR: &str = "is not a cursor returned by this API";

fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    String::deserialize(d)
}

/// `limit`: 1..=500.
pub fn limit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    text(d)?
        .parse()
        .ok()
        .filter(|n| (1..=MAX_LIMIT).contains(n))
        .map(Some)
        .ok_or_else(|| D::Error::custom("must be an integer from 1 to 500"))
}

/// The longest a feed's long poll (`wait`) holds a request, in seconds.
pub const MAX_WAIT_SECONDS: u64 = 20;

/// `wait`: 0..=20 seconds.
pub fn wait_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    text(d)?
        .parse()
        .ok()
        .filter(|n| *n <= MAX_WAIT_SECONDS)
        .map(Some)
        .ok_or_else(|| D::Error::custom("must be a whole number of seconds from 0 to 20"))
}

/// An RFC 3339 timestamp as Unix milliseconds.
pub fn time_ms<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    crate::timestamp::parse_ms(&text(d)?)
        .map(Some)
        .ok_or_else(|| D::Error::custom("must be an RFC 3339 timestamp"))
}

/// A cursor's JSON value (a list checks its shape).
pub fn cursor<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    cursor_value(&text(d)?)
        .map(Some)
        .ok_or_else(|| D::Error::custom(NOT_A_CURSOR))
}

/// A cursor holding a positive integer (a list's last `seq`).
pub fn seq<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    cursor_value(&text(d)?)
        .and_then(|v| v.as_i64())
        .filter(|n| *n > 0)
        .map(Some)
        .ok_or_else(|| D::Error::custom(NOT_A_CURSOR))
}

/// A cursor holding text (the feed's last workload id).
pub fn text_cursor<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    cursor_value(&text(d)?)
        .and_then(|v| v.as_str().map(str::to_string))
        .map(Some)
        .ok_or_else(|| D::Error::custom(NOT_A_CURSOR))
}

/// A cursor made by [`super::encode_seq`]: a position in an append-only log.
pub fn log_position<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    seq_value(&text(d)?)
        .map(Some)
        .ok_or_else(|| D::Error::custom(NOT_A_CURSOR))
}

/// The time window and paging both audit logs take: `since`, `until`, `limit`, `next`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogWindow {
    #[serde(rename = "since", deserialize_with = "time_ms")]
    pub since_ms: Option<i64>,
    #[serde(rename = "until", deserialize_with = "time_ms")]
    pub until_ms: Option<i64>,
    #[serde(deserialize_with = "limit")]
    pub limit: Option<usize>,
    /// The log position to continue below.
    #[serde(rename = "next", deserialize_with = "log_position")]
    pub before_seq: Option<i64>,
}

/// `?reason=` alone: what the deleting routes take.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReasonQuery {
    pub reason: Option<String>,
}

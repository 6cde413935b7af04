//! The document `POST`/`PUT /v1/datasources…` read, as types (they are also its
//! schema in the API document), and [`read`], which parses a body into them reporting
//! every member serde refuses, not only the first: a refused member is named by its
//! JSON path with what it must be (never its value, which may be a secret), left out,
//! and the rest read again. `connection::validate` then checks what the types cannot.

use std::ops::RangeInclusive;

use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::connection::FieldError;
use super::view::AuthKind;
use crate::secret::Secret;

/// What `POST /v1/datasources` and `PUT /v1/datasources/{id}` read. No field may be
/// `null` (leave it out instead). Secret fields (`auth.password`, `auth.token`, a
/// secret header's `value`) are write-only; on PUT, one left out keeps its stored value.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DatasourceInput {
    /// 1-100 letters, digits, `-`, `_` or `.`; unique.
    // Left out reads as empty, which the name check refuses with the field's rule.
    #[serde(default)]
    #[schema(required = true, pattern = r"^[A-Za-z0-9._-]{1,100}$")]
    pub name: String,
    /// Only `prometheus` (the default) is known.
    #[serde(rename = "type")]
    pub kind: Option<DatasourceKind>,
    /// An absolute http or https URL without credentials (use `auth`).
    #[serde(default)]
    #[schema(required = true, format = "uri")]
    pub url: String,
    /// Default `{"type": "none"}`.
    pub auth: Option<AuthInput>,
    pub headers: Option<Vec<HeaderInput>>,
    pub tls: Option<TlsInput>,
    #[schema(minimum = 1, maximum = 600)]
    pub timeout_seconds: Option<u64>,
    #[schema(minimum = 1, maximum = 64)]
    pub max_concurrent_queries: Option<u64>,
    #[schema(minimum = 10000, maximum = 100000000)]
    pub max_samples_per_query: Option<u64>,
    #[schema(minimum = 10, maximum = 1000000)]
    pub max_series_per_query: Option<u64>,
    /// Default `auto`: remote read when the server streams it, else `query_range`.
    pub protocol: Option<ProtocolName>,
    #[schema(minimum = 10, maximum = 3600)]
    pub step_seconds: Option<u64>,
    /// The label that tells clusters apart in a shared backend; empty for none.
    #[schema(pattern = r"^([A-Za-z_][A-Za-z0-9_]*)?$")]
    pub cluster_label: Option<String>,
    /// That label's value for the kerf cluster (empty: the cluster's name).
    pub cluster_value: Option<String>,
    /// Goes to the audit.
    // The API takes it out of the body before the settings are read (it is no setting).
    #[schema(max_length = 1024)]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DatasourceKind {
    Prometheus,
}

impl DatasourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DatasourceKind::Prometheus => "prometheus",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProtocolName {
    Auto,
    RemoteRead,
    VmExport,
    QueryRange,
}

impl ProtocolName {
    /// The stored spelling (`prometheus::ProtocolChoice::parse` reads it).
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolName::Auto => "auto",
            ProtocolName::RemoteRead => "remoteRead",
            ProtocolName::VmExport => "vmExport",
            ProtocolName::QueryRange => "queryRange",
        }
    }
}

/// `type` decides which other fields belong: `basic` takes `username` and
/// `password`, `bearer` takes `token`, `none` takes neither.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthInput {
    /// Default `none`.
    #[serde(rename = "type")]
    pub kind: Option<AuthKind>,
    #[schema(min_length = 1)]
    pub username: Option<String>,
    /// Write-only.
    #[schema(value_type = Option<String>, min_length = 1)]
    pub password: Option<Secret>,
    /// Write-only.
    #[schema(value_type = Option<String>, min_length = 1)]
    pub token: Option<Secret>,
}

/// A header sent with every query (not Authorization, Content-Type, Host or
/// Content-Length); a secret one's value is write-only.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaderInput {
    // Left out reads as empty, which the header check refuses.
    #[serde(default)]
    #[schema(required = true, pattern = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")]
    pub name: String,
    // A `Secret` whether or not the header is: which it is, `secret` says.
    #[schema(value_type = Option<String>)]
    pub value: Option<Secret>,
    /// Default false.
    pub secret: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TlsInput {
    /// A PEM bundle of CA certificates to trust.
    pub ca_pem: Option<String>,
    pub insecure_skip_verify: Option<bool>,
}

/// The whole-number settings and the ranges they are checked against (the schema's
/// `minimum` and `maximum` above say the same; a test keeps them equal).
pub(super) const RANGES: [(&str, u64, u64); 5] = [
    ("timeoutSeconds", 1, 600),
    ("maxConcurrentQueries", 1, 64),
    ("maxSamplesPerQuery", 10_000, 100_000_000),
    ("maxSeriesPerQuery", 10, 1_000_000),
    ("stepSeconds", 10, 3600),
];

/// The range of whole-number setting `key` and what it must be; `None` for others.
pub(super) fn range(key: &str) -> Option<(RangeInclusive<u64>, String)> {
    let (_, min, max) = RANGES.iter().find(|(k, ..)| *k == key)?;
    let message = format!("must be an integer from {min} to {max}");
    Some((*min..=*max, message))
}

/// The most members one read refuses before it stops: each refusal reads the body
/// again, and a body of thousands of bad members is not worth thousands of reads.
const MAX_REFUSED: usize = 100;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `$`, `$.auth.type`, `$.headers[0].name`.
fn dollar(path: &[Step]) -> String {
    let mut text = String::from("$");
    for step in path {
        match step {
            Step::Key(k) => {
                text.push('.');
                text.push_str(k);
            }
            Step::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

/// Reads `body` as a [`DatasourceInput`], pushing onto `errors` every member refused
/// (not an object where one is read, wrong type, unknown field, unknown value of an
/// enumeration), each then read as left out; a header refused whole reads as `{}`
/// (its checks are skipped: its path is among the errors). `None` when `body` is not
/// a JSON object, or after [`MAX_REFUSED`] refusals. A `null` reads as left out: the
/// API refuses nulls before, and a config file's unset keys come as null.
pub fn read(body: &Value, errors: &mut Vec<FieldError>) -> Option<DatasourceInput> {
    if !body.is_object() {
        errors.push(FieldError::new("$", "must be a JSON object"));
        return None;
    }
    let mut body = body.clone();
    let mut found = Vec::new();
    not_objects(&body, &mut Vec::new(), &mut found);
    for path in found {
        errors.push(FieldError::new(&dollar(&path), "must be an object"));
        leave_out(&mut body, &path);
    }
    for _ in 0..MAX_REFUSED {
        let e = match serde_path_to_error::deserialize(&body) {
            Ok(input) => return Some(input),
            Err(e) => e,
        };
        let path = steps(e.path())?;
        // serde words it "unknown field `x`, expected one of …".
        let message = if e.inner().to_string().starts_with("unknown field") {
            "unknown field".to_string()
        } else {
            expected(&path, &body)
        };
        errors.push(FieldError::new(&dollar(&path), &message));
        if !leave_out(&mut body, &path) {
            return None;
        }
    }
    None
}

fn steps(path: &serde_path_to_error::Path) -> Option<Vec<Step>> {
    use serde_path_to_error::Segment;
    path.iter()
        .map(|s| match s {
            Segment::Map { key } => Some(Step::Key(key.clone())),
            Segment::Seq { index } => Some(Step::Index(*index)),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect()
}

/// Leaves the member at `path` out of `body` (an array item becomes `{}`, so the
/// items after it keep their index); false when nothing changed.
fn leave_out(body: &mut Value, path: &[Step]) -> bool {
    let Some((last, parent)) = path.split_last() else {
        return false;
    };
    let mut at = body;
    for step in parent {
        let next = match step {
            Step::Key(k) => at.get_mut(k.as_str()),
            Step::Index(i) => at.get_mut(*i),
        };
        let Some(next) = next else { return false };
        at = next;
    }
    match (last, at) {
        (Step::Key(k), Value::Object(o)) => o.remove(k.as_str()).is_some(),
        (Step::Index(i), Value::Array(items)) => match items.get_mut(*i) {
            Some(item) if *item != Value::Object(Map::new()) => {
                *item = Value::Object(Map::new());
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// Where the input has an object.
fn object_at(path: &[Step]) -> bool {
    matches!(
        keys(path).as_slice(),
        ["auth"] | ["tls"] | ["headers", "[]"]
    )
}

/// The paths where `v` (at `path`) has neither an object nor `null` and the input an
/// object. serde would read an array there, by position; the others are refused here
/// all at once rather than one read each.
fn not_objects(v: &Value, path: &mut Vec<Step>, found: &mut Vec<Vec<Step>>) {
    let members: Vec<(Step, &Value)> = match v {
        Value::Object(map) => map.iter().map(|(k, x)| (Step::Key(k.clone()), x)).collect(),
        Value::Null => Vec::new(),
        _ if object_at(path) => return found.push(path.clone()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, x)| (Step::Index(i), x))
            .collect(),
        _ => Vec::new(),
    };
    for (step, x) in members {
        path.push(step);
        not_objects(x, path, found);
        path.pop();
    }
}

/// The keys of `path`, an index as `[]`.
fn keys(path: &[Step]) -> Vec<&str> {
    path.iter()
        .map(|s| match s {
            Step::Key(k) => k.as_str(),
            Step::Index(_) => "[]",
        })
        .collect()
}

/// The member of `body` at `path`.
fn at<'a>(body: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(body, |v, step| match step {
        Step::Key(k) => v.get(k.as_str()),
        Step::Index(i) => v.get(*i),
    })
}

/// What the member at `path` must be (the check's own words; never the value sent).
fn expected(path: &[Step], body: &Value) -> String {
    // An enumeration sent as another string is told its values; a non-string, that
    // it must be a string.
    let text = at(body, path).is_some_and(Value::is_string);
    let message = match keys(path).as_slice() {
        [] => "must be a JSON object",
        _ if object_at(path) => "must be an object",
        ["headers"] => "must be an array",
        ["headers", "[]", "secret"] | ["tls", "insecureSkipVerify"] => "must be a boolean",
        ["type"] if text => "must be \"prometheus\" (Prometheus, Thanos, Mimir, VictoriaMetrics)",
        ["protocol"] if text => "must be auto, remoteRead, vmExport or queryRange",
        ["auth", "type"] if text => "must be none, basic or bearer",
        [key] => return range(key).map_or_else(|| "must be a string".into(), |(_, m)| m),
        _ => "must be a string",
    };
    message.to_string()
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;

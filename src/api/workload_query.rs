//! The workload filter every workload view shares (the list, its totals and the
//! recommendations export): the query parameters, their validation, the sort orders and
//! their cursors, and the caller's team scope.

use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::IntoParams;

use super::access::Access;
use super::error::ApiError;
use super::query::{self, bad, decode_cursor, encode_cursor};
use crate::store::{ListedWorkload, NameMatch, Position, SortValue, WorkloadFilter, WorkloadSort};

/// The sort orders: query value, store order, cursor tag and default direction.
const SORTS: &[(&str, WorkloadSort, &str, bool)] = &[
    ("name", WorkloadSort::Name, "n", false),
    ("savings", WorkloadSort::Savings, "s", true),
    ("impact", WorkloadSort::Impact, "i", true),
    ("risk", WorkloadSort::Risk, "r", true),
    ("confidence", WorkloadSort::Confidence, "c", true),
];

/// The sort orders, as documented.
#[allow(dead_code)] // read only by the OpenAPI document
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortParam {
    Name,
    Savings,
    Impact,
    Risk,
    Confidence,
}

/// The directions, as documented.
#[allow(dead_code)] // read only by the OpenAPI document
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OrderParam {
    Asc,
    Desc,
}

#[allow(dead_code)] // read only by the OpenAPI document
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DataQualityParam {
    Available,
    Partial,
    Unavailable,
}

/// The filter's query parameters, as documented (the handlers read them with
/// [`take_filter`], which refuses unknown ones).
#[allow(dead_code)] // read only by the OpenAPI document
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadQuery {
    cluster: Option<String>,
    /// A prefix (`sho` finds `shop`), or a glob with `*` and `?` (`shop-*`).
    #[param(min_length = 1, max_length = 253)]
    namespace: Option<String>,
    /// A prefix, or a glob with `*` and `?`.
    #[param(min_length = 1, max_length = 253)]
    name: Option<String>,
    kind: Option<String>,
    /// Name contains (case-insensitive).
    q: Option<String>,
    /// The latest recommendation changes something.
    has_recommendation: Option<bool>,
    #[param(inline)]
    data_quality: Option<DataQualityParam>,
    /// A notice of the latest recommendation, e.g. `potential-memory-leak`.
    notice: Option<String>,
    stale: Option<bool>,
    /// Only workloads whose recommendation reduces a risk (OOM kill, memory leak,
    /// under-provisioned), or only the others.
    risk: Option<bool>,
}

/// What the query asked for beyond the filter itself.
#[derive(Debug, Default)]
pub struct Paging {
    pub order: Option<bool>,
    pub cursor: Option<Value>,
}

/// Applies one filter parameter to `f`; `Ok(false)` when `key` is not a filter.
pub fn take_filter(f: &mut WorkloadFilter, key: &str, value: String) -> Result<bool, ApiError> {
    match key {
        "cluster" => f.cluster = Some(value),
        "namespace" => f.namespace = Some(name_match(key, &value)?),
        "name" => f.name = Some(name_match(key, &value)?),
        "kind" => f.kind = Some(value),
        "q" => f.search = Some(value),
        "notice" => f.notice = Some(value),
        "dataQuality" => {
            if !["available", "partial", "unavailable"].contains(&value.as_str()) {
                return Err(bad(key, "must be available, partial or unavailable"));
            }
            f.data_quality = Some(value)
        }
        "hasRecommendation" => f.has_recommendation = Some(query::boolean(key, &value)?),
        "stale" => f.stale = Some(query::boolean(key, &value)?),
        "risk" => f.risky = Some(query::boolean(key, &value)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// A namespace or name filter: a glob when it has `*` or `?`, else a prefix.
fn name_match(key: &str, value: &str) -> Result<NameMatch, ApiError> {
    if value.is_empty() || value.len() > 253 {
        return Err(bad(key, "must be 1 to 253 characters"));
    }
    Ok(NameMatch::typed(value))
}

/// Applies one sort or paging parameter; `Ok(false)` when `key` is not one.
pub fn take_paging(
    f: &mut WorkloadFilter,
    p: &mut Paging,
    key: &str,
    value: &str,
) -> Result<bool, ApiError> {
    match key {
        "sort" => {
            f.sort = SORTS
                .iter()
                .find(|s| s.0 == value)
                .map(|s| s.1)
                .ok_or_else(|| bad(key, "must be name, savings, impact, risk or confidence"))?
        }
        "order" => {
            p.order = Some(match value {
                "asc" => false,
                "desc" => true,
                _ => return Err(bad(key, "must be asc or desc")),
            })
        }
        "limit" => f.limit = query::limit(key, value)?,
        "next" => p.cursor = Some(decode_cursor(key, value)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// The caller's scope, the default direction of the sort and the cursor, once every
/// parameter is read.
pub fn finish(f: &mut WorkloadFilter, p: Paging, access: &Access) -> Result<(), ApiError> {
    f.scopes = access.namespace_scope();
    let (_, _, tag, descending) = sort_entry(f.sort);
    f.descending = p.order.unwrap_or(descending);
    if let Some(c) = p.cursor {
        f.after = Some(
            position(tag, &c).ok_or_else(|| bad("next", "is not a cursor of this sort order"))?,
        );
    }
    Ok(())
}

fn sort_entry(sort: WorkloadSort) -> (&'static str, WorkloadSort, &'static str, bool) {
    *SORTS
        .iter()
        .find(|s| s.1 == sort)
        .expect("every sort is listed")
}

/// The cursor after `last` in `sort` order.
pub fn cursor_after(sort: WorkloadSort, last: &ListedWorkload) -> String {
    let keys: Vec<Value> = last
        .keys
        .iter()
        .map(|k| match k {
            SortValue::Text(s) => json!(s),
            SortValue::Real(v) => json!({ "r": v }),
            SortValue::Integer(v) => json!(v),
        })
        .collect();
    encode_cursor(&json!([sort_entry(sort).2, keys, last.row.seen.id]))
}

fn position(tag: &str, c: &Value) -> Option<Position> {
    let a = c.as_array().filter(|a| a.len() == 3)?;
    if a[0].as_str()? != tag {
        return None;
    }
    let keys = a[1]
        .as_array()?
        .iter()
        .map(|k| match k {
            Value::String(s) => Some(SortValue::Text(s.clone())),
            Value::Number(n) => n.as_i64().map(SortValue::Integer),
            Value::Object(o) => o.get("r")?.as_f64().map(SortValue::Real),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Position {
        keys,
        id: a[2].as_str()?.to_string(),
    })
}

//! The workload filter every workload view shares (the list, its totals and the
//! recommendations export): the query parameters, their validation, the sort orders and
//! their cursors, and the caller's team scope.

use serde::de::{Deserializer, Error as _};
use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::IntoParams;

use super::access::Access;
use super::error::ApiError;
use super::query::{bad, encode_cursor, params};
use crate::store::{NameMatch, Position, SortValue, WorkloadFilter, WorkloadSort};

/// The sort orders: store order, cursor tag and default direction.
const SORTS: &[(WorkloadSort, &str, bool)] = &[
    (WorkloadSort::Name, "n", false),
    (WorkloadSort::Savings, "s", true),
    (WorkloadSort::Impact, "i", true),
    (WorkloadSort::Risk, "r", true),
    (WorkloadSort::Confidence, "c", true),
];

/// The sort orders, as documented.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortParam {
    Name,
    Savings,
    Impact,
    Risk,
    Confidence,
}

impl SortParam {
    fn store(self) -> WorkloadSort {
        match self {
            SortParam::Name => WorkloadSort::Name,
            SortParam::Savings => WorkloadSort::Savings,
            SortParam::Impact => WorkloadSort::Impact,
            SortParam::Risk => WorkloadSort::Risk,
            SortParam::Confidence => WorkloadSort::Confidence,
        }
    }
}

/// The directions, as documented.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OrderParam {
    Asc,
    Desc,
}

#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DataQualityParam {
    Available,
    Partial,
    Unavailable,
}

impl DataQualityParam {
    fn as_str(self) -> &'static str {
        match self {
            DataQualityParam::Available => "available",
            DataQualityParam::Partial => "partial",
            DataQualityParam::Unavailable => "unavailable",
        }
    }
}

/// The filter's query parameters, as documented and as read.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkloadQuery {
    cluster: Option<String>,
    /// A prefix (`sho` finds `shop`), or a glob with `*` and `?` (`shop-*`).
    #[param(min_length = 1, max_length = 253)]
    #[serde(deserialize_with = "name_pattern")]
    namespace: Option<String>,
    /// A prefix, or a glob with `*` and `?`.
    #[param(min_length = 1, max_length = 253)]
    #[serde(deserialize_with = "name_pattern")]
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

/// A namespace or name filter: 1 to 253 characters.
fn name_pattern<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = String::deserialize(d)?;
    if value.is_empty() || value.len() > 253 {
        return Err(D::Error::custom("must be 1 to 253 characters"));
    }
    Ok(Some(value))
}

/// How the matching workloads are sorted (the list and the export).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadOrder {
    sort: Option<SortParam>,
    order: Option<OrderParam>,
}

/// The list's page: its size and where the page before ended.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadPaging {
    #[serde(deserialize_with = "params::limit")]
    limit: Option<usize>,
    #[serde(deserialize_with = "params::cursor")]
    next: Option<Value>,
}

/// The store's filter for `q` in `order`, after `paging`, in the caller's scope (a
/// glob when a namespace or name has `*` or `?`, else a prefix).
pub fn filter(
    q: WorkloadQuery,
    order: WorkloadOrder,
    paging: WorkloadPaging,
    access: &Access,
) -> Result<WorkloadFilter, ApiError> {
    let sort = order.sort.map_or(WorkloadSort::Name, SortParam::store);
    let (_, tag, descending) = sort_entry(sort);
    let after = match paging.next {
        Some(c) => Some(
            position(tag, &c).ok_or_else(|| bad("next", "is not a cursor of this sort order"))?,
        ),
        None => None,
    };
    let defaults = WorkloadFilter::default();
    Ok(WorkloadFilter {
        cluster: q.cluster,
        namespace: q.namespace.as_deref().map(NameMatch::typed),
        name: q.name.as_deref().map(NameMatch::typed),
        kind: q.kind,
        search: q.q,
        has_recommendation: q.has_recommendation,
        data_quality: q.data_quality.map(|d| d.as_str().to_string()),
        notice: q.notice,
        stale: q.stale,
        risky: q.risk,
        sort,
        descending: order
            .order
            .map_or(descending, |o| matches!(o, OrderParam::Desc)),
        after,
        limit: paging.limit.unwrap_or(defaults.limit),
        scopes: access.namespace_scope(),
    })
}

fn sort_entry(sort: WorkloadSort) -> (WorkloadSort, &'static str, bool) {
    *SORTS
        .iter()
        .find(|s| s.0 == sort)
        .expect("every sort is listed")
}

/// The cursor of the page after `after` in `sort` order.
pub fn cursor_after(sort: WorkloadSort, after: &Position) -> String {
    let keys: Vec<Value> = after
        .keys
        .iter()
        .map(|k| match k {
            SortValue::Text(s) => json!(s),
            SortValue::Real(v) => json!({ "r": v }),
            SortValue::Integer(v) => json!(v),
        })
        .collect();
    encode_cursor(&json!([sort_entry(sort).1, keys, after.id]))
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

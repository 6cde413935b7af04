//! `GET /v1/audit`: stored workload events, newest first, filtered, cursor-paginated.
//! The cursor is an opaque position in the log, so pages stay stable while agents keep
//! writing: new events land above the first page, never inside a walk. Callers with only
//! team roles see their teams' namespaces.

use axum::extract::State;
use axum::Json;
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::{KnownFormat, RefOr, SchemaFormat};
use utoipa::{PartialSchema, ToSchema};

use super::error::ApiError;
use super::lists::Page;
use super::query::params::LogWindow;
use super::query::{self, Query};
use super::state::AppState;
use crate::store::AuditFilter;
use crate::wire::event::{AgentEvent, EventType, Reason};

/// One stored workload event: the agent's event as it sent it, plus the cluster that
/// sent it and when the hub received it.
#[derive(Debug, Clone, Serialize)]
pub struct AuditEvent {
    #[serde(flatten)]
    pub event: AgentEvent,
    pub cluster: String,
    #[serde(rename = "receivedAt")]
    pub received_at: String,
}

/// The schema is the event's, with two more required fields (an `allOf` would not do:
/// the event's schema refuses fields it does not name).
impl PartialSchema for AuditEvent {
    fn schema() -> RefOr<Schema> {
        let RefOr::T(Schema::Object(mut o)) = AgentEvent::schema() else {
            unreachable!("an agent event is an object schema")
        };
        o.description = Some(
            "One stored workload event: the agent's event as it sent it, plus the cluster \
             that sent it and when the hub received it."
                .into(),
        );
        let text = |d: &str| {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some(d))
        };
        o.properties
            .insert("cluster".into(), text("The cluster that sent it.").into());
        o.properties.insert(
            "receivedAt".into(),
            text("When the hub stored it (RFC 3339).")
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
                .into(),
        );
        o.required.extend(["cluster".into(), "receivedAt".into()]);
        RefOr::T(Schema::Object(o))
    }
}

impl ToSchema for AuditEvent {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((AgentEvent::name().into(), AgentEvent::schema()));
        <AgentEvent as ToSchema>::schemas(schemas);
    }
}

const DEFAULT_LIMIT: usize = 100;

#[utoipa::path(
    get,
    path = "/v1/audit",
    summary = "Stored workload events, newest first.",
    description = "config_changed records never appear here. Cursor pagination is stable while events arrive. Callers with only team roles see the events of their teams' namespaces.",
    params(
        ("cluster" = Option<String>, Query),
        ("namespace" = Option<String>, Query),
        ("kind" = Option<String>, Query),
        ("name" = Option<String>, Query),
        ("type" = Option<crate::wire::event::EventType>, Query),
        ("reason" = Option<crate::wire::event::Reason>, Query),
        ("recommendationID" = Option<String>, Query),
        ("since" = Option<String>, Query, format = DateTime, description = "Event time ≥ since"),
        ("until" = Option<String>, Query, format = DateTime, description = "Event time < until"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 100."),
        ("next" = Option<String>, Query, description = "Cursor from the previous page"),
    ),
    responses(
        (status = 200, description = "A page of events: each as the agent sent it, with cluster and receivedAt.", body = Page<AuditEvent>),
    )
)]
pub async fn get_audit(
    State(state): State<AppState>,
    access: super::access::Access,
    Query(query): Query<(AuditQuery, LogWindow)>,
) -> Result<Json<Page<AuditEvent>>, ApiError> {
    let mut filter = filter(query);
    filter.scopes = access.namespace_scope();
    let page = state.store.reading(move |r| r.query_audit(&filter)).await?;
    let mut items = Vec::with_capacity(page.items.len());
    for e in page.items {
        items.push(AuditEvent {
            event: serde_json::from_str(&e.payload).map_err(ApiError::internal)?,
            cluster: e.cluster,
            received_at: crate::timestamp::format_ms(e.received_at_ms),
        });
    }
    Ok(Json(Page {
        items,
        next: page.next.map(query::encode_seq),
    }))
}

/// The audit's filters, beside its [`LogWindow`].
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditQuery {
    cluster: Option<String>,
    namespace: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    #[serde(rename = "type", deserialize_with = "event_type")]
    event_type: Option<String>,
    #[serde(deserialize_with = "reason")]
    reason: Option<String>,
    #[serde(rename = "recommendationID")]
    recommendation_id: Option<String>,
}

/// An event type of the events contract, but not `config_changed` (served elsewhere).
fn event_type<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = String::deserialize(d)?;
    if value == crate::events::wellknown::CONFIG_CHANGED {
        return Err(D::Error::custom(
            "config_changed records are served by GET /v1/audit/config",
        ));
    }
    if EventType::parse(&value).is_none() {
        return Err(D::Error::custom(
            "is not an event type of the events contract",
        ));
    }
    Ok(Some(value))
}

fn reason<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = String::deserialize(d)?;
    if Reason::parse(&value).is_none() {
        return Err(D::Error::custom("is not a reason of the events contract"));
    }
    Ok(Some(value))
}

fn filter((q, w): (AuditQuery, LogWindow)) -> AuditFilter {
    AuditFilter {
        cluster: q.cluster,
        namespace: q.namespace,
        kind: q.kind,
        name: q.name,
        event_type: q.event_type,
        reason: q.reason,
        recommendation_id: q.recommendation_id,
        since_ms: w.since_ms,
        until_ms: w.until_ms,
        before_seq: w.before_seq,
        limit: w.limit.unwrap_or(DEFAULT_LIMIT),
        ..AuditFilter::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        assert_eq!(
            query::decode_seq("next", &query::encode_seq(42)).ok(),
            Some(42)
        );
        assert!(query::decode_seq("next", "nope").is_err());
    }

    fn parse_filter(raw: &str) -> Result<AuditFilter, ApiError> {
        query::parse(Some(raw)).map(filter)
    }

    #[test]
    fn filters_are_parsed_strictly() {
        let f = parse_filter("cluster=a&type=applied&limit=5&since=2026-01-01T00:00:00Z").unwrap();
        assert_eq!((f.cluster.as_deref(), f.limit), (Some("a"), 5));
        assert_eq!(f.since_ms, Some(1_767_225_600_000));
        for bad in [
            "limit=0",
            "limit=501",
            "since=yesterday",
            "colour=red",
            "next=xyz",
        ] {
            assert!(parse_filter(bad).is_err(), "{bad}");
        }
    }
}

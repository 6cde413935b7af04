//! The notification delivery log over HTTP: `GET /v1/notifications/deliveries`
//! (filters, cursor pagination, newest first, failures included) and one delivery, for
//! the channels the caller may see.

use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::access::Access;
use super::error::ApiError;
use super::notifications::{caller, channel_of};
use super::query::params;
use super::query::{self, Query};
use super::state::AppState;
use crate::notify::views::DeliveryView;
use crate::store::notify_deliveries::DeliveryFilter;

/// A page of the delivery log.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DeliveryPage {
    pub items: Vec<DeliveryView>,
    /// Pass back as `next` for the following (older) page.
    pub next: Option<String>,
}

/// The delivery log's query.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct DeliveriesQuery {
    #[serde(deserialize_with = "channel_of")]
    channel_id: Option<i64>,
    status: Option<DeliveryStatusParam>,
    kind: Option<DeliveryKindParam>,
    #[serde(deserialize_with = "params::limit")]
    limit: Option<usize>,
    #[serde(deserialize_with = "params::log_position")]
    next: Option<i64>,
}

fn delivery_filter(q: DeliveriesQuery) -> DeliveryFilter {
    DeliveryFilter {
        channel_id: q.channel_id,
        status: q.status.map(|s| s.as_str().to_string()),
        kind: q.kind.map(|k| k.as_str().to_string()),
        limit: q.limit.unwrap_or(100),
        before_seq: q.next,
        ..DeliveryFilter::default()
    }
}

/// Delivery states and kinds, as documented.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryStatusParam {
    Pending,
    Delivered,
    Failed,
}

impl DeliveryStatusParam {
    fn as_str(self) -> &'static str {
        match self {
            DeliveryStatusParam::Pending => "pending",
            DeliveryStatusParam::Delivered => "delivered",
            DeliveryStatusParam::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryKindParam {
    Events,
    Notice,
    Digest,
    Test,
}

impl DeliveryKindParam {
    fn as_str(self) -> &'static str {
        match self {
            DeliveryKindParam::Events => "events",
            DeliveryKindParam::Notice => "notice",
            DeliveryKindParam::Digest => "digest",
            DeliveryKindParam::Test => "test",
        }
    }
}

/// `GET /v1/notifications/deliveries`: newest first; filters `channelId`, `status`,
/// `kind`; `limit` 1–500; `next` continues.
#[utoipa::path(
    get,
    path = "/v1/notifications/deliveries",
    summary = "The delivery log, newest first, failures included.",
    description = "Filters channelId, status (pending|delivered|failed), kind (events|notice|digest|test); limit 1-500 (100); next continues. Items {id (the X-Kerf-Delivery id), channelId, channelName, channelType, kind, title, status, attempts, eventIds, lastStatus, lastError, createdAt, updatedAt, deliveredAt, nextAttemptAt}.",
    params(
        ("channelId" = Option<i64>, Query),
        ("status" = inline(Option<DeliveryStatusParam>), Query),
        ("kind" = inline(Option<DeliveryKindParam>), Query),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 100."),
        ("next" = Option<String>, Query, description = "Cursor from the previous page"),
    ),
    responses(
        (status = 200, description = "{items, next}", body = DeliveryPage),
    )
)]
pub async fn list_deliveries(
    State(s): State<AppState>,
    access: Access,
    Query(q): Query<DeliveriesQuery>,
) -> Result<Json<DeliveryPage>, ApiError> {
    let filter = delivery_filter(q);
    let page = s
        .notify
        .deliveries(&caller(&s, &access, None)?, filter)
        .await?;
    Ok(Json(DeliveryPage {
        items: page.items,
        next: page.next.map(query::encode_seq),
    }))
}

#[utoipa::path(
    get,
    path = "/v1/notifications/deliveries/{id}",
    summary = "One delivery.",
    params(
        ("id" = String, Path),
    ),
    responses(
        (status = 200, description = "The delivery.", body = DeliveryView),
    )
)]
pub async fn get_delivery(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
) -> Result<Json<DeliveryView>, ApiError> {
    Ok(Json(
        s.notify.delivery(&caller(&s, &access, None)?, raw).await?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery_filter(q: Option<&str>) -> Result<DeliveryFilter, ApiError> {
        query::parse(q).map(super::delivery_filter)
    }

    #[test]
    fn delivery_filters_are_strict() {
        let f =
            delivery_filter(Some("channelId=3&status=failed&kind=digest&limit=5")).expect("valid");
        assert_eq!(
            (
                f.channel_id,
                f.status.as_deref(),
                f.kind.as_deref(),
                f.limit
            ),
            (Some(3), Some("failed"), Some("digest"), 5)
        );
        for bad in [
            "status=lost",
            "kind=spam",
            "limit=0",
            "channelId=x",
            "next=zz",
            "who=me",
        ] {
            assert!(delivery_filter(Some(bad)).is_err(), "{bad}");
        }
    }
}

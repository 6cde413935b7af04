//! `/v1/notifications/…`: channels (with a test send), rules, the delivery log and the
//! weekly digest schedules. Handlers parse, call `notify::ops` / `notify::rule_ops` with
//! the caller's team scopes and serialize; secrets are write-only (docs/contracts/
//! notifications.md). Fleet roles reach every channel (editors change them); team
//! members see their teams' channels and team editors change them.

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use serde_json::json;

use super::access::Access;
use super::body::{read_json, read_json_nullable};
use super::config_audit::{context, reason_query};
use super::error::ApiError;
use super::query;
use super::routes::parse_id;
use super::AppState;
use crate::auth::{FleetRole, TeamRole};
use crate::notify::channel::ChannelInput;
use crate::notify::digest::schedule::DigestInput;
use crate::notify::ops::{self, DigestPreview, TestResult};
use crate::notify::rule::RuleInput;
use crate::notify::views::{ChannelView, DeliveryView, DigestView, RuleView, TeamRef};
use crate::notify::{rule_ops, NotifyError};
use crate::store::notify_channels::TeamScope;
use crate::store::notify_deliveries::DeliveryFilter;

/// A list answer.
#[derive(Debug, Serialize)]
pub struct Items<T> {
    pub items: Vec<T>,
}

/// A page of the delivery log.
#[derive(Debug, Serialize)]
pub struct DeliveryPage {
    pub items: Vec<DeliveryView>,
    /// Pass back as `next` for the following (older) page.
    pub next: Option<String>,
}

/// One channel's digest schedule in `GET /v1/notifications/digest`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DigestEntry {
    pub channel_id: i64,
    pub channel_name: String,
    pub team: Option<TeamRef>,
    #[serde(flatten)]
    pub digest: DigestView,
}

/// `GET /v1/notifications/digest`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DigestList {
    /// The hub's zone: the default of new schedules.
    pub default_time_zone: String,
    pub items: Vec<DigestEntry>,
}

impl From<NotifyError> for ApiError {
    fn from(e: NotifyError) -> Self {
        match e {
            NotifyError::Invalid(errors) => {
                let field = errors.first().map(|e| e.field.clone()).unwrap_or_default();
                ApiError::bad_request(
                    "invalid_field",
                    NotifyError::Invalid(errors.clone()).to_string(),
                )
                .with_details(json!({ "field": field, "errors": errors }))
            }
            NotifyError::NotFound(what) => ApiError::not_found(format!("{what} does not exist")),
            NotifyError::Forbidden(why) => ApiError::forbidden(why),
            NotifyError::Store(e) => e.into(),
            NotifyError::Secret(e) => ApiError::internal(e),
        }
    }
}

/// (read, write) team scopes of the caller: `None` = every channel (fleet roles).
fn scopes(access: &Access) -> (TeamScope, TeamScope) {
    let Some(c) = access.caller() else {
        return (Some(Vec::new()), Some(Vec::new()));
    };
    let read = (!c.has_fleet(FleetRole::Viewer)).then(|| {
        c.grants_at_least(TeamRole::Viewer)
            .map(|g| g.team_id)
            .collect()
    });
    let write = (!c.has_fleet(FleetRole::Editor)).then(|| {
        c.grants_at_least(TeamRole::Editor)
            .map(|g| g.team_id)
            .collect()
    });
    (read, write)
}

fn id(kind: &str, raw: &str) -> Result<i64, ApiError> {
    parse_id(kind, raw)
}

pub async fn list_channels(
    State(s): State<AppState>,
    access: Access,
) -> Result<Json<Items<ChannelView>>, ApiError> {
    let items = ops::list(&s.store, scopes(&access).0).await?;
    Ok(Json(Items { items }))
}

pub async fn get_channel(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
) -> Result<Json<ChannelView>, ApiError> {
    Ok(Json(
        ops::get(
            &s.store,
            id("notification channel", &raw)?,
            scopes(&access).0,
        )
        .await?,
    ))
}

pub async fn create_channel(
    State(s): State<AppState>,
    access: Access,
    body: Body,
) -> Result<(StatusCode, Json<ChannelView>), ApiError> {
    let input: ChannelInput = read_json_nullable(body, &["teamId"]).await?;
    let ctx = context(&access, input.reason.clone())?;
    let view = ops::create(&s.store, &s.notify, ctx, &scopes(&access).1, input, s.now()).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

pub async fn replace_channel(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
    body: Body,
) -> Result<Json<ChannelView>, ApiError> {
    let channel = id("notification channel", &raw)?;
    let input: ChannelInput = read_json_nullable(body, &["teamId"]).await?;
    let ctx = context(&access, input.reason.clone())?;
    Ok(Json(
        ops::replace(
            &s.store,
            &s.notify,
            ctx,
            scopes(&access).1,
            channel,
            input,
            s.now(),
        )
        .await?,
    ))
}

pub async fn delete_channel(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<StatusCode, ApiError> {
    let channel = id("notification channel", &raw)?;
    let ctx = context(&access, reason_query(q.as_deref())?)?;
    ops::delete(
        &s.store,
        &s.notify,
        ctx,
        scopes(&access).1,
        channel,
        s.now(),
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST .../channels/{id}/test`: sends now; 200 either way, `delivered` says how it went.
pub async fn test_channel(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
) -> Result<Json<TestResult>, ApiError> {
    let channel = id("notification channel", &raw)?;
    Ok(Json(
        ops::test(&s.store, &s.notify, scopes(&access).1, channel, s.now()).await?,
    ))
}

pub async fn get_digest(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
) -> Result<Json<DigestPreview>, ApiError> {
    let channel = id("notification channel", &raw)?;
    Ok(Json(
        ops::digest_preview(&s.store, &s.runs, scopes(&access).0, channel, s.now()).await?,
    ))
}

pub async fn put_digest(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
    body: Body,
) -> Result<Json<ChannelView>, ApiError> {
    let channel = id("notification channel", &raw)?;
    let input: DigestInput = read_json(body).await?;
    let ctx = context(&access, input.reason.clone())?;
    Ok(Json(
        ops::set_digest(
            &s.store,
            &s.notify,
            ctx,
            scopes(&access).1,
            channel,
            input,
            s.now(),
        )
        .await?,
    ))
}

pub async fn list_digests(
    State(s): State<AppState>,
    access: Access,
) -> Result<Json<DigestList>, ApiError> {
    let items = ops::digests(&s.store, scopes(&access).0)
        .await?
        .into_iter()
        .map(|(c, d)| DigestEntry {
            channel_id: c.id,
            channel_name: c.name,
            team: c.team,
            digest: d,
        })
        .collect();
    Ok(Json(DigestList {
        default_time_zone: s.notify.settings.time_zone.clone(),
        items,
    }))
}

pub async fn list_rules(
    State(s): State<AppState>,
    access: Access,
    RawQuery(q): RawQuery,
) -> Result<Json<Items<RuleView>>, ApiError> {
    let mut channel = None;
    for (key, value) in query::pairs(q.as_deref())? {
        match key.as_str() {
            "channelId" => {
                channel = Some(
                    value
                        .parse()
                        .map_err(|_| query::bad(&key, "must be a channel id"))?,
                )
            }
            _ => return Err(query::bad(&key, "unknown parameter")),
        }
    }
    let items = rule_ops::list(&s.store, scopes(&access).0, channel).await?;
    Ok(Json(Items { items }))
}

pub async fn get_rule(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
) -> Result<Json<RuleView>, ApiError> {
    Ok(Json(
        rule_ops::get(&s.store, scopes(&access).0, id("notification rule", &raw)?).await?,
    ))
}

pub async fn create_rule(
    State(s): State<AppState>,
    access: Access,
    body: Body,
) -> Result<(StatusCode, Json<RuleView>), ApiError> {
    let input: RuleInput = read_json_nullable(body, &["teamId"]).await?;
    let ctx = context(&access, input.reason.clone())?;
    let view =
        rule_ops::create(&s.store, &s.notify, ctx, scopes(&access).1, input, s.now()).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

pub async fn replace_rule(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
    body: Body,
) -> Result<Json<RuleView>, ApiError> {
    let rule = id("notification rule", &raw)?;
    let input: RuleInput = read_json_nullable(body, &["teamId"]).await?;
    let ctx = context(&access, input.reason.clone())?;
    Ok(Json(
        rule_ops::replace(
            &s.store,
            &s.notify,
            ctx,
            scopes(&access).1,
            rule,
            input,
            s.now(),
        )
        .await?,
    ))
}

pub async fn delete_rule(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<StatusCode, ApiError> {
    let rule = id("notification rule", &raw)?;
    let ctx = context(&access, reason_query(q.as_deref())?)?;
    rule_ops::delete(&s.store, &s.notify, ctx, scopes(&access).1, rule, s.now()).await?;
    Ok(StatusCode::NO_CONTENT)
}

fn delivery_filter(q: Option<&str>, scope: TeamScope) -> Result<DeliveryFilter, ApiError> {
    let mut f = DeliveryFilter {
        scope,
        limit: 100,
        ..DeliveryFilter::default()
    };
    for (key, value) in query::pairs(q)? {
        match key.as_str() {
            "channelId" => {
                f.channel_id = Some(
                    value
                        .parse()
                        .map_err(|_| query::bad(&key, "must be a channel id"))?,
                )
            }
            "status" if ["pending", "delivered", "failed"].contains(&value.as_str()) => {
                f.status = Some(value)
            }
            "status" => return Err(query::bad(&key, "must be pending, delivered or failed")),
            "kind" if ["events", "notice", "digest", "test"].contains(&value.as_str()) => {
                f.kind = Some(value)
            }
            "kind" => return Err(query::bad(&key, "must be events, notice, digest or test")),
            "limit" => f.limit = query::limit(&key, &value)?,
            "next" => f.before_seq = Some(query::decode_seq(&key, &value)?),
            _ => return Err(query::bad(&key, "unknown parameter")),
        }
    }
    Ok(f)
}

/// `GET /v1/notifications/deliveries`: newest first; filters `channelId`, `status`,
/// `kind`; `limit` 1–500; `next` continues.
pub async fn list_deliveries(
    State(s): State<AppState>,
    access: Access,
    RawQuery(q): RawQuery,
) -> Result<Json<DeliveryPage>, ApiError> {
    let filter = delivery_filter(q.as_deref(), scopes(&access).0)?;
    let (items, next) = rule_ops::deliveries(&s.store, filter).await?;
    Ok(Json(DeliveryPage {
        items,
        next: next.map(query::encode_seq),
    }))
}

pub async fn get_delivery(
    State(s): State<AppState>,
    access: Access,
    Path(raw): Path<String>,
) -> Result<Json<DeliveryView>, ApiError> {
    Ok(Json(
        rule_ops::delivery(&s.store, scopes(&access).0, raw).await?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivery_filters_are_strict() {
        let f = delivery_filter(Some("channelId=3&status=failed&kind=digest&limit=5"), None)
            .expect("valid");
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
            assert!(delivery_filter(Some(bad), None).is_err(), "{bad}");
        }
    }
}

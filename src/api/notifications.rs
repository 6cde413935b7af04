//! `/v1/notifications/…`: channels (with a test send), rules, the delivery log and the
//! weekly digest schedules. Handlers parse, call `notify::ops` / `notify::rule_ops` with
//! the caller's team scopes and serialize; secrets are write-only (docs/contracts/
//! notifications.md). Fleet roles reach every channel (editors change them); team
//! members see their teams' channels and team editors change them.

use axum::body::Body;
use axum::extract::State;
use axum::http::header::RETRY_AFTER;
use axum::http::StatusCode;
use axum::Json;
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::access::Access;
use super::body::{read_json, read_json_nullable};
use super::config_audit::context;
use super::error::ApiError;
use super::ids::{self, Id};
use super::lists::Items;
use super::query::params::ReasonQuery;
use super::query::Query;
use super::state::AppState;
use crate::auth::{FleetRole, TeamRole};
use crate::notify::channel::ChannelInput;
use crate::notify::digest::schedule::DigestInput;
use crate::notify::ops::{DigestPreview, TestResult};
use crate::notify::rule::RuleInput;
use crate::notify::views::{ChannelView, DigestView, RuleView, TeamRef};
use crate::notify::{Caller, NotifyError};

/// One channel's digest schedule in `GET /v1/notifications/digest`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DigestEntry {
    pub channel_id: i64,
    pub channel_name: String,
    pub team: Option<TeamRef>,
    #[serde(flatten)]
    pub digest: DigestView,
}

/// `GET /v1/notifications/digest`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
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
            NotifyError::TooManyTests(seconds) => ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_tests",
                format!("too many channel tests; try again in {seconds} seconds"),
            )
            .with_details(json!({ "retryAfterSeconds": seconds }))
            .with_header(RETRY_AFTER, seconds.to_string()),
        }
    }
}

/// The caller as the notification operations take it: audit context (with `reason`),
/// team scopes — `None` = every channel (fleet roles) — and now.
pub(super) fn caller(
    s: &AppState,
    access: &Access,
    reason: Option<String>,
) -> Result<Caller, ApiError> {
    let ctx = context(access, reason)?;
    let (read, write) = match access.caller() {
        None => (Some(Vec::new()), Some(Vec::new())),
        Some(c) => (
            (!c.has_fleet(FleetRole::Viewer)).then(|| {
                c.grants_at_least(TeamRole::Viewer)
                    .map(|g| g.team_id)
                    .collect()
            }),
            (!c.has_fleet(FleetRole::Editor)).then(|| {
                c.grants_at_least(TeamRole::Editor)
                    .map(|g| g.team_id)
                    .collect()
            }),
        ),
    };
    Ok(Caller {
        ctx,
        read,
        write,
        now: s.now(),
    })
}

#[utoipa::path(
    get,
    path = "/v1/notifications/channels",
    summary = "Notification channels the caller may see (fleet roles all, team members their teams'), secrets masked.",
    description = "Each channel {id, name, type slack|teams|webhook|email, team {id, name}|null, enabled, target (where it delivers, secrets masked), urlSet, signingSecretSet, email {host, port, security, username, passwordSet, from, to, caPemSet}|null, digest {enabled, schedule, timeZone, nextAt}, createdAt, updatedAt}. docs/contracts/notifications.md.",
    responses(
        (status = 200, description = "{items: [channel]}", body = Items<ChannelView>),
    )
)]
pub async fn list_channels(
    State(s): State<AppState>,
    access: Access,
) -> Result<Json<Items<ChannelView>>, ApiError> {
    let items = s.notify.channels(&caller(&s, &access, None)?).await?;
    Ok(Json(Items { items }))
}

#[utoipa::path(
    get,
    path = "/v1/notifications/channels/{id}",
    summary = "One channel, secrets masked.",
    params(
        ("id" = i64, Path),
    ),
    responses(
        (status = 200, description = "The channel.", body = ChannelView),
    )
)]
pub async fn get_channel(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Channel>,
) -> Result<Json<ChannelView>, ApiError> {
    Ok(Json(
        s.notify.channel(&caller(&s, &access, None)?, id).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/v1/notifications/channels",
    summary = "Create a channel (NotificationChannelCreated, and NotificationRuleCreated for its default rule).",
    description = "Body {name, type, teamId?, enabled (true), url (slack, teams, webhook), signingSecret (webhook, 16-256 characters), email {host, port?, security starttls|tls|none, username?, password?, from, to [..], caPem?} (email), defaultRules (true: rollbacks, failures, readiness, pauses, failed runs), reason?}. url, signingSecret and email.password are write-only: sealed at rest, never answered, logged or audited. Team editors create channels of their teams only (teamId required). Errors name the field in error.details.field and list all under error.details.errors.",
    request_body = ChannelInput,
    responses(
        (status = 201, description = "The channel.", body = ChannelView),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn create_channel(
    State(s): State<AppState>,
    access: Access,
    body: Body,
) -> Result<(StatusCode, Json<ChannelView>), ApiError> {
    let input: ChannelInput = read_json_nullable(body, &["teamId"]).await?;
    let c = caller(&s, &access, input.reason.clone())?;
    Ok((
        StatusCode::CREATED,
        Json(s.notify.create_channel(c, input).await?),
    ))
}

#[utoipa::path(
    put,
    path = "/v1/notifications/channels/{id}",
    summary = "Replace a channel (NotificationChannelUpdated). Omitted secrets keep their stored values while the type stays the same.",
    params(
        ("id" = i64, Path),
    ),
    request_body = ChannelInput,
    responses(
        (status = 200, description = "The channel.", body = ChannelView),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn replace_channel(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Channel>,
    body: Body,
) -> Result<Json<ChannelView>, ApiError> {
    let input: ChannelInput = read_json_nullable(body, &["teamId"]).await?;
    let c = caller(&s, &access, input.reason.clone())?;
    Ok(Json(s.notify.replace_channel(c, id, input).await?))
}

#[utoipa::path(
    delete,
    path = "/v1/notifications/channels/{id}",
    summary = "Delete a channel with its rules and delivery log (NotificationChannelDeleted; ?reason=).",
    params(
        ("id" = i64, Path),
        ("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)"),
    ),
    responses(
        (status = 204, description = "Deleted."),
    )
)]
pub async fn delete_channel(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Channel>,
    Query(q): Query<ReasonQuery>,
) -> Result<StatusCode, ApiError> {
    let c = caller(&s, &access, q.reason)?;
    s.notify.delete_channel(c, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST .../channels/{id}/test`: sends now; 200 either way, `delivered` says how it went.
#[utoipa::path(
    post,
    path = "/v1/notifications/channels/{id}/test",
    summary = "Send a test message now and record it in the delivery log.",
    description = "Answers 200 {deliveryId, delivered, status (HTTP status or SMTP code), answer (kerf's short verdict: delivered, refused by the receiver, no answer from the receiver, or the outbound policy's refusal; never the receiver's own text), error (always null), durationMs} whether or not the receiver accepted it. 429 too_many_tests with Retry-After past 6 tests a minute per caller.",
    params(
        ("id" = i64, Path),
    ),
    responses(
        (status = 200, description = "The test result.", body = TestResult),
        (status = 429, description = "Too many tests by this caller.", body = super::error::ErrorBody),
    )
)]
pub async fn test_channel(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Channel>,
) -> Result<Json<TestResult>, ApiError> {
    Ok(Json(
        s.notify
            .test_channel(&caller(&s, &access, None)?, id)
            .await?,
    ))
}

#[utoipa::path(
    get,
    path = "/v1/notifications/channels/{id}/digest",
    summary = "The channel's weekly digest schedule and a preview of its digest for the week up to now.",
    description = "{channelId, channelName, digest {enabled, schedule, timeZone, nextAt}, preview (the DigestReport of docs/contracts/notifications.md)}",
    params(
        ("id" = i64, Path),
    ),
    responses(
        (status = 200, description = "Schedule and preview.", body = DigestPreview),
    )
)]
pub async fn get_digest(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Channel>,
) -> Result<Json<DigestPreview>, ApiError> {
    Ok(Json(
        s.notify
            .digest_preview(&caller(&s, &access, None)?, id)
            .await?,
    ))
}

#[utoipa::path(
    put,
    path = "/v1/notifications/channels/{id}/digest",
    summary = "Set the digest schedule (NotificationDigestUpdated, target id digest). Body {enabled, schedule? (cron, default \"0 9 * * 1\"), timeZone? (IANA, default the hub's), reason?}.",
    params(
        ("id" = i64, Path),
    ),
    request_body = DigestInput,
    responses(
        (status = 200, description = "The channel.", body = ChannelView),
    )
)]
pub async fn put_digest(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Channel>,
    body: Body,
) -> Result<Json<ChannelView>, ApiError> {
    let input: DigestInput = read_json(body).await?;
    let c = caller(&s, &access, input.reason.clone())?;
    Ok(Json(s.notify.set_digest(c, id, input).await?))
}

#[utoipa::path(
    get,
    path = "/v1/notifications/digest",
    summary = "Every visible channel's digest schedule with its next slot, and the hub's default zone.",
    description = "{defaultTimeZone, items: [{channelId, channelName, team, enabled, schedule, timeZone, nextAt}]}",
    responses(
        (status = 200, description = "The schedules.", body = DigestList),
    )
)]
pub async fn list_digests(
    State(s): State<AppState>,
    access: Access,
) -> Result<Json<DigestList>, ApiError> {
    let items = s
        .notify
        .channels(&caller(&s, &access, None)?)
        .await?
        .into_iter()
        .map(|c| DigestEntry {
            channel_id: c.id,
            channel_name: c.name,
            team: c.team,
            digest: c.digest,
        })
        .collect();
    Ok(Json(DigestList {
        default_time_zone: s.notify.settings.time_zone.clone(),
        items,
    }))
}

/// `GET /v1/notifications/rules`' query.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct RulesQuery {
    #[serde(deserialize_with = "channel_of")]
    channel_id: Option<i64>,
}

pub(super) fn channel_of<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    String::deserialize(d)?
        .parse()
        .map(Some)
        .map_err(|_| D::Error::custom("must be a channel id"))
}

#[utoipa::path(
    get,
    path = "/v1/notifications/rules",
    summary = "Rules of the visible channels (?channelId= narrows to one).",
    description = "{items: [{id, channelId, channelName, name, enabled, events, reasons, clusters, namespaces, team, createdAt, updatedAt}]}",
    responses(
        (status = 200, description = "The rules.", body = Items<RuleView>),
    )
)]
pub async fn list_rules(
    State(s): State<AppState>,
    access: Access,
    Query(q): Query<RulesQuery>,
) -> Result<Json<Items<RuleView>>, ApiError> {
    let channel = q.channel_id;
    let items = s.notify.rules(&caller(&s, &access, None)?, channel).await?;
    Ok(Json(Items { items }))
}

#[utoipa::path(
    get,
    path = "/v1/notifications/rules/{id}",
    summary = "One rule.",
    params(
        ("id" = i64, Path),
    ),
    responses(
        (status = 200, description = "The rule.", body = RuleView),
    )
)]
pub async fn get_rule(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Rule>,
) -> Result<Json<RuleView>, ApiError> {
    Ok(Json(s.notify.rule(&caller(&s, &access, None)?, id).await?))
}

#[utoipa::path(
    post,
    path = "/v1/notifications/rules",
    summary = "Create a rule (NotificationRuleCreated).",
    description = "Body {channelId, name, enabled (true), events [event types and notices: applied, skipped, blocked, fallback, rolled_back, released, failed, readiness_degraded, readiness_recovered, automation_paused, automation_resumed, run_failed], reasons [], clusters [globs], namespaces [globs], teamId?, reason?}. Empty lists select everything.",
    request_body = RuleInput,
    responses(
        (status = 201, description = "The rule.", body = RuleView),
    )
)]
pub async fn create_rule(
    State(s): State<AppState>,
    access: Access,
    body: Body,
) -> Result<(StatusCode, Json<RuleView>), ApiError> {
    let input: RuleInput = read_json_nullable(body, &["teamId"]).await?;
    let c = caller(&s, &access, input.reason.clone())?;
    Ok((
        StatusCode::CREATED,
        Json(s.notify.create_rule(c, input).await?),
    ))
}

#[utoipa::path(
    put,
    path = "/v1/notifications/rules/{id}",
    summary = "Replace a rule (NotificationRuleUpdated).",
    params(
        ("id" = i64, Path),
    ),
    request_body = RuleInput,
    responses(
        (status = 200, description = "The rule.", body = RuleView),
    )
)]
pub async fn replace_rule(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Rule>,
    body: Body,
) -> Result<Json<RuleView>, ApiError> {
    let input: RuleInput = read_json_nullable(body, &["teamId"]).await?;
    let c = caller(&s, &access, input.reason.clone())?;
    Ok(Json(s.notify.replace_rule(c, id, input).await?))
}

#[utoipa::path(
    delete,
    path = "/v1/notifications/rules/{id}",
    summary = "Delete a rule (NotificationRuleDeleted; ?reason=).",
    params(
        ("id" = i64, Path),
        ("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)"),
    ),
    responses(
        (status = 204, description = "Deleted."),
    )
)]
pub async fn delete_rule(
    State(s): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Rule>,
    Query(q): Query<ReasonQuery>,
) -> Result<StatusCode, ApiError> {
    let c = caller(&s, &access, q.reason)?;
    s.notify.delete_rule(c, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

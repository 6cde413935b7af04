//! How channels, rules, deliveries and digest schedules are shown: the API's response
//! types and the audit's before/after. Secrets appear only as `…Set` flags and the
//! masked target.

use serde::Serialize;
use serde_json::Value;

use super::channel::{ChannelKind, EmailSettings, SmtpSecurity};
use super::digest::schedule;
use super::rule::Selector;
use crate::store::notify_channels::ChannelRecord;
use crate::store::notify_deliveries::DeliveryRecord;
use crate::store::notify_rules::RuleRecord;
use crate::timestamp::format_ms;

/// A team a channel or rule belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct TeamRef {
    pub id: i64,
    pub name: String,
}

fn team(id: Option<i64>, name: &Option<String>) -> Option<TeamRef> {
    id.map(|id| TeamRef {
        id,
        name: name.clone().unwrap_or_default(),
    })
}

/// Email settings as shown (no password).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmailView {
    pub host: String,
    pub port: u16,
    pub security: SmtpSecurity,
    pub username: Option<String>,
    pub password_set: bool,
    pub from: String,
    pub to: Vec<String>,
    pub ca_pem_set: bool,
}

/// A channel's digest schedule as shown.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DigestView {
    pub enabled: bool,
    pub schedule: String,
    pub time_zone: String,
    /// The next digest, when enabled.
    pub next_at: Option<String>,
}

/// `GET /v1/notifications/channels/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelView {
    pub id: i64,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub team: Option<TeamRef>,
    pub enabled: bool,
    /// Where it delivers, secrets masked.
    pub target: String,
    pub url_set: bool,
    pub signing_secret_set: bool,
    pub email: Option<EmailView>,
    pub digest: DigestView,
    pub created_at: String,
    pub updated_at: String,
}

/// The channel's view; `secrets` says which write-only values are set (url, signing
/// secret, SMTP password).
pub fn channel(rec: &ChannelRecord) -> ChannelView {
    let kind = ChannelKind::parse(&rec.kind);
    let email: Option<EmailSettings> = (kind == Some(ChannelKind::Email))
        .then(|| serde_json::from_str(&rec.settings_json).ok())
        .flatten();
    let secrets_set = !rec.secrets_sealed.is_empty();
    ChannelView {
        id: rec.id,
        name: rec.name.clone(),
        kind: rec.kind.clone(),
        team: team(rec.team_id, &rec.team_name),
        enabled: rec.enabled,
        target: rec.target_masked.clone(),
        // A stored channel passed validation: its kind's secrets are set.
        url_set: secrets_set && kind.is_some_and(|k| k != ChannelKind::Email),
        signing_secret_set: secrets_set && kind == Some(ChannelKind::Webhook),
        email: email.map(|e| EmailView {
            password_set: secrets_set && e.username.is_some(),
            host: e.host,
            port: e.port,
            security: e.security,
            username: e.username,
            from: e.from,
            to: e.to,
            ca_pem_set: e.ca_pem.is_some(),
        }),
        digest: DigestView {
            enabled: rec.digest.enabled,
            schedule: rec.digest.schedule.clone(),
            time_zone: rec.digest.time_zone.clone(),
            next_at: rec
                .digest
                .enabled
                .then(|| {
                    schedule::next_slot(
                        &rec.digest.schedule,
                        &rec.digest.time_zone,
                        rec.digest_last_slot.unwrap_or(rec.created_at),
                    )
                })
                .flatten()
                .map(format_ms),
        },
        created_at: format_ms(rec.created_at),
        updated_at: format_ms(rec.updated_at),
    }
}

/// The channel's view as JSON (the audit's before/after).
pub fn channel_json(rec: &ChannelRecord) -> Value {
    serde_json::to_value(channel(rec)).unwrap_or(Value::Null)
}

/// `GET /v1/notifications/rules/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleView {
    pub id: i64,
    pub channel_id: i64,
    pub channel_name: String,
    pub name: String,
    pub enabled: bool,
    #[serde(flatten)]
    pub selector: Selector,
    pub team: Option<TeamRef>,
    pub created_at: String,
    pub updated_at: String,
}

pub fn rule(rec: &RuleRecord) -> RuleView {
    RuleView {
        id: rec.id,
        channel_id: rec.channel_id,
        channel_name: rec.channel_name.clone(),
        name: rec.name.clone(),
        enabled: rec.enabled,
        selector: serde_json::from_str(&rec.match_json).unwrap_or_default(),
        team: team(rec.team_id, &rec.team_name),
        created_at: format_ms(rec.created_at),
        updated_at: format_ms(rec.updated_at),
    }
}

pub fn rule_json(rec: &RuleRecord) -> Value {
    serde_json::to_value(rule(rec)).unwrap_or(Value::Null)
}

/// One entry of the delivery log.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryView {
    pub id: String,
    pub channel_id: i64,
    pub channel_name: String,
    pub channel_type: String,
    pub kind: String,
    pub title: String,
    pub status: String,
    pub attempts: i64,
    /// Events carried (their ids), for events and notices.
    pub event_ids: Vec<String>,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub delivered_at: Option<String>,
    /// When a pending delivery is tried next.
    pub next_attempt_at: Option<String>,
}

pub fn delivery(d: &DeliveryRecord) -> DeliveryView {
    DeliveryView {
        id: d.id.clone(),
        channel_id: d.channel_id,
        channel_name: d.channel_name.clone(),
        channel_type: d.channel_kind.clone(),
        kind: d.kind.clone(),
        title: d.title.clone(),
        status: d.status.clone(),
        attempts: d.attempts,
        event_ids: d.event_ids.clone(),
        last_status: d.last_status,
        last_error: d.last_error.clone(),
        created_at: format_ms(d.created_at),
        updated_at: format_ms(d.updated_at),
        delivered_at: d.delivered_at.map(format_ms),
        next_attempt_at: (d.status == "pending").then(|| format_ms(d.next_attempt_at)),
    }
}

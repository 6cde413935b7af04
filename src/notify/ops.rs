//! Channel operations the API calls: list, read, create (with the default rule), replace,
//! delete, test, and the digest schedule and preview. Each takes the caller's audit
//! context and team scopes (`read`: whose channels it sees, `write`: whose it changes);
//! handlers only parse and serialize.

use serde::Serialize;

use super::channel::{self, ChannelInput, ChannelKind, ChannelSecrets, EmailSettings};
use super::digest::{self, report::DigestReport, schedule};
use super::message::{test_message, MessageKind};
use super::rule::{default_rule, Selector};
use super::transport::Target;
use super::views::{self, ChannelView, DigestView};
use super::{Notifier, NotifyError};
use crate::events::config_change::AuditContext;
use crate::runs::Runs;
use crate::store::notify_channels::{ChannelRecord, ChannelWrite, DigestSchedule, TeamScope};
use crate::store::notify_deliveries::{Attempt, NewDelivery};
use crate::store::notify_rules::RuleWrite;
use crate::store::{Store, StoreError};
use crate::timestamp::format_ms;

/// What `POST .../channels/{id}/test` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestResult {
    pub delivery_id: String,
    pub delivered: bool,
    /// The receiver's HTTP status or SMTP reply code.
    pub status: Option<i64>,
    /// What the receiver answered (clipped, secrets scrubbed).
    pub answer: Option<String>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// `GET /v1/notifications/channels/{id}/digest`: the schedule and what a digest for the
/// week up to now would say.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DigestPreview {
    pub channel_id: i64,
    pub channel_name: String,
    pub digest: DigestView,
    pub preview: DigestReport,
}

fn task(e: impl std::fmt::Display) -> NotifyError {
    NotifyError::Store(StoreError::Task(e.to_string()))
}

/// Checks that a change may name team `team` for a caller limited to `write`.
pub async fn check_team(
    store: &Store,
    write: &TeamScope,
    team: Option<i64>,
    field: &str,
) -> Result<(), NotifyError> {
    match (write, team) {
        (None, None) => Ok(()),
        (None, Some(t)) => {
            if store.team_exists(t).await? {
                Ok(())
            } else {
                Err(NotifyError::field(
                    field,
                    format!("team {t} does not exist"),
                ))
            }
        }
        (Some(_), None) => Err(NotifyError::Forbidden(format!(
            "only fleet editors manage fleet-wide notifications; set {field} to one of your teams"
        ))),
        (Some(teams), Some(t)) if teams.contains(&t) => Ok(()),
        (Some(_), Some(t)) => Err(NotifyError::Forbidden(format!(
            "{field} {t} is not a team you edit"
        ))),
    }
}

/// Every channel `read` reaches.
pub async fn list(store: &Store, read: TeamScope) -> Result<Vec<ChannelView>, NotifyError> {
    Ok(store
        .channels(read)
        .await?
        .iter()
        .map(views::channel)
        .collect())
}

async fn fetch(store: &Store, id: i64, scope: TeamScope) -> Result<ChannelRecord, NotifyError> {
    store
        .channel(id, scope)
        .await?
        .ok_or_else(|| NotifyError::NotFound(format!("notification channel {id}")))
}

pub async fn get(store: &Store, id: i64, read: TeamScope) -> Result<ChannelView, NotifyError> {
    Ok(views::channel(&fetch(store, id, read).await?))
}

fn opened(
    rec: &ChannelRecord,
    notifier: &Notifier,
) -> Result<(ChannelKind, ChannelSecrets, Option<EmailSettings>), NotifyError> {
    let kind = ChannelKind::parse(&rec.kind)
        .ok_or_else(|| task(format!("unknown channel type {:?}", rec.kind)))?;
    let secrets: ChannelSecrets = notifier.key()?.open_value(&rec.secrets_sealed)?;
    let email = (kind == ChannelKind::Email)
        .then(|| serde_json::from_str(&rec.settings_json))
        .transpose()
        .map_err(task)?;
    Ok((kind, secrets, email))
}

fn write_of(v: &channel::ValidChannel, notifier: &Notifier) -> Result<ChannelWrite, NotifyError> {
    Ok(ChannelWrite {
        name: v.name.clone(),
        kind: v.kind.as_str().into(),
        team_id: v.team_id,
        enabled: v.enabled,
        settings_json: match &v.email {
            Some(e) => serde_json::to_string(e).map_err(task)?,
            None => "{}".into(),
        },
        target_masked: v.target_masked(),
        secrets_sealed: notifier.key()?.seal_value(&v.secrets)?,
    })
}

/// Creates a channel (and, unless `defaultRules: false`, the default rule).
pub async fn create(
    store: &Store,
    notifier: &Notifier,
    ctx: AuditContext,
    write: &TeamScope,
    input: ChannelInput,
    now: i64,
) -> Result<ChannelView, NotifyError> {
    let with_rule = input.default_rules != Some(false);
    let valid = channel::validate(input, None).map_err(NotifyError::Invalid)?;
    check_team(store, write, valid.team_id, "teamId").await?;
    let digest = DigestSchedule {
        enabled: true,
        schedule: schedule::DEFAULT_SCHEDULE.into(),
        time_zone: notifier.settings.time_zone.clone(),
    };
    let rule = with_rule.then(|| {
        let r = default_rule(0);
        RuleWrite {
            channel_id: 0,
            name: r.name,
            enabled: r.enabled,
            match_json: serde_json::to_string(&r.selector).unwrap_or_default(),
            team_id: None,
        }
    });
    let w = write_of(&valid, notifier)?;
    let rec = store
        .create_channel(
            ctx,
            now,
            w,
            digest,
            rule,
            (views::channel_json, views::rule_json),
        )
        .await?;
    tracing::info!(channel = rec.id, name = %rec.name, kind = %rec.kind, "notification channel created");
    notifier.poke();
    Ok(views::channel(&rec))
}

/// Replaces channel `id`; secrets left out keep their stored values (same type only).
pub async fn replace(
    store: &Store,
    notifier: &Notifier,
    ctx: AuditContext,
    write: TeamScope,
    id: i64,
    input: ChannelInput,
    now: i64,
) -> Result<ChannelView, NotifyError> {
    let rec = fetch(store, id, write.clone()).await?;
    let (kind, secrets, _) = opened(&rec, notifier)?;
    let valid = channel::validate(input, Some((kind, &secrets))).map_err(NotifyError::Invalid)?;
    check_team(store, &write, valid.team_id, "teamId").await?;
    let w = write_of(&valid, notifier)?;
    let rec = store
        .update_channel(ctx, now, id, write, w, views::channel_json)
        .await?;
    tracing::info!(channel = rec.id, name = %rec.name, "notification channel replaced");
    notifier.poke();
    Ok(views::channel(&rec))
}

pub async fn delete(
    store: &Store,
    notifier: &Notifier,
    ctx: AuditContext,
    write: TeamScope,
    id: i64,
    now: i64,
) -> Result<(), NotifyError> {
    store
        .delete_channel(ctx, now, id, write, views::channel_json)
        .await?;
    tracing::info!(channel = id, "notification channel deleted");
    notifier.poke();
    Ok(())
}

/// The channel ready to send to; `None` when it no longer exists.
pub async fn load_target(
    store: &Store,
    notifier: &Notifier,
    id: i64,
) -> Result<Option<Target>, NotifyError> {
    let Some(rec) = store.channel(id, None).await? else {
        return Ok(None);
    };
    let (kind, secrets, email) = opened(&rec, notifier)?;
    Ok(Some(Target {
        id: rec.id,
        name: rec.name,
        kind,
        email,
        secrets,
    }))
}

/// Sends a test message now and records it in the delivery log.
pub async fn test(
    store: &Store,
    notifier: &Notifier,
    write: TeamScope,
    id: i64,
    now: i64,
) -> Result<TestResult, NotifyError> {
    fetch(store, id, write).await?;
    let target = load_target(store, notifier, id)
        .await?
        .ok_or_else(|| NotifyError::NotFound(format!("notification channel {id}")))?;
    let m = test_message(&target.name, &notifier.settings.public_url, &format_ms(now));
    let delivery_id = uuid::Uuid::new_v4().to_string();
    let out = notifier
        .transport
        .send(&target, &m, &delivery_id, now / 1000)
        .await;
    let delivery = NewDelivery {
        id: delivery_id.clone(),
        channel_id: id,
        kind: MessageKind::Test.as_str(),
        dedupe_key: format!("test:{delivery_id}"),
        title: m.title.clone(),
        message_json: serde_json::to_string(&m).map_err(task)?,
        event_ids: Vec::new(),
    };
    let attempt = Attempt {
        delivered: out.delivered,
        status: out.status,
        error: out.error.clone(),
        retry_at: None,
    };
    store.record_sent(delivery, attempt, now).await?;
    tracing::info!(channel = id, delivery = %delivery_id, delivered = out.delivered, "test notification sent");
    Ok(TestResult {
        delivery_id,
        delivered: out.delivered,
        status: out.status,
        answer: out.answer,
        error: out.error,
        duration_ms: out.duration_ms,
    })
}

/// Every channel's digest schedule that `read` reaches.
pub async fn digests(
    store: &Store,
    read: TeamScope,
) -> Result<Vec<(ChannelView, DigestView)>, NotifyError> {
    Ok(store
        .channels(read)
        .await?
        .iter()
        .map(|r| {
            let v = views::channel(r);
            let d = v.digest.clone();
            (v, d)
        })
        .collect())
}

/// Channel `id`'s digest schedule and a preview of its next digest (since the last slot,
/// up to `now`).
pub async fn digest_preview(
    store: &Store,
    runs: &Runs,
    read: TeamScope,
    id: i64,
    now: i64,
) -> Result<DigestPreview, NotifyError> {
    let rec = fetch(store, id, read).await?;
    // What the next digest says so far: since the last slot, up to now.
    let (start, _) = digest::period(&rec, now + 1);
    let preview = digest::report_for(store, runs, &rec, (start, now)).await?;
    Ok(DigestPreview {
        channel_id: rec.id,
        channel_name: rec.name.clone(),
        digest: views::channel(&rec).digest,
        preview,
    })
}

/// Sets channel `id`'s digest schedule (`NotificationDigestUpdated`).
pub async fn set_digest(
    store: &Store,
    notifier: &Notifier,
    ctx: AuditContext,
    write: TeamScope,
    id: i64,
    input: schedule::DigestInput,
    now: i64,
) -> Result<ChannelView, NotifyError> {
    let sched = input
        .schedule
        .unwrap_or_else(|| schedule::DEFAULT_SCHEDULE.into())
        .trim()
        .to_string();
    let tz = input
        .time_zone
        .unwrap_or_else(|| notifier.settings.time_zone.clone());
    schedule::validate(&sched, &tz).map_err(NotifyError::Invalid)?;
    let d = DigestSchedule {
        enabled: input.enabled,
        schedule: sched,
        time_zone: tz,
    };
    let rec = store
        .update_digest(ctx, now, id, write, d, views::channel_json)
        .await?;
    notifier.poke();
    Ok(views::channel(&rec))
}

/// The selector JSON of a rule (stored as text).
pub fn selector_json(s: &Selector) -> Result<String, NotifyError> {
    serde_json::to_string(s).map_err(task)
}

//! Channel operations the API calls: list, read, create (with the default rule), replace,
//! delete, test, and the digest schedule and preview. Each takes the [`Caller`] (audit
//! context, team scopes, now); handlers only parse and serialize.

use serde::Serialize;

use super::channel::{self, ChannelInput, ChannelKind, ChannelSecrets, EmailSettings};
use super::digest::{self, report::DigestReport, schedule};
use super::message::{test_message, MessageKind};
use super::rule::{default_rule, Selector};
use super::transport::Target;
use super::views::{self, ChannelView, DigestView};
use super::{Caller, Notifier, NotifyError};
use crate::store::notify_channels::{ChannelRecord, ChannelWrite, DigestSchedule, TeamScope, View};
use crate::store::notify_deliveries::{Attempt, NewDelivery};
use crate::store::notify_rules::{RuleRecord, RuleWrite};
use crate::store::StoreError;
use crate::timestamp::format_ms;

/// What `POST .../channels/{id}/test` reports.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestResult {
    pub delivery_id: String,
    pub delivered: bool,
    /// The receiver's HTTP status or SMTP reply code.
    pub status: Option<i64>,
    /// A short verdict (`delivered`, `refused by the receiver`, `timed out`, …), never
    /// the receiver's own text.
    pub answer: Option<String>,
    /// Always `null` (kept for older clients; the verdict says what went wrong).
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// `GET /v1/notifications/channels/{id}/digest`: the schedule and what the next digest
/// says so far.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DigestPreview {
    pub channel_id: i64,
    pub channel_name: String,
    pub digest: DigestView,
    #[schema(value_type = Object)]
    pub preview: DigestReport,
}

pub(super) fn task(e: impl std::fmt::Display) -> NotifyError {
    NotifyError::Store(StoreError::Task(e.to_string()))
}

/// The selector JSON of a rule (stored as text).
pub(super) fn selector_json(s: &Selector) -> Result<String, NotifyError> {
    serde_json::to_string(s).map_err(task)
}

/// What a channel's sealed secrets are bound to: everything stored in clear that says
/// where and for whom they are used, so a blob moved to another channel (another
/// team's) or a channel edited outside kerf does not open.
pub fn binding(
    kind: &str,
    name: &str,
    team_id: Option<i64>,
    settings: &str,
    masked: &str,
) -> String {
    let team = team_id.map(|t| t.to_string()).unwrap_or_default();
    format!("kerf notification channel\n{kind}\n{name}\n{team}\n{settings}\n{masked}")
}

/// The binding of a stored channel.
pub fn record_binding(rec: &ChannelRecord) -> String {
    binding(
        &rec.kind,
        &rec.name,
        rec.team_id,
        &rec.settings_json,
        &rec.target_masked,
    )
}

/// What a test came to, in a few words of kerf's own. A closed port, a silent one and a
/// failed handshake read alike, so the button is no port scanner.
fn verdict(out: &super::transport::Outcome) -> String {
    let error = out.error.as_deref().unwrap_or_default();
    if out.delivered {
        "delivered".into()
    } else if error.starts_with("refused by the outbound policy") || error.starts_with("refused:") {
        error.to_string()
    } else if out.status.is_some() {
        "refused by the receiver".into()
    } else {
        "no answer from the receiver".into()
    }
}

fn opened(
    rec: &ChannelRecord,
    n: &Notifier,
) -> Result<(ChannelKind, ChannelSecrets, Option<EmailSettings>), NotifyError> {
    let kind = ChannelKind::parse(&rec.kind)
        .ok_or_else(|| task(format!("unknown channel type {:?}", rec.kind)))?;
    let secrets: ChannelSecrets = n
        .key()?
        .open_for(&rec.secrets_sealed, &record_binding(rec))?;
    let email = (kind == ChannelKind::Email)
        .then(|| serde_json::from_str(&rec.settings_json))
        .transpose()
        .map_err(task)?;
    Ok((kind, secrets, email))
}

fn write_of(v: &channel::ValidChannel, n: &Notifier) -> Result<ChannelWrite, NotifyError> {
    let mut w = ChannelWrite {
        name: v.name.clone(),
        kind: v.kind.as_str().into(),
        team_id: v.team_id,
        enabled: v.enabled,
        settings_json: match &v.email {
            Some(e) => serde_json::to_string(e).map_err(task)?,
            None => "{}".into(),
        },
        target_masked: v.target_masked(),
        secrets_sealed: Vec::new(),
    };
    let bound = binding(
        &w.kind,
        &w.name,
        w.team_id,
        &w.settings_json,
        &w.target_masked,
    );
    w.secrets_sealed = n.key()?.seal_for(&v.secrets, &bound)?;
    Ok(w)
}

impl Notifier {
    /// Checks that a change by a caller limited to `write` may name team `team`.
    pub async fn check_team(
        &self,
        write: &TeamScope,
        team: Option<i64>,
        field: &str,
    ) -> Result<(), NotifyError> {
        match (write, team) {
            (None, None) => Ok(()),
            (None, Some(t)) if self.store.reading(move |r| r.team_exists(t)).await? => Ok(()),
            (None, Some(t)) => Err(NotifyError::field(
                field,
                format!("team {t} does not exist"),
            )),
            (Some(_), None) => Err(NotifyError::Forbidden(format!(
                "only fleet editors manage fleet-wide notifications; set {field} to one of your teams"
            ))),
            (Some(teams), Some(t)) if teams.contains(&t) => Ok(()),
            (Some(_), Some(t)) => Err(NotifyError::Forbidden(format!(
                "{field} {t} is not a team you edit"
            ))),
        }
    }

    async fn channel_record(
        &self,
        id: i64,
        scope: TeamScope,
    ) -> Result<ChannelRecord, NotifyError> {
        self.store
            .reading(move |r| r.channel(id, &scope))
            .await?
            .ok_or_else(|| NotifyError::NotFound(format!("notification channel {id}")))
    }

    /// Every channel the caller sees.
    pub async fn channels(&self, c: &Caller) -> Result<Vec<ChannelView>, NotifyError> {
        let scope = c.read.clone();
        let recs = self.store.reading(move |r| r.channels(&scope)).await?;
        Ok(recs.iter().map(views::channel).collect())
    }

    pub async fn channel(&self, c: &Caller, id: i64) -> Result<ChannelView, NotifyError> {
        Ok(views::channel(
            &self.channel_record(id, c.read.clone()).await?,
        ))
    }

    /// Creates a channel (and, unless `defaultRules: false`, the default rule).
    pub async fn create_channel(
        &self,
        c: Caller,
        input: ChannelInput,
    ) -> Result<ChannelView, NotifyError> {
        let with_rule = input.default_rules != Some(false);
        let valid = channel::validate(input, None).map_err(NotifyError::Invalid)?;
        self.transport
            .admits(&valid)
            .map_err(NotifyError::Invalid)?;
        self.check_team(&c.write, valid.team_id, "teamId").await?;
        let digest = DigestSchedule {
            enabled: true,
            schedule: schedule::DEFAULT_SCHEDULE.into(),
            time_zone: self.settings.time_zone.clone(),
        };
        let rule = match with_rule {
            true => {
                let r = default_rule(0);
                Some(RuleWrite {
                    channel_id: 0,
                    name: r.name,
                    enabled: r.enabled,
                    match_json: selector_json(&r.selector)?,
                    team_id: None,
                })
            }
            false => None,
        };
        let w = write_of(&valid, self)?;
        let views: (View<ChannelRecord>, View<RuleRecord>) =
            (views::channel_json, views::rule_json);
        let limits = (
            self.settings.max_channels,
            self.settings.max_channels_per_team,
        );
        let rec = self
            .store
            .writing(move |tx| tx.create_channel(&c.ctx, c.now, &w, &digest, rule, views, limits))
            .await?;
        tracing::info!(channel = rec.id, name = %rec.name, kind = %rec.kind, "notification channel created");
        self.poke();
        Ok(views::channel(&rec))
    }

    /// Replaces channel `id`; secrets left out keep their stored values (same type only).
    pub async fn replace_channel(
        &self,
        c: Caller,
        id: i64,
        input: ChannelInput,
    ) -> Result<ChannelView, NotifyError> {
        let rec = self.channel_record(id, c.write.clone()).await?;
        let previous = match opened(&rec, self) {
            Ok(stored) => Some(stored),
            // Stored secrets that no longer open cannot be kept: the caller gives them
            // all again, as on create, and so mends the channel.
            Err(NotifyError::Secret(_)) => None,
            Err(e) => return Err(e),
        };
        let previous = previous
            .as_ref()
            .map(|(kind, secrets, email)| channel::Stored {
                kind: *kind,
                secrets,
                email: email.as_ref(),
            });
        let valid = channel::validate(input, previous).map_err(NotifyError::Invalid)?;
        self.transport
            .admits(&valid)
            .map_err(NotifyError::Invalid)?;
        self.check_team(&c.write, valid.team_id, "teamId").await?;
        let w = write_of(&valid, self)?;
        let (now, scope) = (c.now, c.write);
        let rec = self
            .store
            .write_audited(c.ctx, now, move |tx| {
                tx.update_channel(id, &scope, &w, now, views::channel_json)
            })
            .await?;
        tracing::info!(channel = rec.id, name = %rec.name, "notification channel replaced");
        self.poke();
        Ok(views::channel(&rec))
    }

    pub async fn delete_channel(&self, c: Caller, id: i64) -> Result<(), NotifyError> {
        let scope = c.write;
        self.store
            .write_audited(c.ctx, c.now, move |tx| {
                tx.delete_channel(id, &scope, views::channel_json)
            })
            .await?;
        tracing::info!(channel = id, "notification channel deleted");
        self.poke();
        Ok(())
    }

    /// The channel ready to send to; `None` when it no longer exists.
    pub async fn target(&self, id: i64) -> Result<Option<Target>, NotifyError> {
        let Some(rec) = self.store.reading(move |r| r.channel(id, &None)).await? else {
            return Ok(None);
        };
        let (kind, secrets, email) = opened(&rec, self)?;
        Ok(Some(Target {
            id: rec.id,
            name: rec.name,
            kind,
            email,
            secrets,
        }))
    }

    /// Sends a test message now and records it in the delivery log.
    pub async fn test_channel(&self, c: &Caller, id: i64) -> Result<TestResult, NotifyError> {
        self.channel_record(id, c.write.clone()).await?;
        let who = format!(
            "{}:{}",
            c.ctx.actor_kind_str(),
            c.ctx.actor.id.as_deref().unwrap_or(&c.ctx.actor.name)
        );
        self.tests
            .take(&who, c.now)
            .map_err(NotifyError::TooManyTests)?;
        let target = self
            .target(id)
            .await?
            .ok_or_else(|| NotifyError::NotFound(format!("notification channel {id}")))?;
        let m = test_message(&target.name, &self.settings.public_url, &format_ms(c.now));
        let delivery_id = uuid::Uuid::new_v4().to_string();
        let out = self
            .transport
            .send(&target, &m, &delivery_id, c.now / 1000)
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
        let now = c.now;
        self.store
            .writing(move |tx| tx.record_sent(&delivery, &attempt, now))
            .await?;
        tracing::info!(channel = id, delivery = %delivery_id, delivered = out.delivered, "test notification sent");
        // The status and a verdict, never what the receiver said: the button must not
        // read other servers' answers (or banners) back to whoever presses it.
        Ok(TestResult {
            delivery_id,
            delivered: out.delivered,
            status: out.status,
            answer: Some(verdict(&out)),
            error: None,
            duration_ms: out.duration_ms,
        })
    }

    /// Channel `id`'s digest schedule and a preview of its next digest (since the last
    /// slot, up to now).
    pub async fn digest_preview(&self, c: &Caller, id: i64) -> Result<DigestPreview, NotifyError> {
        let rec = self.channel_record(id, c.read.clone()).await?;
        let (start, _) = digest::period(&rec, c.now + 1);
        let preview = digest::report_for(self, &rec, (start, c.now)).await?;
        Ok(DigestPreview {
            channel_id: rec.id,
            channel_name: rec.name.clone(),
            digest: views::channel(&rec).digest,
            preview,
        })
    }

    /// Sets channel `id`'s digest schedule (`NotificationDigestUpdated`).
    pub async fn set_digest(
        &self,
        c: Caller,
        id: i64,
        input: schedule::DigestInput,
    ) -> Result<ChannelView, NotifyError> {
        let sched = input
            .schedule
            .unwrap_or_else(|| schedule::DEFAULT_SCHEDULE.into())
            .trim()
            .to_string();
        let tz = input
            .time_zone
            .unwrap_or_else(|| self.settings.time_zone.clone());
        schedule::validate(&sched, &tz).map_err(NotifyError::Invalid)?;
        let d = DigestSchedule {
            enabled: input.enabled,
            schedule: sched,
            time_zone: tz,
        };
        let (now, scope) = (c.now, c.write);
        let rec = self
            .store
            .write_audited(c.ctx, now, move |tx| {
                tx.update_digest(id, &scope, &d, now, views::channel_json)
            })
            .await?;
        self.poke();
        Ok(views::channel(&rec))
    }
}

//! The weekly digest: per channel, on its schedule (cron in an IANA zone, default
//! Monday 09:00 in the hub's zone), one message for the fleet (a fleet channel) or the
//! channel's team. The `digest` job watches the hub's one clock; each slot is recorded
//! once (in the same transaction that marks it done), then the channel's sender
//! delivers it like any other message.

pub mod report;
pub mod schedule;

use std::time::Duration;

use report::DigestReport;

use super::message::{Fact, Message, MessageKind, Severity};
use super::{Notifier, NotifyError};
use crate::jobs::Stop;
use crate::store::notify_channels::ChannelRecord;
use crate::store::notify_deliveries::NewDelivery;
use crate::timestamp::format_ms;

/// The period of a digest whose schedule has no earlier slot.
pub const PERIOD_MS: i64 = 7 * 24 * 3_600_000;
/// Schedules are re-read at least this often (and whenever something wakes the job).
const REREAD: Duration = Duration::from_secs(60);

fn money(currency: &str, v: f64) -> String {
    format!("{v:.2} {currency}/month")
}

fn reasons(list: &[report::ReasonCount]) -> String {
    list.iter()
        .map(|r| format!("{} ×{}", r.reason, r.count))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The digest as a message; `when` is the slot's local time.
pub fn message(r: &DigestReport, base_url: &str, when: &str) -> Message {
    let scope = if r.scope == "fleet" {
        "the fleet".to_string()
    } else {
        format!("team {}", r.scope)
    };
    let title = format!("Weekly digest for {scope} — {when}");
    if r.empty {
        return Message {
            kind: MessageKind::Digest,
            severity: Severity::Good,
            title,
            text: "Nothing to report this week: no changes, nothing needs attention, every cluster is ready.".into(),
            lines: Vec::new(),
            more: 0,
            facts: Vec::new(),
            link: Some(format!("{base_url}/")),
            data: serde_json::json!({ "digest": r }),
        };
    }
    let c = &r.changes;
    let mut lines = vec![format!(
        "Changes: {} applied, {} rolled back, {} blocked",
        c.applied, c.rolled_back, c.blocked
    )];
    if !c.top_rollback_reasons.is_empty() {
        lines.push(format!(
            "Rollbacks by reason: {}",
            reasons(&c.top_rollback_reasons)
        ));
    }
    if !c.top_blocked_reasons.is_empty() {
        lines.push(format!(
            "Blocked by reason: {}",
            reasons(&c.top_blocked_reasons)
        ));
    }
    let a = &r.attention;
    for (label, l) in [
        ("OOM-killed", &a.oom_killed),
        ("Leaking memory", &a.leaking),
        ("Throttled", &a.throttled),
        ("Stale data", &a.stale),
    ] {
        if l.count > 0 {
            let more = l.count.saturating_sub(l.workloads.len());
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            lines.push(format!(
                "{label} ({}): {}{tail}",
                l.count,
                l.workloads.join(", ")
            ));
        }
    }
    for cl in &r.clusters_not_ready {
        lines.push(format!(
            "Cluster {} is {}: {}",
            cl.cluster,
            cl.state,
            cl.reasons.join("; ")
        ));
    }
    let needs = a.oom_killed.count + a.leaking.count + a.throttled.count + a.stale.count;
    Message {
        kind: MessageKind::Digest,
        severity: if r.clusters_not_ready.is_empty() && c.rolled_back == 0 {
            Severity::Info
        } else {
            Severity::Warning
        },
        title,
        text: format!(
            "Realized {} from changes applied this week; {} still available.",
            money(&r.currency, r.savings.realized_monthly),
            money(&r.currency, r.savings.available_monthly)
        ),
        lines,
        more: 0,
        facts: vec![
            Fact {
                name: "Realized".into(),
                value: money(&r.currency, r.savings.realized_monthly),
            },
            Fact {
                name: "Available".into(),
                value: money(&r.currency, r.savings.available_monthly),
            },
            Fact {
                name: "Applied".into(),
                value: c.applied.to_string(),
            },
            Fact {
                name: "Rolled back".into(),
                value: c.rolled_back.to_string(),
            },
            Fact {
                name: "Blocked".into(),
                value: c.blocked.to_string(),
            },
            Fact {
                name: "Need attention".into(),
                value: needs.to_string(),
            },
            Fact {
                name: "Clusters not ready".into(),
                value: r.clusters_not_ready.len().to_string(),
            },
        ],
        link: Some(format!("{base_url}/")),
        data: serde_json::json!({ "digest": r }),
    }
}

/// The period a digest at `end` covers: since the schedule's slot before it.
pub fn period(rec: &ChannelRecord, end: i64) -> (i64, i64) {
    let start = schedule::previous_slot(&rec.digest.schedule, &rec.digest.time_zone, end);
    (start.unwrap_or(end - PERIOD_MS), end)
}

/// The digest of channel `rec` for `(start, end)`.
pub async fn report_for(
    n: &Notifier,
    rec: &ChannelRecord,
    (start, end): (i64, i64),
) -> Result<DigestReport, NotifyError> {
    let facts = n.store.reading(move |r| r.digest_facts(start, end)).await?;
    let currency = n
        .runs
        .pricing()
        .await
        .map(|p| p.currency)
        .unwrap_or_else(|_| "USD".into());
    let period = (format_ms(start), format_ms(end));
    Ok(match rec.team_id {
        None => report::build(&facts, "fleet", None, &currency, period),
        Some(t) => {
            let scopes = n.store.reading(|r| r.team_scopes()).await?;
            let patterns = scopes.get(&t).cloned().unwrap_or_default();
            let name = rec.team_name.clone().unwrap_or_default();
            report::build(&facts, &name, Some(&patterns), &currency, period)
        }
    })
}

/// Records channel `ch`'s digest if one is owed at `now`; returns the slot now done.
async fn owe(n: &Notifier, ch: &ChannelRecord, now: i64) -> Result<i64, NotifyError> {
    let (sched, tz) = (&ch.digest.schedule, &ch.digest.time_zone);
    let done = ch.digest_last_slot.unwrap_or(ch.created_at);
    let Some(slot) = schedule::due_slot(sched, tz, done, now) else {
        return Ok(done);
    };
    let report = report_for(n, ch, period(ch, slot)).await?;
    let m = message(
        &report,
        &n.settings.public_url,
        &schedule::local_label(tz, slot),
    );
    let delivery = NewDelivery {
        id: uuid::Uuid::new_v4().to_string(),
        channel_id: ch.id,
        kind: MessageKind::Digest.as_str(),
        dedupe_key: format!("digest:{}:{slot}", ch.id),
        title: m.title.clone(),
        message_json: serde_json::to_string(&m).map_err(super::ops::task)?,
        event_ids: Vec::new(),
    };
    let channel_id = ch.id;
    let recorded = n
        .store
        .writing(move |tx| tx.record_digest(channel_id, slot, &delivery, now))
        .await?;
    if recorded {
        tracing::info!(channel = ch.id, name = %ch.name, slot = %format_ms(slot), "weekly digest recorded");
        n.poke();
    }
    Ok(slot)
}

/// Records every digest owed at `now` (a channel that fails is logged and retried at the
/// next tick; the others go on); returns the earliest upcoming slot.
pub async fn tick(n: &Notifier, now: i64) -> Result<Option<i64>, NotifyError> {
    let mut earliest: Option<i64> = None;
    for ch in n.store.reading(|r| r.channels(&None)).await? {
        if !ch.enabled || !ch.digest.enabled {
            continue;
        }
        let done = match owe(n, &ch, now).await {
            Ok(done) => done,
            Err(e) => {
                tracing::error!(channel = ch.id, error = %e, "cannot record the digest; retrying");
                continue;
            }
        };
        let next = schedule::next_slot(&ch.digest.schedule, &ch.digest.time_zone, done.max(now));
        earliest = match (earliest, next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    Ok(earliest)
}

/// The digest job: ticks whenever the hub's clock reaches the next slot (noticed within
/// a second, so a test clock moved forward is seen), re-reading schedules every minute
/// and on every wake.
pub async fn run(n: Notifier, stop: Stop) {
    tokio::pin!(stop);
    let clock = n.runs.clock().clone();
    loop {
        let next = match tick(&n, clock.now_ms()).await {
            Ok(next) => next,
            Err(e) => {
                tracing::error!(error = %e, "digest tick failed; retrying");
                None
            }
        };
        let woke = super::wait_until(clock.as_ref(), next, &n.wake, REREAD);
        tokio::select! {
            _ = &mut stop => return,
            _ = woke => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::report::{Attention, Changes, DigestReport, Listed, Savings};
    use super::*;

    fn report(empty: bool) -> DigestReport {
        DigestReport {
            scope: "fleet".into(),
            period_start: "2027-03-22T08:00:00.000Z".into(),
            period_end: "2027-03-29T07:00:00.000Z".into(),
            currency: "EUR".into(),
            savings: Savings {
                realized_monthly: 0.0,
                available_monthly: 0.0,
            },
            changes: Changes {
                applied: 0,
                rolled_back: 0,
                blocked: 0,
                top_rollback_reasons: Vec::new(),
                top_blocked_reasons: Vec::new(),
            },
            attention: Attention::default(),
            clusters_not_ready: Vec::new(),
            empty,
        }
    }

    #[test]
    fn an_empty_week_is_one_line_saying_so() {
        let m = message(
            &report(true),
            "https://kerf.example",
            "Mon 29 Mar 2027 09:00 CEST",
        );
        assert_eq!(
            m.text,
            "Nothing to report this week: no changes, nothing needs attention, every cluster is ready."
        );
        assert!(m.lines.is_empty() && m.facts.is_empty());
        assert_eq!(m.severity, Severity::Good);
        assert_eq!(
            m.title,
            "Weekly digest for the fleet — Mon 29 Mar 2027 09:00 CEST"
        );
        assert_eq!(m.link.as_deref(), Some("https://kerf.example/"));
        assert_eq!(m.data["digest"]["empty"], true);
    }

    #[test]
    fn each_attention_kind_is_a_line_with_its_count_and_the_rest_counted() {
        let mut r = report(false);
        r.attention = Attention {
            oom_killed: Listed {
                count: 12,
                workloads: (0..10)
                    .map(|i| format!("prod/shop/Deployment/w{i}"))
                    .collect(),
            },
            leaking: Listed {
                count: 1,
                workloads: vec!["prod/shop/Deployment/queue".into()],
            },
            throttled: Listed {
                count: 1,
                workloads: vec!["prod/shop/Deployment/api".into()],
            },
            stale: Listed {
                count: 1,
                workloads: vec!["prod/shop/Deployment/feed".into()],
            },
        };
        let m = message(&r, "https://kerf.example", "now");
        let line = |prefix: &str| {
            m.lines
                .iter()
                .find(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("{prefix} in {:?}", m.lines))
                .clone()
        };
        assert!(line("OOM-killed (12): prod/shop/Deployment/w0, ").ends_with("w9 and 2 more"));
        assert_eq!(
            line("Leaking memory"),
            "Leaking memory (1): prod/shop/Deployment/queue"
        );
        assert_eq!(line("Throttled"), "Throttled (1): prod/shop/Deployment/api");
        assert_eq!(
            line("Stale data"),
            "Stale data (1): prod/shop/Deployment/feed"
        );
    }
}

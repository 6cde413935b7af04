//! The dispatcher job: reads new rows of the audit log (and newly finished runs) in
//! order from stored cursors, matches them against the live rules, groups each
//! channel's share into messages and records those deliveries *in the same transaction
//! that moves the cursors* — so after a crash every row is either not yet read or fully
//! recorded, never lost and never recorded twice. It then keeps one sender per channel
//! with pending deliveries (`sender`), so a receiver that is down or hangs delays its
//! own channel only. Nothing in the HTTP handlers calls it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use super::item::{self, Item};
use super::message::{compose, MessageKind};
use super::rule::{LiveRule, Selector};
use super::sender::{self, Lane, Senders};
use super::{Notifier, NotifyError};
use crate::clock::Clock;
use crate::jobs::Stop;
use crate::metrics::Metrics;
use crate::store::notify_deliveries::NewDelivery;
use crate::store::notify_dispatch::{AuditRow, DispatchBatch, RunRow};
use crate::store::{Store, StoreError};

/// Audit rows (and runs) read per pass at most.
pub const BATCH: usize = 1000;
/// Real time between passes when nothing is new.
const POLL: Duration = Duration::from_millis(500);

/// What the dispatcher carries between passes.
pub struct Dispatcher {
    store: Store,
    clock: Arc<dyn Clock>,
    notifier: Notifier,
    /// Failed runs already recorded since start (runs past a still-running one are
    /// looked at every pass; the delivery's dedupe key also guards a restart).
    runs_seen: HashSet<String>,
}

/// What one pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pass {
    pub rows: usize,
    pub deliveries: usize,
}

impl Dispatcher {
    pub fn new(notifier: Notifier) -> Dispatcher {
        Dispatcher {
            store: notifier.store.clone(),
            clock: notifier.runs.clock().clone(),
            notifier,
            runs_seen: HashSet::new(),
        }
    }

    /// Reads what is new and records its deliveries (one transaction with the cursors).
    pub async fn pass(&mut self) -> Result<Pass, NotifyError> {
        let (rows, runs) = self
            .store
            .reading(|r| {
                let (audit_at, runs_at) = r.notify_cursors()?;
                r.notify_sources(audit_at, runs_at, BATCH)
            })
            .await?;
        if rows.is_empty() && runs.is_empty() {
            return Ok(Pass::default());
        }
        let rules = self.live_rules().await?;
        let (mut items, runs_to, new_runs) = self.items(&rows, &runs);
        items.sort_by_key(|i| (i.trigger == item::RUN_FAILED, i.seq));
        let deliveries = self.deliveries(&items, &rules)?;
        let batch = DispatchBatch {
            audit_to: rows.last().map(|r| r.seq),
            runs_to,
            deliveries,
        };
        let now = self.clock.now_ms();
        let added = self
            .store
            .writing(move |tx| tx.commit_dispatch(&batch, now))
            .await?;
        self.runs_seen.extend(new_runs);
        if added > 0 {
            tracing::debug!(
                rows = rows.len(),
                deliveries = added,
                "notifications recorded"
            );
        }
        Ok(Pass {
            rows: rows.len(),
            deliveries: added,
        })
    }

    async fn live_rules(&self) -> Result<Vec<LiveRule>, NotifyError> {
        let (scopes, rules) = self
            .store
            .reading(|r| Ok((r.team_scopes()?, r.live_rules()?)))
            .await?;
        Ok(rules
            .into_iter()
            .map(|r| {
                let selector: Selector = serde_json::from_str(&r.match_json).unwrap_or_default();
                let scopes = [r.team_id, r.channel_team_id]
                    .into_iter()
                    .flatten()
                    .map(|t| scopes.get(&t).cloned().unwrap_or_default())
                    .collect();
                LiveRule {
                    id: r.id,
                    channel_id: r.channel_id,
                    selector,
                    scopes,
                }
            })
            .collect())
    }

    /// Items of the new rows and runs; the runs cursor stops before the first run still
    /// running. Returns (items, new runs cursor, failed runs newly seen).
    fn items(&self, rows: &[AuditRow], runs: &[RunRow]) -> (Vec<Item>, Option<i64>, Vec<String>) {
        let mut items: Vec<Item> = rows.iter().filter_map(item::from_audit).collect();
        let mut runs_to = None;
        let mut running = false;
        let mut seen = Vec::new();
        for r in runs {
            running |= r.status == "running";
            if !running {
                runs_to = Some(r.seq);
            }
            if let Some(it) = item::from_run(r).filter(|it| !self.runs_seen.contains(&it.id)) {
                seen.push(it.id.clone());
                items.push(it);
            }
        }
        (items, runs_to, seen)
    }

    fn deliveries(
        &self,
        items: &[Item],
        rules: &[LiveRule],
    ) -> Result<Vec<NewDelivery>, NotifyError> {
        let mut per_channel: BTreeMap<i64, Vec<&Item>> = BTreeMap::new();
        for it in items {
            let mut channels: Vec<i64> = rules
                .iter()
                .filter(|r| r.matches(it))
                .map(|r| r.channel_id)
                .collect();
            channels.dedup();
            for ch in channels {
                per_channel.entry(ch).or_default().push(it);
            }
        }
        let base = &self.notifier.settings.public_url;
        let mut out = Vec::new();
        for (channel_id, its) in per_channel {
            for (m, ids) in compose(&its, base) {
                let first = its
                    .iter()
                    .find(|i| i.id == ids[0])
                    .map(|i| (i.trigger.as_str(), i.seq));
                let dedupe_key = match first {
                    Some((item::RUN_FAILED, _)) => format!("run:{channel_id}:{}", ids[0]),
                    Some((_, seq)) => format!("audit:{channel_id}:{seq}"),
                    None => format!("audit:{channel_id}:{}", ids[0]),
                };
                out.push(NewDelivery {
                    id: uuid::Uuid::new_v4().to_string(),
                    channel_id,
                    kind: if m.kind == MessageKind::Notice {
                        "notice"
                    } else {
                        "events"
                    },
                    dedupe_key,
                    title: m.title.clone(),
                    message_json: serde_json::to_string(&m)
                        .map_err(|e| StoreError::Task(e.to_string()))?,
                    event_ids: ids,
                });
            }
        }
        Ok(out)
    }
}

/// The dispatcher job: a pass whenever something is new (after a short wait that lets a
/// burst gather into few messages), senders for every channel with pending deliveries.
pub async fn run(notifier: Notifier, metrics: Arc<Metrics>, stop: Stop) {
    tokio::pin!(stop);
    let (store, clock) = (notifier.store.clone(), notifier.runs.clock().clone());
    let mut d = Dispatcher::new(notifier.clone());
    let mut senders = Senders::default();
    let mut lanes: HashMap<i64, Arc<Lane>> = HashMap::new();
    let mut gathered = false;
    loop {
        if !gathered && has_new(&store).await {
            // The first row of a burst: let the rest of it arrive, then read it all.
            gathered = true;
            tokio::select! {
                _ = &mut stop => break,
                _ = tokio::time::sleep(notifier.settings.group_window) => {}
            }
            continue;
        }
        let full = match d.pass().await {
            Ok(p) => p.rows == BATCH,
            Err(e) => {
                tracing::error!(error = %e, "notification dispatch failed; retrying");
                false
            }
        };
        gathered = full;
        senders.reap();
        match store.reading(|r| r.pending_channels()).await {
            Ok(pending) => {
                for (channel_id, _) in pending {
                    let max = notifier.settings.max_per_minute;
                    let lane = lanes
                        .entry(channel_id)
                        .or_insert_with(|| Arc::new(Lane::new(max)))
                        .clone();
                    let ctx = sender::Ctx {
                        clock: clock.clone(),
                        notifier: notifier.clone(),
                        metrics: metrics.clone(),
                    };
                    senders.ensure(channel_id, || sender::run(ctx, channel_id, lane));
                }
            }
            Err(e) => tracing::error!(error = %e, "cannot list pending notifications"),
        }
        if full {
            continue;
        }
        tokio::select! {
            _ = &mut stop => break,
            _ = tokio::time::sleep(POLL) => {}
        }
    }
    senders.stop().await;
}

async fn has_new(store: &Store) -> bool {
    store
        .reading(|r| {
            let (audit, runs) = r.notify_cursors()?;
            r.notify_sources(audit, runs, 1)
        })
        .await
        .is_ok_and(|(rows, _)| !rows.is_empty())
}

//! Rule operations and the delivery log, as the API calls them: list, read, create,
//! replace and delete rules (within the caller's team scope), and page through
//! deliveries with their status, attempts and last error.

use super::ops::{check_team, selector_json};
use super::rule::{self, RuleInput};
use super::views::{self, DeliveryView, RuleView};
use super::{Notifier, NotifyError};
use crate::events::config_change::AuditContext;
use crate::store::notify_channels::TeamScope;
use crate::store::notify_deliveries::DeliveryFilter;
use crate::store::notify_rules::RuleWrite;
use crate::store::Store;

/// Largest page of the delivery log.
pub const MAX_PAGE: usize = 500;

pub async fn list(
    store: &Store,
    read: TeamScope,
    channel: Option<i64>,
) -> Result<Vec<RuleView>, NotifyError> {
    Ok(store
        .rules(read, channel)
        .await?
        .iter()
        .map(views::rule)
        .collect())
}

pub async fn get(store: &Store, read: TeamScope, id: i64) -> Result<RuleView, NotifyError> {
    store
        .rule(id, read)
        .await?
        .map(|r| views::rule(&r))
        .ok_or_else(|| NotifyError::NotFound(format!("notification rule {id}")))
}

async fn checked(
    store: &Store,
    write: &TeamScope,
    input: RuleInput,
) -> Result<RuleWrite, NotifyError> {
    let valid = rule::validate(input).map_err(NotifyError::Invalid)?;
    if valid.team_id.is_some() {
        check_team(store, write, valid.team_id, "teamId").await?;
    }
    Ok(RuleWrite {
        channel_id: valid.channel_id,
        name: valid.name,
        enabled: valid.enabled,
        match_json: selector_json(&valid.selector)?,
        team_id: valid.team_id,
    })
}

/// A channel the caller cannot reach reads as a bad `channelId`, not a missing rule.
fn channel_field(e: NotifyError) -> NotifyError {
    match e {
        NotifyError::Store(crate::store::StoreError::NotFound(what))
            if what.starts_with("notification channel") =>
        {
            NotifyError::field("channelId", format!("{what} does not exist"))
        }
        e => e,
    }
}

pub async fn create(
    store: &Store,
    notifier: &Notifier,
    ctx: AuditContext,
    write: TeamScope,
    input: RuleInput,
    now: i64,
) -> Result<RuleView, NotifyError> {
    let w = checked(store, &write, input).await?;
    let rec = store
        .create_rule(ctx, now, write, w, views::rule_json)
        .await
        .map_err(|e| channel_field(e.into()))?;
    tracing::info!(
        rule = rec.id,
        channel = rec.channel_id,
        "notification rule created"
    );
    notifier.poke();
    Ok(views::rule(&rec))
}

pub async fn replace(
    store: &Store,
    notifier: &Notifier,
    ctx: AuditContext,
    write: TeamScope,
    id: i64,
    input: RuleInput,
    now: i64,
) -> Result<RuleView, NotifyError> {
    if store.rule(id, write.clone()).await?.is_none() {
        return Err(NotifyError::NotFound(format!("notification rule {id}")));
    }
    let w = checked(store, &write, input).await?;
    let rec = store
        .update_rule(ctx, now, id, write, w, views::rule_json)
        .await
        .map_err(|e| channel_field(e.into()))?;
    notifier.poke();
    Ok(views::rule(&rec))
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
        .delete_rule(ctx, now, id, write, views::rule_json)
        .await?;
    notifier.poke();
    Ok(())
}

/// A page of the delivery log, newest first (`filter.scope` = the caller's read
/// scope), and the position to continue below.
pub async fn deliveries(
    store: &Store,
    mut filter: DeliveryFilter,
) -> Result<(Vec<DeliveryView>, Option<i64>), NotifyError> {
    filter.limit = filter.limit.clamp(1, MAX_PAGE);
    let (items, next) = store.deliveries(filter).await?;
    Ok((items.iter().map(views::delivery).collect(), next))
}

pub async fn delivery(
    store: &Store,
    read: TeamScope,
    id: String,
) -> Result<DeliveryView, NotifyError> {
    store
        .delivery(id.clone(), read)
        .await?
        .map(|d| views::delivery(&d))
        .ok_or_else(|| NotifyError::NotFound(format!("delivery {id}")))
}

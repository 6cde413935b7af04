//! Rule operations and the delivery log, as the API calls them: list, read, create,
//! replace and delete rules (within the caller's team scope), and page through
//! deliveries with their status, attempts and last error.

use super::ops::selector_json;
use super::rule::{self, RuleInput};
use super::views::{self, DeliveryView, RuleView};
use super::{Caller, Notifier, NotifyError};
use crate::store::notify_channels::TeamScope;
use crate::store::notify_deliveries::DeliveryFilter;
use crate::store::notify_rules::RuleWrite;
use crate::store::{Page, StoreError};

/// Largest page of the delivery log.
pub const MAX_PAGE: usize = 500;

/// A channel the caller cannot reach reads as a bad `channelId`, not a missing rule.
fn channel_field(e: StoreError) -> NotifyError {
    match e {
        StoreError::NotFound(what) if what.starts_with("notification channel") => {
            NotifyError::field("channelId", format!("{what} does not exist"))
        }
        e => e.into(),
    }
}

impl Notifier {
    pub async fn rules(
        &self,
        c: &Caller,
        channel: Option<i64>,
    ) -> Result<Vec<RuleView>, NotifyError> {
        let scope = c.read.clone();
        Ok(self
            .store
            .reading(move |r| r.rules(&scope, channel))
            .await?
            .iter()
            .map(views::rule)
            .collect())
    }

    pub async fn rule(&self, c: &Caller, id: i64) -> Result<RuleView, NotifyError> {
        let scope = c.read.clone();
        self.store
            .reading(move |r| r.rule(id, &scope))
            .await?
            .map(|r| views::rule(&r))
            .ok_or_else(|| NotifyError::NotFound(format!("notification rule {id}")))
    }

    async fn rule_write(
        &self,
        write: &TeamScope,
        input: RuleInput,
    ) -> Result<RuleWrite, NotifyError> {
        let valid = rule::validate(input).map_err(NotifyError::Invalid)?;
        if valid.team_id.is_some() {
            self.check_team(write, valid.team_id, "teamId").await?;
        }
        Ok(RuleWrite {
            channel_id: valid.channel_id,
            name: valid.name,
            enabled: valid.enabled,
            match_json: selector_json(&valid.selector)?,
            team_id: valid.team_id,
        })
    }

    pub async fn create_rule(&self, c: Caller, input: RuleInput) -> Result<RuleView, NotifyError> {
        let w = self.rule_write(&c.write, input).await?;
        let rec = self
            .store
            .write_audited(c.ctx, c.now, move |tx| {
                tx.create_rule(&c.write, &w, c.now, views::rule_json)
            })
            .await
            .map_err(channel_field)?;
        tracing::info!(
            rule = rec.id,
            channel = rec.channel_id,
            "notification rule created"
        );
        self.poke();
        Ok(views::rule(&rec))
    }

    pub async fn replace_rule(
        &self,
        c: Caller,
        id: i64,
        input: RuleInput,
    ) -> Result<RuleView, NotifyError> {
        let scope = c.write.clone();
        if self
            .store
            .reading(move |r| r.rule(id, &scope))
            .await?
            .is_none()
        {
            return Err(NotifyError::NotFound(format!("notification rule {id}")));
        }
        let w = self.rule_write(&c.write, input).await?;
        let rec = self
            .store
            .write_audited(c.ctx, c.now, move |tx| {
                tx.update_rule(id, &c.write, &w, c.now, views::rule_json)
            })
            .await
            .map_err(channel_field)?;
        self.poke();
        Ok(views::rule(&rec))
    }

    pub async fn delete_rule(&self, c: Caller, id: i64) -> Result<(), NotifyError> {
        let scope = c.write;
        self.store
            .write_audited(c.ctx, c.now, move |tx| {
                tx.delete_rule(id, &scope, views::rule_json)
            })
            .await?;
        self.poke();
        Ok(())
    }

    /// A page of the delivery log, newest first, and the position to continue below.
    pub async fn deliveries(
        &self,
        c: &Caller,
        mut filter: DeliveryFilter,
    ) -> Result<Page<DeliveryView>, NotifyError> {
        filter.scope = c.read.clone();
        filter.limit = filter.limit.clamp(1, MAX_PAGE);
        let page = self.store.reading(move |r| r.deliveries(&filter)).await?;
        Ok(page.map(|d| views::delivery(&d)))
    }

    pub async fn delivery(&self, c: &Caller, id: String) -> Result<DeliveryView, NotifyError> {
        let (key, scope) = (id.clone(), c.read.clone());
        self.store
            .reading(move |r| r.delivery(&key, &scope))
            .await?
            .map(|d| views::delivery(&d))
            .ok_or_else(|| NotifyError::NotFound(format!("delivery {id}")))
    }
}

//! The store's unit of work, for the domain modules above it: [`Store::reading`] hands a
//! [`Read`] (one reader connection), [`Store::writing`] a [`Tx`] (one write transaction,
//! committed when the closure returns `Ok`, rolled back otherwise) and
//! [`Store::write_audited`] a `Tx` whose change is recorded as one `config_changed` row
//! in the same transaction. The domain decides what belongs together; SQL, connections
//! and transactions stay here, and no rusqlite type leaves this module.

use std::ops::Deref;

use rusqlite::{Connection, Transaction};

use super::*;
use crate::events::config_change::{AuditContext, Change};
use crate::policy::PolicySpec;

/// Reads inside one connection (a consistent snapshot while the closure runs).
pub struct Read<'a>(&'a Connection);

/// Reads and writes inside one transaction.
pub struct Tx<'a> {
    tx: &'a Transaction<'a>,
    read: Read<'a>,
}

impl<'a> Deref for Tx<'a> {
    type Target = Read<'a>;

    fn deref(&self) -> &Read<'a> {
        &self.read
    }
}

impl Store {
    /// Runs `f` on a reader.
    pub async fn reading<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Read<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.read(move |c| f(&Read(c))).await
    }

    /// Runs `f` in one write transaction: all of it lands, or none.
    pub async fn writing<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Tx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.write(move |c| {
            let tx = c.transaction()?;
            let out = f(&Tx::new(&tx))?;
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    /// [`Store::writing`] without a runtime (commands, and tests and benchmarks that set
    /// a database up): one write transaction, all of it or none.
    pub fn writing_blocking<T>(
        &self,
        f: impl FnOnce(&Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.write_blocking(|c| {
            let tx = c.transaction()?;
            let out = f(&Tx::new(&tx))?;
            tx.commit()?;
            Ok(out)
        })
    }

    /// Runs `f` in one transaction and records the change it returns (made by `ctx` at
    /// `now`), then commits. When `f` or the audit insert fails, nothing of either is
    /// kept. The way every audited change is written.
    pub async fn write_audited<T, F>(
        &self,
        ctx: AuditContext,
        now: i64,
        f: F,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Tx<'_>) -> Result<(T, Change), StoreError> + Send + 'static,
    {
        self.write(move |c| config_audit::in_transaction(c, &ctx, now, |tx| f(&Tx::new(tx))))
            .await
    }
}

impl Store {
    /// [`Store::write_audited`] for the store's own operations, which write their SQL
    /// on the raw transaction.
    pub(in crate::store) async fn audited_sql<T, F>(
        &self,
        ctx: AuditContext,
        now: i64,
        f: F,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<(T, Change), StoreError> + Send + 'static,
    {
        self.write(move |c| config_audit::in_transaction(c, &ctx, now, f))
            .await
    }
}

impl<'a> Tx<'a> {
    fn new(tx: &'a Transaction<'a>) -> Tx<'a> {
        Tx { tx, read: Read(tx) }
    }

    /// Records `change`, made by `ctx` at `now`, in this transaction.
    pub fn record_change(
        &self,
        ctx: &AuditContext,
        now: i64,
        change: &Change,
    ) -> Result<(), StoreError> {
        config_audit::record(self.tx, ctx, now, change).map(|_| ())
    }

    pub fn insert_cluster(
        &self,
        new: &NewCluster<'_>,
        meta: &ClusterMeta,
        now: i64,
    ) -> Result<ClusterRecord, StoreError> {
        clusters::insert_cluster_with(self.tx, new, meta, now)
    }

    /// (before, after).
    pub fn update_cluster(
        &self,
        name: &str,
        patch: &ClusterPatch,
        now: i64,
    ) -> Result<(ClusterRecord, ClusterRecord), StoreError> {
        clusters::update_cluster(self.tx, name, patch, now)
    }

    /// The record before retirement.
    pub fn retire_cluster(&self, name: &str, now: i64) -> Result<ClusterRecord, StoreError> {
        clusters::retire_cluster(self.tx, name, now)
    }

    pub fn rotate_cluster_token(
        &self,
        name: &str,
        token_sha256: &str,
        now: i64,
    ) -> Result<(ClusterRecord, ClusterRecord), StoreError> {
        clusters::rotate_cluster_token(self.tx, name, token_sha256, now)
    }

    pub fn set_cluster_freeze(
        &self,
        name: &str,
        freeze: Option<&FreezeRecord>,
        now: i64,
    ) -> Result<(ClusterRecord, ClusterRecord), StoreError> {
        clusters::set_cluster_freeze(self.tx, name, freeze, now)
    }

    pub fn put_heartbeat(
        &self,
        cluster_id: i64,
        hb: &readiness::HeartbeatRecord,
    ) -> Result<(), StoreError> {
        readiness::put_heartbeat(self.tx, cluster_id, hb)
    }

    pub fn put_datasource_check(
        &self,
        cluster_id: i64,
        check: &readiness::DatasourceCheckRecord,
    ) -> Result<(), StoreError> {
        readiness::put_datasource_check(self.tx, cluster_id, check)
    }

    /// The previous pause of the scope, if any.
    pub fn put_pause(
        &self,
        p: &automation::PauseRecord,
    ) -> Result<Option<automation::PauseRecord>, StoreError> {
        automation::put_pause(self.tx, p)
    }

    pub fn delete_pause(&self, scope: &str) -> Result<Option<automation::PauseRecord>, StoreError> {
        automation::delete_pause(self.tx, scope)
    }

    /// False when the pause was replaced meanwhile.
    pub fn delete_due_pause(
        &self,
        expected: &automation::PauseRecord,
        now: i64,
    ) -> Result<bool, StoreError> {
        automation::delete_due_pause(self.tx, expected, now)
    }

    pub fn insert_user(&self, new: &NewUser<'_>, now: i64) -> Result<UserRecord, StoreError> {
        users::insert_user(self.tx, new, now)
    }

    pub fn update_user(&self, id: i64, patch: &UserPatch, now: i64) -> Result<(), StoreError> {
        users::update_user(self.tx, id, patch, now)
    }

    pub fn set_password(&self, id: i64, password_hash: &str, now: i64) -> Result<(), StoreError> {
        users::set_password(self.tx, id, password_hash, now)
    }

    pub fn delete_user(&self, id: i64) -> Result<(), StoreError> {
        users::delete_user(self.tx, id)
    }

    pub fn insert_token(
        &self,
        new: &NewApiToken<'_>,
        now: i64,
    ) -> Result<ApiTokenRecord, StoreError> {
        tokens::insert_token(self.tx, new, now)
    }

    pub fn revoke_token(&self, id: i64, now: i64) -> Result<(), StoreError> {
        tokens::revoke_token(self.tx, id, now)
    }

    pub fn insert_team(
        &self,
        name: &str,
        description: &str,
        namespaces: &[NamespacePattern],
        now: i64,
    ) -> Result<TeamRecord, StoreError> {
        teams::insert_team(self.tx, name, description, namespaces, now)
    }

    pub fn update_team(
        &self,
        id: i64,
        name: Option<&str>,
        description: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        teams::update_team(self.tx, id, name, description, now)
    }

    pub fn set_team_namespaces(
        &self,
        id: i64,
        namespaces: &[NamespacePattern],
        now: i64,
    ) -> Result<(), StoreError> {
        teams::set_namespaces(self.tx, id, namespaces, now)
    }

    pub fn set_team_members(
        &self,
        id: i64,
        members: &[(i64, String)],
        now: i64,
    ) -> Result<(), StoreError> {
        teams::set_members(self.tx, id, members, now)
    }

    pub fn delete_team(&self, id: i64) -> Result<(), StoreError> {
        teams::delete_team(self.tx, id)
    }

    pub fn create_policy(
        &self,
        spec: &PolicySpec,
        actor: &str,
        now: i64,
    ) -> Result<policies::PolicyRecord, StoreError> {
        policies::create_policy(self.tx, spec, actor, now)
    }

    /// (before, after); `VersionConflict` unless `expected` is the current version.
    pub fn update_policy(
        &self,
        id: i64,
        expected: i64,
        spec: &PolicySpec,
        actor: &str,
        change: &str,
        now: i64,
    ) -> Result<(policies::PolicyRecord, policies::PolicyRecord), StoreError> {
        policies::update_policy(self.tx, id, expected, spec, actor, change, now)
    }

    /// The record before the soft delete.
    pub fn delete_policy(
        &self,
        id: i64,
        expected: i64,
        now: i64,
    ) -> Result<policies::PolicyRecord, StoreError> {
        policies::delete_policy(self.tx, id, expected, now)
    }

    /// The previous override, if any.
    pub fn set_override(
        &self,
        rec: &overrides::OverrideRecord,
    ) -> Result<Option<overrides::OverrideRecord>, StoreError> {
        overrides::set_override(self.tx, rec)
    }

    pub fn clear_override(
        &self,
        workload_id: &str,
    ) -> Result<Option<overrides::OverrideRecord>, StoreError> {
        overrides::clear_override(self.tx, workload_id)
    }

    /// `Conflict` when the recommendation was approved before.
    pub fn insert_approval(&self, a: &approvals::ApprovalRecord) -> Result<(), StoreError> {
        approvals::insert_approval(self.tx, a)
    }

    pub fn insert_datasource(
        &self,
        name: &str,
        kind: &str,
        settings_json: &str,
        sealed: &[u8],
        now: i64,
    ) -> Result<DatasourceRecord, StoreError> {
        datasources::insert_datasource(self.tx, name, kind, settings_json, sealed, now)
    }

    pub fn update_datasource(
        &self,
        id: i64,
        name: &str,
        kind: &str,
        settings_json: &str,
        sealed: &[u8],
        now: i64,
    ) -> Result<Option<DatasourceRecord>, StoreError> {
        datasources::update_datasource(self.tx, id, name, kind, settings_json, sealed, now)
    }

    pub fn delete_datasource(&self, id: i64) -> Result<bool, StoreError> {
        datasources::delete_datasource(self.tx, id)
    }

    /// False when the cluster or the datasource is unknown.
    pub fn set_cluster_datasource(
        &self,
        cluster: &str,
        datasource_id: i64,
        now: i64,
    ) -> Result<bool, StoreError> {
        datasources::set_cluster_datasource(self.tx, cluster, datasource_id, now)
    }

    /// The previous document under `key`, if any.
    pub fn replace_setting(
        &self,
        key: &str,
        value: &str,
        now: i64,
    ) -> Result<Option<String>, StoreError> {
        runtime_settings::replace_setting(self.tx, key, value, now)
    }

    pub fn insert_session(&self, id_sha256: &str, s: &SessionRecord) -> Result<(), StoreError> {
        sessions::insert_session(self.tx, id_sha256, s)
    }

    pub fn delete_session(&self, id_sha256: &str) -> Result<(), StoreError> {
        sessions::delete_session(self.tx, id_sha256)
    }

    /// Sessions idle or past their lifetime at `now`.
    pub fn purge_expired_sessions(&self, now: i64, idle_ms: i64) -> Result<usize, StoreError> {
        sessions::purge_expired(self.tx, now, idle_ms)
    }
}

impl Read<'_> {
    pub fn active_cluster(&self, name: &str) -> Result<ClusterRecord, StoreError> {
        clusters::active_cluster(self.0, name)
    }

    pub fn get_cluster(&self, name: &str) -> Result<Option<ClusterRecord>, StoreError> {
        clusters::get_cluster(self.0, name)
    }

    pub fn list_clusters(&self) -> Result<Vec<ClusterRecord>, StoreError> {
        clusters::list_clusters(self.0)
    }

    pub fn readiness(
        &self,
        cluster_id: i64,
    ) -> Result<Option<readiness::ReadinessRecord>, StoreError> {
        readiness::get_readiness(self.0, cluster_id)
    }

    pub fn readiness_inputs(
        &self,
        cluster_id: i64,
        cluster: &str,
    ) -> Result<readiness::ReadinessInputs, StoreError> {
        readiness::inputs(self.0, cluster_id, cluster)
    }

    pub fn pause(&self, scope: &str) -> Result<Option<automation::PauseRecord>, StoreError> {
        automation::get_pause(self.0, scope)
    }

    pub fn pauses(&self) -> Result<Vec<automation::PauseRecord>, StoreError> {
        automation::list_pauses(self.0)
    }

    /// Pauses whose `resumeAt` is at or before `now`.
    pub fn due_pauses(&self, now: i64) -> Result<Vec<automation::PauseRecord>, StoreError> {
        automation::due_pauses(self.0, now)
    }

    pub fn next_resume_at(&self) -> Result<Option<i64>, StoreError> {
        automation::next_resume_at(self.0)
    }

    pub fn require_user(&self, id: i64) -> Result<UserRecord, StoreError> {
        users::require_user(self.0, id)
    }

    pub fn count_enabled_admins(&self) -> Result<i64, StoreError> {
        users::count_enabled_admins(self.0)
    }

    pub fn require_token(&self, id: i64) -> Result<ApiTokenRecord, StoreError> {
        tokens::require_token(self.0, id)
    }

    pub fn require_team(&self, id: i64) -> Result<TeamRecord, StoreError> {
        teams::require_team(self.0, id)
    }

    pub fn policy(&self, id: i64) -> Result<Option<policies::PolicyRecord>, StoreError> {
        policies::get_policy(self.0, id)
    }

    pub fn policy_version(
        &self,
        id: i64,
        version: i64,
    ) -> Result<Option<policies::PolicyVersion>, StoreError> {
        policies::policy_version(self.0, id, version)
    }

    pub fn datasource(&self, id: i64) -> Result<Option<DatasourceRecord>, StoreError> {
        datasources::get_datasource(self.0, id)
    }

    pub fn datasources(&self) -> Result<Vec<DatasourceRecord>, StoreError> {
        datasources::list_datasources(self.0)
    }

    /// The datasource `cluster` points at, if any.
    pub fn cluster_datasource(
        &self,
        cluster: &str,
    ) -> Result<Option<DatasourceRecord>, StoreError> {
        datasources::cluster_datasource(self.0, cluster)
    }
}

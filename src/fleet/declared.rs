//! The fleet declared in the config file (`[fleet]`, `config::declared`) made real at
//! start, through the same operations the API uses (`datasources`, `clusters`), each
//! change audited under the system actor [`ACTOR`]. Idempotent: what already matches
//! is not written, so a restart with the same file changes nothing.
//!
//! The rules (docs/connect-a-cluster.md says them to users):
//! - everything is read and checked first (secrets, settings, names, references, retired
//!   names); a bad declaration stops the start with one line before anything is
//!   written;
//! - the file owns what it declares: the API refuses to change a declared datasource,
//!   a declared cluster's metadata, its datasource link (when declared) and its token
//!   (when declared) with 409 `declared_in_config`, so a restart never silently undoes
//!   a change made in the UI;
//! - objects created through the API are never touched;
//! - a removed declaration deletes nothing: the object stays, and from then on the API
//!   manages it (retiring a cluster or deleting a datasource stays a deliberate act).

use serde_json::Value;

use super::clusters::{self, ClusterMetaInput};
use super::datasources;
use crate::auth::token;
use crate::config::declared::FleetConfig;
use crate::datasource::connection::{validate, DatasourceSettings, FieldError};
use crate::datasource::Secrets;
use crate::events::config_change::AuditContext;
use crate::operation::OpError;
use crate::runs::Runs;
use crate::secret::SecretKey;
use crate::store::{ClusterRecord, DatasourceRecord, Store};

/// Who the audit says made the changes.
pub const ACTOR: &str = "kerf.toml";

/// Why the declared fleet was not applied.
#[derive(Debug, thiserror::Error)]
pub enum DeclaredError {
    /// A declaration is wrong or contradicts the stored fleet: the operator's to fix.
    #[error("{0}")]
    Refused(String),
    /// The store failed while applying.
    #[error("applying the declared fleet failed: {0}")]
    Failed(String),
}

/// Every declaration read and checked, secrets included (never logged or shown).
pub struct Resolved {
    datasources: Vec<ResolvedDatasource>,
    clusters: Vec<ResolvedCluster>,
}

struct ResolvedDatasource {
    document: Value,
    settings: DatasourceSettings,
    secrets: Secrets,
}

struct ResolvedCluster {
    name: String,
    meta: ClusterMetaInput,
    datasource: Option<String>,
    token: Option<String>,
}

impl Resolved {
    /// (datasources, clusters) declared.
    pub fn counts(&self) -> (usize, usize) {
        (self.datasources.len(), self.clusters.len())
    }
}

/// What a start changed, by kind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Applied {
    pub datasources_created: usize,
    pub datasources_updated: usize,
    pub clusters_created: usize,
    pub clusters_updated: usize,
    pub tokens_set: usize,
    pub links_set: usize,
    pub unchanged: usize,
}

impl Applied {
    /// True when the store already matched every declaration.
    pub fn is_unchanged(&self) -> bool {
        *self
            == Applied {
                unchanged: self.unchanged,
                ..Applied::default()
            }
    }
}

/// The TOML key a datasource validation path stands for (`$.timeoutSeconds` →
/// `timeout_seconds`, `$.auth.password` → `auth.password_file`).
fn toml_key(path: &str) -> String {
    let path = path.trim_start_matches('$').trim_start_matches('.');
    let mut key = String::new();
    for c in path.chars() {
        if c.is_ascii_uppercase() {
            key.push('_');
            key.push(c.to_ascii_lowercase());
        } else {
            key.push(c);
        }
    }
    match key.as_str() {
        "auth.password" | "auth.token" => format!("{key}_file"),
        "tls.ca_pem" => "tls.ca_file".into(),
        "" => "(the declaration)".into(),
        _ => key,
    }
}

fn refused_fields(prefix: &str, errors: &[FieldError]) -> DeclaredError {
    let list: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", toml_key(&e.path), e.message))
        .collect();
    DeclaredError::Refused(format!("{prefix}: {}", list.join("; ")))
}

/// Reads every declared secret and checks every declaration, without the store.
pub fn resolve(fleet: &FleetConfig, env: &[(String, String)]) -> Result<Resolved, DeclaredError> {
    let refused = |e: crate::config::ConfigError| DeclaredError::Refused(e.to_string());
    let mut datasources = Vec::new();
    for d in &fleet.datasources {
        let prefix = format!("fleet.datasources.{}", d.name);
        let document = d
            .document(env, fleet.allow_readable_secret_files)
            .map_err(refused)?;
        let (settings, secrets) =
            validate(&document, None).map_err(|errors| refused_fields(&prefix, &errors))?;
        datasources.push(ResolvedDatasource {
            document,
            settings,
            secrets,
        });
    }
    let mut clusters = Vec::new();
    for c in &fleet.clusters {
        let prefix = format!("fleet.clusters.{}", c.name);
        crate::names::cluster(&c.name)
            .map_err(|e| DeclaredError::Refused(format!("{prefix}: name {e}")))?;
        let meta = ClusterMetaInput {
            display_name: Some(c.display_name.clone()),
            description: Some(c.description.clone()),
            labels: Some(c.labels.clone()),
        };
        clusters::check_meta(&meta).map_err(|e| match e {
            OpError::Invalid { field, message } => refused_fields(
                &prefix,
                &[FieldError {
                    path: field,
                    message,
                }],
            ),
            other => DeclaredError::Refused(format!("{prefix}: {other}")),
        })?;
        let token = c
            .token(env, fleet.allow_readable_secret_files)
            .map_err(refused)?;
        if let Some(t) = &token {
            clusters::check_token(t)
                .map_err(|e| DeclaredError::Refused(format!("{prefix}: the token {e}")))?;
            if clusters
                .iter()
                .any(|o: &ResolvedCluster| o.token.as_ref() == Some(t))
            {
                return Err(DeclaredError::Refused(format!(
                    "{prefix}: its token is also another declared cluster's; give each cluster its own"
                )));
            }
        }
        clusters.push(ResolvedCluster {
            name: c.name.clone(),
            meta,
            datasource: c.datasource.clone(),
            token,
        });
    }
    Ok(Resolved {
        datasources,
        clusters,
    })
}

fn ctx() -> AuditContext {
    AuditContext {
        actor: crate::wire::Actor::system(ACTOR),
        reason: Some("declared in the config file".into()),
    }
}

fn op_failed(what: &str) -> impl Fn(OpError) -> DeclaredError + '_ {
    move |e| match e {
        OpError::Store(s) => DeclaredError::Failed(format!("{what}: {s}")),
        OpError::Internal(m) => DeclaredError::Failed(format!("{what}: {m}")),
        other => DeclaredError::Refused(format!("{what}: {other}")),
    }
}

fn store_failed(e: crate::store::StoreError) -> DeclaredError {
    DeclaredError::Failed(e.to_string())
}

/// Makes the store match `resolved`: creates what is missing, brings what differs up
/// to date, links clusters to their datasources; writes nothing that already matches.
pub async fn apply(
    store: &Store,
    runs: &Runs,
    key: &SecretKey,
    now: i64,
    resolved: Resolved,
) -> Result<Applied, DeclaredError> {
    let (stored_ds, stored_clusters) = store
        .reading(|r| Ok((r.datasources()?, r.list_clusters()?)))
        .await
        .map_err(store_failed)?;
    check_against(store, &resolved, &stored_clusters).await?;
    let mut applied = Applied::default();
    for d in &resolved.datasources {
        let keys = (key, runs.outbound().as_ref());
        apply_datasource(store, keys, now, d, &stored_ds, &mut applied).await?;
    }
    for c in &resolved.clusters {
        apply_cluster(store, now, c, &stored_clusters, &mut applied).await?;
    }
    for c in &resolved.clusters {
        if let Some(want) = &c.datasource {
            let target = (c.name.clone(), want.clone());
            apply_link(store, runs, key, now, target, &mut applied).await?;
        }
    }
    Ok(applied)
}

/// What the stored fleet forbids, checked before anything is written: a declared
/// cluster whose name is retired, a declared token another cluster holds.
async fn check_against(
    store: &Store,
    resolved: &Resolved,
    stored_clusters: &[ClusterRecord],
) -> Result<(), DeclaredError> {
    for c in &resolved.clusters {
        let prefix = format!("fleet.clusters.{}", c.name);
        if stored_clusters
            .iter()
            .any(|s| s.name == c.name && s.retired_at.is_some())
        {
            return Err(DeclaredError::Refused(format!(
                "{prefix}: cluster {:?} is retired (its record stays for the audit trail); declare another name",
                c.name
            )));
        }
        let Some(value) = &c.token else { continue };
        let digest = token::hash(value);
        let holder = store
            .reading(move |r| r.cluster_by_token(&digest))
            .await
            .map_err(store_failed)?;
        if let Some((h, _)) = holder.filter(|(h, _)| h.name != c.name) {
            return Err(DeclaredError::Refused(format!(
                "{prefix}: its token is cluster {:?}'s; give each cluster its own",
                h.name
            )));
        }
    }
    Ok(())
}

/// Points cluster `name` at datasource `want` unless it already does.
async fn apply_link(
    store: &Store,
    runs: &Runs,
    key: &SecretKey,
    now: i64,
    (name, want): (String, String),
    applied: &mut Applied,
) -> Result<(), DeclaredError> {
    let (cluster, wanted) = (name.clone(), want.clone());
    let (current, target) = store
        .reading(move |r| {
            let current = r.cluster_datasource(&cluster)?.map(|d| d.id);
            let target = r.datasources()?.into_iter().find(|d| d.name == wanted);
            Ok((current, target.map(|d| d.id)))
        })
        .await
        .map_err(store_failed)?;
    let target = target.ok_or_else(|| {
        DeclaredError::Failed(format!("datasource {want:?} vanished while applying"))
    })?;
    if current == Some(target) {
        applied.unchanged += 1;
        return Ok(());
    }
    let what = format!("fleet.clusters.{name}: linking datasource {want:?}");
    datasources::set_for_cluster(store, runs, key, now, ctx(), name, target)
        .await
        .map_err(op_failed(&what))?;
    applied.links_set += 1;
    Ok(())
}

async fn apply_datasource(
    store: &Store,
    (key, outbound): (&SecretKey, &crate::outbound::Policy),
    now: i64,
    d: &ResolvedDatasource,
    stored: &[DatasourceRecord],
    applied: &mut Applied,
) -> Result<(), DeclaredError> {
    let name = &d.settings.name;
    let what = format!("fleet.datasources.{name}");
    match stored.iter().find(|s| &s.name == name) {
        None => {
            datasources::create(store, (key, outbound), now, ctx(), d.document.clone())
                .await
                .map_err(op_failed(&what))?;
            applied.datasources_created += 1;
        }
        Some(rec) => {
            let (settings, secrets) = datasources::open(rec, key).map_err(|e| {
                DeclaredError::Failed(format!("{what}: cannot read the stored datasource: {e}"))
            })?;
            if settings == d.settings && secrets == d.secrets {
                applied.unchanged += 1;
                return Ok(());
            }
            let keys = (key, outbound);
            datasources::replace(store, keys, now, ctx(), rec.id, d.document.clone())
                .await
                .map_err(op_failed(&what))?;
            applied.datasources_updated += 1;
        }
    }
    Ok(())
}

async fn apply_cluster(
    store: &Store,
    now: i64,
    c: &ResolvedCluster,
    stored: &[ClusterRecord],
    applied: &mut Applied,
) -> Result<(), DeclaredError> {
    let what = format!("fleet.clusters.{}", c.name);
    let Some(rec) = stored.iter().find(|s| s.name == c.name) else {
        let value = c
            .token
            .clone()
            .unwrap_or_else(|| token::generate(token::CLUSTER_TOKEN_PREFIX));
        clusters::register_with_token(store, now, ctx(), c.name.clone(), c.meta.clone(), value)
            .await
            .map_err(op_failed(&what))?;
        applied.clusters_created += 1;
        return Ok(());
    };
    let same_meta = Some(&rec.display_name) == c.meta.display_name.as_ref()
        && Some(&rec.description) == c.meta.description.as_ref()
        && Some(&rec.labels) == c.meta.labels.as_ref();
    if same_meta {
        applied.unchanged += 1;
    } else {
        clusters::update(store, now, ctx(), c.name.clone(), c.meta.clone())
            .await
            .map_err(op_failed(&what))?;
        applied.clusters_updated += 1;
    }
    if let Some(value) = &c.token {
        let digest = token::hash(value);
        let holder = store
            .reading(move |r| r.cluster_by_token(&digest))
            .await
            .map_err(store_failed)?;
        match holder {
            // Another holder was refused before anything was written.
            Some(_) => applied.unchanged += 1,
            None => {
                clusters::set_token(store, now, ctx(), c.name.clone(), value.clone())
                    .await
                    .map_err(op_failed(&what))?;
                applied.tokens_set += 1;
            }
        }
    }
    Ok(())
}

/// What an API change would touch of a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterPart {
    /// Display name, description, labels (`PATCH`).
    Metadata,
    /// Retiring it (`DELETE`).
    Existence,
    /// Its agent token (rotation).
    Token,
    /// Its datasource link.
    Datasource,
}

fn declared_here(what: String) -> OpError {
    OpError::conflict(
        "declared_in_config",
        format!(
            "{what} is declared in the config file ([fleet]); change it there and restart kerf"
        ),
    )
}

/// Refuses an API change to the part of cluster `name` that the config file declares:
/// 409 `declared_in_config`.
pub fn guard_cluster(fleet: &FleetConfig, name: &str, part: ClusterPart) -> Result<(), OpError> {
    let Some(c) = fleet.clusters.iter().find(|c| c.name == name) else {
        return Ok(());
    };
    let declared = match part {
        ClusterPart::Metadata | ClusterPart::Existence => true,
        ClusterPart::Token => c.token_file.is_some() || c.token_env.is_some(),
        ClusterPart::Datasource => c.datasource.is_some(),
    };
    match (declared, part) {
        (false, _) => Ok(()),
        (true, ClusterPart::Token) => Err(declared_here(format!("cluster {name:?}'s token"))),
        (true, ClusterPart::Datasource) => {
            Err(declared_here(format!("cluster {name:?}'s datasource")))
        }
        (true, _) => Err(declared_here(format!("cluster {name:?}"))),
    }
}

/// Refuses an API change to datasource `id` when the config file declares it: 409
/// `declared_in_config` (an unknown id passes, for the operation to answer 404).
pub async fn guard_datasource(store: &Store, fleet: &FleetConfig, id: i64) -> Result<(), OpError> {
    if fleet.datasources.is_empty() {
        return Ok(());
    }
    let rec = store.reading(move |r| r.datasource(id)).await?;
    match rec {
        Some(d) if fleet.datasources.iter().any(|x| x.name == d.name) => {
            Err(declared_here(format!("datasource {:?}", d.name)))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "declared_tests.rs"]
mod tests;

//! Metrics datasources as operations: create, replace, delete, list, read, test, and
//! point a cluster at one. Secret fields are write-only: sealed at rest with the data
//! dir's key, shown only as `…Set` flags, recorded in the audit as the fixed mask,
//! never logged. Each change is one audited transaction (`Datasource*`).

use serde_json::{json, Value};

use crate::datasource::connection::{validate, DatasourceSettings, FieldError};
use crate::datasource::view::{public_view, DatasourceView};
use crate::datasource::{datasource_binding, scope_for, Datasource, Secrets, Source, TestReport};
use crate::events::config_change::{action, target, AuditContext, Change};
use crate::operation::OpError;
use crate::outbound::{Policy, Purpose};
use crate::runs::Runs;
use crate::secret::{SecretKey, MASK};
use crate::store::{DatasourceRecord, Store, StoreError};

/// The representation recorded in `config_changed`: the public view, with every secret
/// header shown as `{name, sensitive: true, value: "***"}` (the fixed mask, never the
/// value; `secret` is a key the recorder refuses, so secrets fail loudly, not leak).
fn audit_view(view: &DatasourceView) -> Value {
    let mut v = serde_json::to_value(view).expect("a datasource view is plain data");
    if let Some(headers) = v.get_mut("headers").and_then(Value::as_array_mut) {
        for h in headers.iter_mut() {
            let secret = h["secret"] == true;
            let set = h["valueSet"] == true;
            *h = if secret {
                json!({ "name": h["name"], "sensitive": true, "value": if set { json!(MASK) } else { Value::Null } })
            } else {
                json!({ "name": h["name"], "sensitive": false, "value": h["value"] })
            };
        }
    }
    v
}

fn change(action: &'static str, rec: &DatasourceRecord) -> Change {
    Change::new(action, target::DATASOURCE, rec.id, Some(&rec.name))
}

/// The stored settings and opened secrets of a record.
pub(super) fn open(
    rec: &DatasourceRecord,
    key: &SecretKey,
) -> Result<(DatasourceSettings, Secrets), StoreError> {
    let settings: DatasourceSettings =
        serde_json::from_str(&rec.settings_json).map_err(|e| StoreError::Task(e.to_string()))?;
    let secrets = key
        .open_for(&rec.secrets_sealed, &datasource_binding(&rec.settings_json))
        .map_err(|e| StoreError::Task(e.to_string()))?;
    Ok((settings, secrets))
}

/// The public view of a record (secrets as `…Set` flags).
fn view(rec: &DatasourceRecord, key: &SecretKey) -> Result<DatasourceView, StoreError> {
    let (settings, secrets) = open(rec, key)?;
    Ok(public_view(rec.id, &settings, &secrets, &rec.clusters))
}

/// The one 400 listing every bad field of a datasource document.
pub fn invalid(errors: Vec<FieldError>) -> OpError {
    OpError::rejected(
        "invalid_datasource",
        "the datasource settings are invalid",
        errors,
    )
}

/// A valid document whose URL the outbound policy admits (its name is checked again
/// after resolution at every connection).
fn validated(
    body: &Value,
    previous: Option<(&DatasourceSettings, &Secrets)>,
    outbound: &Policy,
) -> Result<(DatasourceSettings, Secrets), OpError> {
    let (settings, secrets) = validate(body, previous).map_err(invalid)?;
    if let Err(refused) = outbound.check_url(&settings.url, Purpose::Any) {
        return Err(invalid(vec![FieldError::new(
            "$.url",
            &refused.to_string(),
        )]));
    }
    Ok((settings, secrets))
}

/// A taken name names what it conflicts with.
fn conflict(e: StoreError) -> OpError {
    match e {
        StoreError::Conflict(what) => OpError::conflict(
            "conflict",
            format!("{what} conflicts with an existing record"),
        ),
        e => e.into(),
    }
}

/// `DatasourceCreated` from the settings document `body` (secrets inside it).
pub async fn create(
    store: &Store,
    (key, outbound): (&SecretKey, &Policy),
    now: i64,
    ctx: AuditContext,
    body: Value,
) -> Result<DatasourceView, OpError> {
    let (settings, secrets) = validated(&body, None, outbound)?;
    let json = serde_json::to_string(&settings).map_err(OpError::internal)?;
    let sealed = key
        .seal_for(&secrets, &datasource_binding(&json))
        .map_err(OpError::internal)?;
    let k = key.clone();
    let out = store
        .write_audited(ctx, now, move |tx| {
            let rec = tx.insert_datasource(&settings.name, &settings.kind, &json, &sealed, now)?;
            let view = view(&rec, &k)?;
            let change = change(action::DATASOURCE_CREATED, &rec).after(audit_view(&view));
            Ok(((rec.id, rec.name, view), change))
        })
        .await
        .map_err(conflict)?;
    tracing::info!(datasource = out.0, name = %out.1, "datasource created");
    Ok(out.2)
}

/// Every datasource.
pub async fn list(store: &Store, key: &SecretKey) -> Result<Vec<DatasourceView>, OpError> {
    let recs = store.reading(|r| r.datasources()).await?;
    Ok(recs
        .iter()
        .map(|r| view(r, key))
        .collect::<Result<Vec<_>, _>>()?)
}

async fn fetch(store: &Store, id: i64) -> Result<DatasourceRecord, OpError> {
    store
        .reading(move |r| r.datasource(id))
        .await?
        .ok_or_else(|| OpError::NotFound(format!("no datasource {id}")))
}

/// Datasource `id`.
pub async fn get(store: &Store, key: &SecretKey, id: i64) -> Result<DatasourceView, OpError> {
    Ok(view(&fetch(store, id).await?, key)?)
}

/// `DatasourceUpdated`: the whole new document; secrets left out keep their values.
pub async fn replace(
    store: &Store,
    (key, outbound): (&SecretKey, &Policy),
    now: i64,
    ctx: AuditContext,
    id: i64,
    body: Value,
) -> Result<DatasourceView, OpError> {
    let (stored, previous) = open(&fetch(store, id).await?, key)?;
    let (settings, secrets) = validated(&body, Some((&stored, &previous)), outbound)?;
    let json = serde_json::to_string(&settings).map_err(OpError::internal)?;
    let sealed = key
        .seal_for(&secrets, &datasource_binding(&json))
        .map_err(OpError::internal)?;
    let k = key.clone();
    let missing = move || StoreError::NotFound(format!("datasource {id}"));
    let out = store
        .write_audited(ctx, now, move |tx| {
            let before = tx.datasource(id)?.ok_or_else(missing)?;
            let (name, kind) = (&settings.name, &settings.kind);
            let rec = tx
                .update_datasource(id, name, kind, &json, &sealed, now)?
                .ok_or_else(missing)?;
            let view = view(&rec, &k)?;
            let change = change(action::DATASOURCE_UPDATED, &rec)
                .before(audit_view(&self::view(&before, &k)?))
                .after(audit_view(&view));
            Ok(((rec.name, view), change))
        })
        .await
        .map_err(conflict)?;
    tracing::info!(datasource = id, name = %out.0, "datasource replaced");
    Ok(out.1)
}

/// `DatasourceDeleted`; refused while clusters use it.
pub async fn delete(
    store: &Store,
    key: &SecretKey,
    now: i64,
    ctx: AuditContext,
    id: i64,
) -> Result<(), OpError> {
    let k = key.clone();
    store
        .write_audited(ctx, now, move |tx| {
            let before = tx
                .datasource(id)?
                .ok_or_else(|| StoreError::NotFound(format!("datasource {id}")))?;
            tx.delete_datasource(id)?;
            let change =
                change(action::DATASOURCE_DELETED, &before).before(audit_view(&view(&before, &k)?));
            Ok(((), change))
        })
        .await
        .map_err(conflict)?;
    tracing::info!(datasource = id, "datasource deleted");
    Ok(())
}

/// Reachability, credentials and the metrics kerf needs, for the first cluster using
/// it; every cluster on it is re-checked for readiness in the background.
pub async fn test(
    store: &Store,
    runs: &Runs,
    key: &SecretKey,
    id: i64,
) -> Result<TestReport, OpError> {
    let rec = fetch(store, id).await?;
    let (settings, secrets) = open(&rec, key)?;
    let source = Datasource::from_settings(&settings, &secrets, runs.outbound()).map_err(|e| {
        OpError::Rejected {
            code: "invalid_datasource",
            message: e.to_string(),
            details: Value::Null,
        }
    })?;
    let cluster = rec.clusters.first().cloned().unwrap_or_default();
    for c in &rec.clusters {
        super::datasource_check::spawn_check(store.clone(), runs.clone(), c.clone());
    }
    source
        .test(&scope_for(&settings, &cluster))
        .await
        .map_err(|e| OpError::Upstream {
            code: "datasource_failed",
            message: e.to_string(),
        })
}

/// Points active cluster `cluster` at datasource `id`: `DatasourceUpdated` (its
/// `clusters` gain the cluster), then re-checks the cluster's readiness in the
/// background.
pub async fn set_for_cluster(
    store: &Store,
    runs: &Runs,
    key: &SecretKey,
    now: i64,
    ctx: AuditContext,
    cluster: String,
    id: i64,
) -> Result<(), OpError> {
    let (name, k) = (cluster.clone(), key.clone());
    let missing =
        move || StoreError::NotFound(format!("active cluster {name:?} or datasource {id}"));
    let name = cluster.clone();
    store
        .write_audited(ctx, now, move |tx| {
            let before = tx.datasource(id)?.ok_or_else(missing.clone())?;
            if !tx.set_cluster_datasource(&name, id, now)? {
                return Err(missing());
            }
            let after = tx.datasource(id)?.ok_or_else(missing)?;
            let change = change(action::DATASOURCE_UPDATED, &after)
                .before(audit_view(&view(&before, &k)?))
                .after(audit_view(&view(&after, &k)?));
            Ok(((), change))
        })
        .await?;
    super::datasource_check::spawn_check(store.clone(), runs.clone(), cluster);
    Ok(())
}

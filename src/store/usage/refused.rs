//! The series refused whole (bad labels, past the series limit), remembered per cluster
//! in a bounded list so the cluster's readiness can name them. A series that is later
//! accepted leaves the list; prune drops the ones not refused since its cut-off.

use rusqlite::{params, Connection};

use super::{Refusal, StoreError};

/// A series refused whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedSeries {
    /// `metric{labels}` as sent.
    pub series: String,
    /// The latest reason.
    pub reason: Refusal,
    /// Samples refused with it, all times together.
    pub samples: u64,
    /// When it was first and last refused (hub clock, Unix ms).
    pub first_ms: i64,
    pub last_ms: i64,
}

/// One refusal to remember.
pub(super) struct Seen<'a> {
    pub cluster: &'a str,
    pub series: &'a str,
    pub reason: Refusal,
    pub samples: u64,
    pub now: i64,
}

/// Remembers `seen`: updates its row, or adds one while the cluster has fewer than
/// `kept`. `listed` caches the cluster's row count within one append.
pub(super) fn record(
    conn: &Connection,
    seen: &Seen<'_>,
    kept: usize,
    listed: &mut Option<usize>,
) -> Result<(), StoreError> {
    let updated = conn
        .prepare_cached(
            "UPDATE refused_series SET reason = ?3, samples = samples + ?4, last_ms = ?5
             WHERE cluster = ?1 AND labels = ?2",
        )?
        .execute(params![
            seen.cluster,
            seen.series,
            seen.reason.as_str(),
            seen.samples as i64,
            seen.now
        ])?;
    if updated > 0 {
        return Ok(());
    }
    let n = match *listed {
        Some(n) => n,
        None => {
            let n: i64 = conn
                .prepare_cached("SELECT COUNT(*) FROM refused_series WHERE cluster = ?1")?
                .query_row([seen.cluster], |r| r.get(0))?;
            usize::try_from(n).unwrap_or(0)
        }
    };
    if n >= kept {
        *listed = Some(n);
        return Ok(());
    }
    conn.prepare_cached(
        "INSERT INTO refused_series (cluster, labels, reason, samples, first_ms, last_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
    )?
    .execute(params![
        seen.cluster,
        seen.series,
        seen.reason.as_str(),
        seen.samples as i64,
        seen.now
    ])?;
    *listed = Some(n + 1);
    Ok(())
}

/// Forgets `series` of `cluster`: it was accepted.
pub(super) fn forget(conn: &Connection, cluster: &str, series: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM refused_series WHERE cluster = ?1 AND labels = ?2")?
        .execute([cluster, series])?;
    Ok(())
}

/// Forgets the series last refused before `older_than_ms`; returns how many.
pub(super) fn prune(conn: &Connection, older_than_ms: i64) -> Result<u64, StoreError> {
    let n = conn
        .prepare_cached("DELETE FROM refused_series WHERE last_ms < ?1")?
        .execute([older_than_ms])?;
    Ok(n as u64)
}

/// The refused series of `cluster`, most recently refused first.
pub(super) fn list(conn: &Connection, cluster: &str) -> Result<Vec<RefusedSeries>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT labels, reason, samples, first_ms, last_ms FROM refused_series
         WHERE cluster = ?1 ORDER BY last_ms DESC, labels",
    )?;
    let rows = stmt.query_map([cluster], |r| {
        let reason: String = r.get(1)?;
        let reason = Refusal::from_name(&reason).ok_or_else(|| {
            let why = format!("unknown refusal {reason:?}");
            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, why.into())
        })?;
        Ok(RefusedSeries {
            series: r.get(0)?,
            reason,
            samples: r.get::<_, i64>(2)? as u64,
            first_ms: r.get(3)?,
            last_ms: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

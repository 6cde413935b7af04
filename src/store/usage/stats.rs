//! How much a cluster has (for readiness and the UI: "how much history it has"), and
//! the file's size (for the benchmark against Prometheus's TSDB).

use std::collections::BTreeMap;

use super::refused::{self, RefusedSeries};
use super::{Refusal, StoreError, UsageRead};
use crate::xor;

/// One cluster's usage history.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageStats {
    pub series: u64,
    /// `UsageOptions::max_series_per_cluster`.
    pub series_limit: u64,
    pub chunks: u64,
    pub samples: u64,
    /// Bytes of XOR chunk data.
    pub chunk_bytes: u64,
    /// The oldest and newest sample times (Unix ms); `None` without series.
    pub oldest_ms: Option<i64>,
    pub newest_ms: Option<i64>,
    /// The refused series remembered (at most `UsageOptions::refused_series_kept`),
    /// most recently refused first.
    pub refused: Vec<RefusedSeries>,
    /// How many of `refused` each reason refused.
    pub refused_by_reason: BTreeMap<Refusal, u64>,
}

/// The whole file's size and content.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskUsage {
    /// page_count × page_size: the main file (run `UsageStore::checkpoint` first, or the
    /// WAL holds part of it).
    pub file_bytes: u64,
    /// Free pages inside the file (freelist_count × page_size), reused before it grows.
    pub free_bytes: u64,
    /// Bytes of XOR chunk data, all clusters, open and closed.
    pub chunk_bytes: u64,
    pub chunks: u64,
    pub samples: u64,
    pub series: u64,
}

fn unsigned(n: Option<i64>) -> u64 {
    n.unwrap_or(0).max(0) as u64
}

impl UsageRead<'_> {
    /// `cluster`'s series, samples, bytes and time span, and the series it had refused.
    pub fn stats(&self, cluster: &str) -> Result<UsageStats, StoreError> {
        // The series' totals: no chunk is read.
        let (series, oldest_ms, newest_ms, chunks, samples, chunk_bytes) = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*), MIN(first_ms), MAX(last_ms), SUM(chunks), SUM(samples),
                 SUM(bytes) FROM series WHERE cluster = ?1",
            )?
            .query_row([cluster], |r| {
                let sum = |i| r.get::<_, Option<i64>>(i);
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, sum(3)?, sum(4)?, sum(5)?))
            })?;
        let refused = refused::list(self.conn, cluster)?;
        let mut refused_by_reason = BTreeMap::new();
        for r in &refused {
            *refused_by_reason.entry(r.reason).or_default() += 1;
        }
        Ok(UsageStats {
            series: unsigned(Some(series)),
            series_limit: self.opts.max_series_per_cluster as u64,
            chunks: unsigned(chunks),
            samples: unsigned(samples),
            chunk_bytes: unsigned(chunk_bytes),
            oldest_ms,
            newest_ms,
            refused,
            refused_by_reason,
        })
    }

    /// The file's size and what it holds (reads every chunk row: for benchmarks and
    /// checks, not for pages).
    pub fn disk_usage(&self) -> Result<DiskUsage, StoreError> {
        let pragma = |name: &str| -> Result<i64, StoreError> {
            Ok(self
                .conn
                .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))?)
        };
        let page = pragma("page_size")?;
        let (mut chunks, mut samples, mut chunk_bytes) = (0u64, 0u64, 0u64);
        for table in ["chunks", "open_chunks"] {
            // The header of each chunk counts its samples.
            let sql = format!("SELECT substr(data, 1, 2), length(data) FROM {table}");
            let mut stmt = self.conn.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let head = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
                chunks += 1;
                samples += xor::sample_count(head).unwrap_or(0) as u64;
                chunk_bytes += unsigned(row.get(1)?);
            }
        }
        let series: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM series", [], |r| r.get(0))?;
        Ok(DiskUsage {
            file_bytes: unsigned(Some(pragma("page_count")? * page)),
            free_bytes: unsigned(Some(pragma("freelist_count")? * page)),
            chunk_bytes,
            chunks,
            samples,
            series: unsigned(Some(series)),
        })
    }
}

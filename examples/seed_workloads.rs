//! Test support for the UI at fleet scale: fills a data dir that a `kerf demo` run has
//! already analysed up to N workloads (default 10,000), each a copy of one of the demo's
//! real workloads and its latest recommendation (engine output, trace and all) under a
//! new id and name, written through `kerf::store` as a run would write them.
//!
//! `cargo run --example seed_workloads -- DATA_DIR [COUNT]`; used by the browser tests'
//! 10,000-workload measurement (tests/e2e/scale.test.js) and, through [`seed`], by the
//! export benchmark (`benches/export.rs`).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use kerf::clock::{Clock, SystemClock};
use kerf::store::{
    self, ChunkWrite, NewRecommendation, Store, StoreOptions, WorkloadFilter, WorkloadRow,
    WorkloadSeen,
};

const CHUNK: usize = 1000;

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(seed_from_args())
}

async fn seed_from_args() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .context("usage: seed_workloads DATA_DIR [COUNT]")?,
    );
    let count: usize = match args.next() {
        Some(n) => n.parse().context("COUNT must be a number")?,
        None => 10_000,
    };
    let (written, have, templates) = seed(&dir, count).await?;
    println!("seeded {written} workloads ({have} were there, {templates} templates)");
    Ok(())
}

/// Fills the data dir `dir` up to `count` workloads: (written, there before, templates).
pub async fn seed(dir: &Path, count: usize) -> anyhow::Result<(usize, usize, usize)> {
    let opts = StoreOptions {
        readers: 1,
        busy_timeout_ms: 5000,
    };
    let now = SystemClock.now_ms();
    let db = Store::open_and_migrate(&dir.join("kerf.db"), &opts, now)?;
    let templates = templates(&db).await?;
    if templates.is_empty() {
        bail!(
            "no analysed workload in {}: run `kerf demo --data-dir` there first",
            dir.display()
        );
    }
    let have = count_workloads(&db).await?;
    let mut written = 0;
    for start in (have..count).step_by(CHUNK) {
        let mut chunk = ChunkWrite {
            run_id: templates[0].1.run_id.clone(),
            now_ms: now,
            ..Default::default()
        };
        for i in start..count.min(start + CHUNK) {
            let (w, rec) = &templates[i % templates.len()];
            chunk.analyzed.push(copy(w, rec, i, now));
        }
        written += chunk.analyzed.len();
        db.writing(move |tx| tx.write_chunk(&chunk)).await?;
    }
    db.checkpoint()?;
    Ok((written, have, templates.len()))
}

/// Every analysed workload with its latest recommendation (with the engine output).
async fn templates(
    db: &Store,
) -> Result<Vec<(WorkloadRow, store::RecommendationRow)>, store::StoreError> {
    db.reading(|r| {
        let mut out = Vec::new();
        for w in r.list_workloads(&filter(500))?.items {
            let Some(rec_id) = w.latest_rec_id.clone() else {
                continue;
            };
            if let Some(rec) = r.recommendation(&rec_id)? {
                out.push((w, rec));
            }
        }
        Ok(out)
    })
    .await
}

async fn count_workloads(db: &Store) -> Result<usize, store::StoreError> {
    let mut n = 0;
    let mut f = filter(500);
    loop {
        let wanted = f.clone();
        let page = db.reading(move |r| r.list_workloads(&wanted)).await?;
        n += page.items.len();
        match page.next {
            Some(next) => f.after = Some(next),
            None => return Ok(n),
        }
    }
}

fn filter(limit: usize) -> WorkloadFilter {
    WorkloadFilter {
        limit,
        ..Default::default()
    }
}

/// Copy `i` of a template: same cluster, namespace, kind and settings; a new name and id.
fn copy(
    w: &WorkloadRow,
    rec: &store::RecommendationRow,
    i: usize,
    now: i64,
) -> (WorkloadSeen, NewRecommendation) {
    let seen = WorkloadSeen {
        id: format!("wl-seed{i:017}"),
        name: format!("{}-{i:05}", w.seen.name),
        uid: String::new(),
        ..w.seen.clone()
    };
    let new = NewRecommendation {
        id: format!("00000000-0000-4000-8000-{i:012}"),
        workload_id: seen.id.clone(),
        run_id: rec.run_id.clone(),
        created_at: now,
        policy_version: rec.policy_version.clone(),
        settings_identity: rec.settings_identity.clone(),
        cost_delta: rec.cost_delta,
        summary: rec.summary.clone(),
        analysis: rec.analysis.clone(),
        has_changes: w.has_changes,
        data_quality: w
            .data_quality
            .clone()
            .unwrap_or_else(|| "unavailable".into()),
        notices: w.notices.clone(),
        confidence: w.confidence,
        risk: w.risk,
        change_tolerance: 0.05,
    };
    (seen, new)
}

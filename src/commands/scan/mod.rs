//! `kerf scan`: KRR's job in one command, without a hub. Discovers the workloads from
//! kube-state-metrics in a Prometheus-compatible API, collects their usage over the
//! history window (ending now or at `--end`), analyzes them under a preset or a policy
//! file and prints, per container, current → recommended requests and limits with the
//! confidence and the reason. The collection, the analysis and the summary are the
//! hub's own (`datasource`, `runs::analyze`), so a scan and a hub run on the same data
//! and policy give the same figures.
//!
//! Exit codes: 0 with results, 2 on bad input, 1 when the Prometheus cannot be used
//! (unreachable, refused credentials, no kube-state-metrics), each with its reason.

mod args;
mod render;
mod rows;

pub use args::ScanArgs;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Instant;

use crate::analysis::Policy;
use crate::datasource::{ClusterScope, CollectStats, Collection, DatasourceError, Source, Window};
use crate::policy::PolicySet;
use crate::runs::analyze::{analyze_chunk, ChunkContext};
use crate::runs::engine::CHUNK_WORKLOADS;
use crate::runs::workload::group;

use super::Exit;
use rows::Row;

/// A validated scan.
pub struct Scan {
    pub source: crate::datasource::PrometheusSource,
    pub url: String,
    pub scope: ClusterScope,
    pub window: Window,
    pub policy: Policy,
    /// Named preset or policy file, for the report.
    pub policy_name: String,
    pub namespaces: Vec<String>,
    pub excluded: Vec<String>,
    pub prices: (f64, f64),
    pub format: render::Format,
    pub progress: bool,
    pub color: bool,
}

/// What a scan found.
pub struct Found {
    pub rows: Vec<Row>,
    pub stats: CollectStats,
    /// Namespaces left out by the exclusion, with their workloads.
    pub excluded: Vec<(String, usize)>,
    pub seconds: f64,
}

/// `kerf scan`.
pub fn scan(args: &ScanArgs) -> Result<(), Exit> {
    let scan = args.validated(std::io::stdout().is_terminal())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(Exit::runtime)?;
    let found = runtime.block_on(collect(&scan))?;
    let text = render::render(&scan, &found);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Exit::runtime(format!("cannot write output: {e}")))
}

fn unusable(url: &str, e: DatasourceError) -> Exit {
    Exit::runtime(format!("cannot use the Prometheus at {url}: {e}"))
}

/// Progress on stderr: rewritten in place on a terminal, one line per step otherwise.
struct Progress {
    on: bool,
    tty: bool,
}

impl Progress {
    fn say(&self, line: &str) {
        if !self.on {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = if self.tty {
            write!(err, "\r\x1b[2K{line}")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }

    fn done(&self) {
        if self.on && self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// Plans, collects group by group and analyzes: the rows, sorted.
pub async fn collect(scan: &Scan) -> Result<Found, Exit> {
    let started = Instant::now();
    let progress = Progress {
        on: scan.progress,
        tty: std::io::stderr().is_terminal(),
    };
    progress.say(&format!(
        "kerf scan: reading the inventory from {}",
        scan.url
    ));
    let mut plan = scan
        .source
        .plan(&scan.scope, scan.window)
        .await
        .map_err(|e| unusable(&scan.url, e))?;
    if !plan.pods.ksm_present {
        return Err(Exit::runtime(format!(
            "cannot use the Prometheus at {}: it has no kube-state-metrics series \
             (kube_pod_owner){}; kerf scan finds workloads there",
            scan.url,
            scan.scope
                .selector_label
                .as_ref()
                .map(|l| format!(
                    " with {l}={:?}",
                    scan.scope.selector_value.clone().unwrap_or_default()
                ))
                .unwrap_or_default()
        )));
    }
    let wanted = |ns: &str| scan.wants(ns);
    let mut excluded = Vec::new();
    for (ns, workloads) in plan.pods.workloads_by_namespace() {
        if !wanted(&ns) && scan.is_excluded(&ns) {
            excluded.push((ns, workloads.values().filter(|w| w.alive).count()));
        }
    }
    plan.groups.retain_mut(|g| {
        g.namespaces.retain(|n| wanted(n));
        !g.namespaces.is_empty()
    });
    let total: usize = plan.groups.iter().map(|g| g.workloads).sum();
    let ctx = ChunkContext {
        run_id: "scan".into(),
        now_ms: scan.window.end_ms,
        window: scan.window,
        policies: PolicySet {
            default_analysis: serde_json::to_value(&scan.policy).map_err(Exit::runtime)?,
            ..PolicySet::default()
        },
        prices: scan.prices,
    };
    let ctx = Arc::new(ctx);
    let mut rows = Vec::new();
    let mut stats = plan.stats.clone();
    for index in 0..plan.groups.len() {
        let g = &plan.groups[index];
        progress.say(&format!(
            "kerf scan: group {}/{} ({}): {} of {total} workloads analyzed",
            index + 1,
            plan.groups.len(),
            g.namespaces.join(", "),
            rows.len()
        ));
        // Streamed as a run streams it: each piece (a workload with remote read, the
        // group with query_range) is analyzed as it arrives, so a scan holds a window of
        // workloads, never a group.
        let (sink, mut pieces) = tokio::sync::mpsc::channel::<Collection>(1);
        let plan = &plan;
        let collect = async move {
            let out = scan.source.stream_group(plan, index, &sink).await;
            drop(sink);
            out
        };
        let analyze = async {
            let mut got = Vec::new();
            while let Some(piece) = pieces.recv().await {
                got.extend(analyze_piece(scan, &ctx, piece).await?);
            }
            Ok::<_, Exit>(got)
        };
        let (streamed, analyzed) = tokio::join!(collect, analyze);
        stats.add(&streamed.map_err(|e| unusable(&scan.url, e))?);
        rows.extend(analyzed?);
    }
    progress.done();
    rows.sort_by_cached_key(|r| r.key());
    Ok(Found {
        rows,
        stats,
        excluded,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Analyzes one streamed piece in chunks on the blocking pool.
async fn analyze_piece(
    scan: &Scan,
    ctx: &Arc<ChunkContext>,
    piece: Collection,
) -> Result<Vec<Row>, Exit> {
    let mut groups = group(&scan.scope.cluster, piece);
    groups.retain(|w| scan.wants(&w.info.namespace));
    let mut out = Vec::new();
    while !groups.is_empty() {
        let rest = groups.split_off(groups.len().min(CHUNK_WORKLOADS));
        let chunk = std::mem::replace(&mut groups, rest);
        let infos: Vec<_> = chunk.iter().map(|w| w.info.clone()).collect();
        let c = ctx.clone();
        let outcome = tokio::task::spawn_blocking(move || analyze_chunk(chunk, &c))
            .await
            .map_err(Exit::runtime)?;
        out.extend(rows::rows(outcome, &infos));
    }
    Ok(out)
}

impl Scan {
    /// True when the scan covers namespace `ns`.
    pub fn wants(&self, ns: &str) -> bool {
        let glob = crate::policy::glob::glob_match;
        !self.is_excluded(ns)
            && (self.namespaces.is_empty() || self.namespaces.iter().any(|p| glob(p, ns)))
    }

    /// True when `ns` is left out by the exclusion (not named by `--namespace`).
    pub fn is_excluded(&self, ns: &str) -> bool {
        let glob = crate::policy::glob::glob_match;
        let named = self.namespaces.iter().any(|p| p == ns);
        !named && self.excluded.iter().any(|p| glob(p, ns))
    }
}

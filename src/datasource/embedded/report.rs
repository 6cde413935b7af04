//! What `POST /v1/datasources/{id}/test` (and a cluster's page) says of the embedded
//! datasource: what the usage store holds for the cluster — its series against the
//! limit, how recent its newest sample is, how much history it has — and which of the
//! metrics kerf needs no writer has sent.

use super::selection::Selection;
use super::{EmbeddedSource, PROTOCOL};
use crate::clock::Clock as _;
use crate::datasource::raw::metric;
use crate::datasource::{ClusterScope, DatasourceError, TestReport};
use crate::store::usage::UsageStats;

pub(super) async fn test(
    src: &EmbeddedSource,
    scope: &ClusterScope,
) -> Result<TestReport, DatasourceError> {
    src.check_scope(scope)?;
    // How old the newest sample is: the real present.
    let now = crate::clock::SystemClock.now_ms();
    let (cluster, sel) = (
        src.cluster.clone(),
        Selection::new(&src.cluster, scope, &[]),
    );
    let (stats, missing) = src
        .read(move |r| {
            let stats = r.stats(&cluster)?;
            let mut missing = Vec::new();
            for m in metric::REQUIRED {
                if r.series(&sel.query(&[*m]))?.is_empty() {
                    missing.push(m.to_string());
                }
            }
            Ok((stats, missing))
        })
        .await?;
    let message = message(&src.cluster, &stats, &missing, now);
    Ok(TestReport {
        reachable: true,
        authenticated: true,
        missing_metrics: missing,
        remote_read: None,
        protocol: Some(PROTOCOL.into()),
        message,
    })
}

/// The report's sentence.
fn message(cluster: &str, stats: &UsageStats, missing: &[String], now: i64) -> String {
    let (Some(oldest), Some(newest)) = (stats.oldest_ms, stats.newest_ms) else {
        return format!(
            "the usage store holds nothing for cluster {cluster} yet: no agent or remote \
             writer has sent samples to /v1/clusters/{cluster}/write; usage read with {PROTOCOL}"
        );
    };
    let mut text = format!(
        "the usage store holds {} series of cluster {cluster} (limit {}), {} samples; \
         newest sample {} ago; {} of history",
        stats.series,
        stats.series_limit,
        stats.samples,
        span(now - newest),
        span(newest - oldest),
    );
    let refused: u64 = stats.refused_by_reason.values().sum();
    if refused > 0 {
        text.push_str(&format!("; {refused} series refused"));
    }
    if missing.is_empty() {
        text.push_str("; every metric kerf needs is present");
    } else {
        text.push_str(&format!("; missing: {}", missing.join(", ")));
    }
    text.push_str(&format!("; usage read with {PROTOCOL}"));
    text
}

/// A duration as people read it: seconds, minutes, hours or days.
fn span(ms: i64) -> String {
    let s = ms.max(0) as f64 / 1000.0;
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7_200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3_600.0),
        s => format!("{:.1} days", s / 86_400.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_says_how_recent_and_how_long_the_history_is() {
        let stats = UsageStats {
            series: 12,
            series_limit: 50_000,
            samples: 3_456,
            oldest_ms: Some(0),
            newest_ms: Some(3 * 86_400_000),
            ..UsageStats::default()
        };
        let text = message("east", &stats, &[], 3 * 86_400_000 + 42_000);
        assert!(text.contains("12 series"), "{text}");
        assert!(text.contains("newest sample 42 s ago"), "{text}");
        assert!(text.contains("3.0 days of history"), "{text}");
        assert!(text.contains("every metric kerf needs"), "{text}");
        let empty = message("east", &UsageStats::default(), &[], 0);
        assert!(empty.contains("/v1/clusters/east/write"), "{empty}");
        assert_eq!(span(90 * 60_000), "90 min");
    }
}

//! Workload lists at fleet scale: 10,000 workloads walked page by page in every sort
//! order see each workload exactly once, and a page is served from the indexes.

use std::time::Instant;

use super::*;
use crate::store::recommendations::{write_chunk, ChunkWrite, NewRecommendation};

fn seed(conn: &mut Connection, n: usize) {
    let mut chunk = ChunkWrite {
        run_id: "run-1".into(),
        now_ms: 1,
        ..Default::default()
    };
    for i in 0..n {
        let seen = WorkloadSeen {
            id: format!("wl-{i:06}"),
            cluster: format!("c{}", i % 3),
            namespace: format!("ns{}", i % 40),
            kind: "Deployment".into(),
            name: format!("svc-{}", i % 997),
            uid: String::new(),
            replicas: Some(2),
            labels: "{}".into(),
            current: "[]".into(),
        };
        let delta = if i % 4 == 0 {
            None
        } else {
            Some((i % 50) as f64 - 30.0)
        };
        let rec = NewRecommendation {
            id: format!("rec-{i}"),
            workload_id: seen.id.clone(),
            run_id: "run-1".into(),
            created_at: 1,
            policy_version: "v2:x".into(),
            settings_identity: "s1:x".into(),
            cost_delta: delta,
            summary: "{}".into(),
            analysis: "{}".into(),
            has_changes: i % 2 == 0,
            data_quality: "available".into(),
            notices: if i % 10 == 0 {
                ",potential-memory-leak,".into()
            } else {
                String::new()
            },
            confidence: (i % 96) as i64,
        };
        chunk.analyzed.push((seen, rec));
    }
    write_chunk(conn, &chunk).expect("seed");
}

fn walk(
    conn: &Connection,
    sort: WorkloadSort,
    descending: bool,
    notice: Option<&str>,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut after: Option<(SortValue, String)> = None;
    loop {
        let f = WorkloadFilter {
            notice: notice.map(str::to_string),
            sort,
            descending,
            after: after.clone(),
            limit: 500,
            ..Default::default()
        };
        let (page, more) = list_workloads(conn, &f).expect("page");
        seen.extend(page.iter().map(|w| w.seen.id.clone()));
        if !more {
            return seen;
        }
        let last = page.last().expect("non-empty page");
        let key = match sort {
            WorkloadSort::Name => SortValue::Text(last.seen.name.clone()),
            WorkloadSort::Savings => SortValue::Real(last.monthly_savings),
            WorkloadSort::Confidence => SortValue::Integer(last.confidence),
        };
        after = Some((key, last.seen.id.clone()));
    }
}

#[test]
fn ten_thousand_workloads_walk_once_each_in_every_sort_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kerf.db");
    let mut conn = Connection::open(&path).expect("open");
    crate::store::migrate::run(&mut conn, &path, 0).expect("migrate");
    seed(&mut conn, 10_000);
    for sort in [
        WorkloadSort::Name,
        WorkloadSort::Savings,
        WorkloadSort::Confidence,
    ] {
        for descending in [false, true] {
            let started = Instant::now();
            let ids = walk(&conn, sort, descending, None);
            let mut unique = ids.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(
                (ids.len(), unique.len()),
                (10_000, 10_000),
                "{sort:?} {descending}"
            );
            eprintln!(
                "{sort:?} desc={descending}: 20 pages in {:?}",
                started.elapsed()
            );
        }
    }
    assert_eq!(
        walk(
            &conn,
            WorkloadSort::Savings,
            true,
            Some("potential-memory-leak")
        )
        .len(),
        1_000
    );
    let plan: String = conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT id FROM workloads w ORDER BY w.monthly_savings DESC, w.id DESC LIMIT 101",
            [],
            |r| r.get(3),
        )
        .expect("plan");
    assert!(plan.contains("workloads_savings"), "{plan}");
}

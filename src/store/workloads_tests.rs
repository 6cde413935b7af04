//! Workload lists at fleet scale: 10,000 workloads walked page by page in every sort
//! order see each workload exactly once, and a page is served from the indexes.

use std::time::Instant;

use rusqlite::Connection;

use super::*;
use crate::store::recommendations::{ChunkWrite, NewRecommendation};
use crate::store::workload_totals::{GroupBy, WorkloadTotals};
use crate::store::{NamespacePattern, Tx, WorkloadSeen};

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
            risk: (i % 4) as i64,
            change_tolerance: 0.05,
        };
        chunk.analyzed.push((seen, rec));
    }
    let tx = conn.transaction().expect("begin");
    Tx::new(&tx).write_chunk(&chunk).expect("seed");
    tx.commit().expect("commit");
}

fn walk(
    conn: &Connection,
    sort: WorkloadSort,
    descending: bool,
    notice: Option<&str>,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut after: Option<Position> = None;
    loop {
        let f = WorkloadFilter {
            notice: notice.map(str::to_string),
            sort,
            descending,
            after: after.clone(),
            limit: 500,
            ..Default::default()
        };
        let page = Read(conn).list_workload_page(&f).expect("page");
        seen.extend(page.items.iter().map(|w| w.row.seen.id.clone()));
        let Some(next) = page.next else {
            return seen;
        };
        let last = page.items.last().expect("non-empty page");
        assert_eq!(
            next,
            Position {
                keys: last.keys.clone(),
                id: last.row.seen.id.clone(),
            }
        );
        after = Some(next);
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
        WorkloadSort::Impact,
        WorkloadSort::Risk,
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
    for (order, index) in [
        ("abs(w.monthly_savings) DESC, w.id DESC", "workloads_impact"),
        (
            "w.risk DESC, -w.monthly_savings DESC, w.id DESC",
            "workloads_risk",
        ),
    ] {
        let plan: String = conn
            .query_row(
                &format!(
                    "EXPLAIN QUERY PLAN SELECT id FROM workloads w ORDER BY {order} LIMIT 101"
                ),
                [],
                |r| r.get(3),
            )
            .expect("plan");
        assert!(plan.contains(index), "{order}: {plan}");
    }
}

fn seeded(n: usize) -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kerf.db");
    let mut conn = Connection::open(&path).expect("open");
    crate::store::migrate::run(&mut conn, &path, 0).expect("migrate");
    seed(&mut conn, n);
    (dir, conn)
}

fn all(conn: &Connection, f: WorkloadFilter) -> Vec<WorkloadRow> {
    Read(conn)
        .list_workloads(&WorkloadFilter { limit: 10_000, ..f })
        .expect("list")
        .items
}

#[test]
fn savings_order_every_workload_by_its_signed_saving_and_impact_by_its_size() {
    let (_dir, conn) = seeded(200);
    let saving = |w: &WorkloadRow| -w.cost_delta.unwrap_or(0.0);
    let by_savings = all(
        &conn,
        WorkloadFilter {
            sort: WorkloadSort::Savings,
            descending: true,
            ..Default::default()
        },
    );
    assert_eq!(by_savings.len(), 200);
    assert!(by_savings
        .windows(2)
        .all(|p| saving(&p[0]) >= saving(&p[1])));
    assert!(
        saving(&by_savings[0]) > 0.0 && saving(&by_savings[199]) < 0.0,
        "both ends ordered"
    );
    let by_impact = all(
        &conn,
        WorkloadFilter {
            sort: WorkloadSort::Impact,
            descending: true,
            ..Default::default()
        },
    );
    assert!(by_impact
        .windows(2)
        .all(|p| saving(&p[0]).abs() >= saving(&p[1]).abs()));
    let by_risk = all(
        &conn,
        WorkloadFilter {
            sort: WorkloadSort::Risk,
            descending: true,
            ..Default::default()
        },
    );
    assert!(
        by_risk
            .windows(2)
            .all(|p| p[0].risk > p[1].risk
                || (p[0].risk == p[1].risk && saving(&p[0]) <= saving(&p[1]))),
        "risk first, then the biggest extra spend"
    );
    let risky = all(
        &conn,
        WorkloadFilter {
            risky: Some(true),
            ..Default::default()
        },
    );
    assert_eq!(risky.len(), 150);
}

#[test]
fn names_match_by_prefix_and_by_glob() {
    let (_dir, conn) = seeded(200);
    let namespaces = |m: NameMatch| {
        let mut n: Vec<String> = all(
            &conn,
            WorkloadFilter {
                namespace: Some(m),
                ..Default::default()
            },
        )
        .into_iter()
        .map(|w| w.seen.namespace)
        .collect();
        n.sort();
        n.dedup();
        n
    };
    assert_eq!(
        namespaces(NameMatch::typed("ns3")),
        ["ns3", "ns30", "ns31", "ns32", "ns33", "ns34", "ns35", "ns36", "ns37", "ns38", "ns39"]
    );
    assert_eq!(namespaces(NameMatch::typed("ns?")).len(), 10);
    assert_eq!(
        namespaces(NameMatch::typed("*9")),
        ["ns19", "ns29", "ns39", "ns9"]
    );
    assert_eq!(namespaces(NameMatch::Exact("ns3".into())), ["ns3"]);
    assert!(
        namespaces(NameMatch::typed("ns[")).is_empty(),
        "a bracket is a plain character"
    );
    let names = all(
        &conn,
        WorkloadFilter {
            name: Some(NameMatch::typed("svc-1?")),
            ..Default::default()
        },
    );
    assert!(names
        .iter()
        .all(|w| w.seen.name.len() == 6 && w.seen.name.starts_with("svc-1")));
    assert_eq!(names.len(), 10);
}

#[test]
fn totals_group_by_cluster_namespace_label_and_team_and_add_up() {
    let (_dir, conn) = seeded(120);
    let f = WorkloadFilter::default();
    let whole = Read(&conn)
        .workload_totals(&f, &GroupBy::Nothing, 0)
        .expect("totals");
    assert_eq!(whole.len(), 1);
    let t = &whole[0];
    assert_eq!(
        (t.workloads, t.with_changes, t.available, t.risky),
        (120, 60, 120, 90)
    );
    assert_eq!(t.notices, [0, 12, 0]);
    assert_eq!(t.without_estimate, 30);
    let clusters = Read(&conn)
        .workload_totals(&f, &GroupBy::Cluster, 0)
        .expect("by cluster");
    assert_eq!(
        clusters
            .iter()
            .map(|c| c.key[0].1.clone().unwrap())
            .collect::<Vec<_>>(),
        ["c0", "c1", "c2"]
    );
    assert_eq!(clusters.iter().map(|c| c.workloads).sum::<i64>(), 120);
    let sum = |ts: &[WorkloadTotals]| ts.iter().map(|c| c.savings - c.extra_spend).sum::<f64>();
    assert!((sum(&clusters) - (t.savings - t.extra_spend)).abs() < 1e-9);
    let namespaces = Read(&conn)
        .workload_totals(&f, &GroupBy::Namespace, 0)
        .expect("by namespace");
    assert_eq!(
        namespaces.len(),
        120,
        "40 namespaces × 3 clusters, one workload each"
    );
    let labels = Read(&conn)
        .workload_totals(&f, &GroupBy::Label("team".into()), 0)
        .expect("by label");
    assert_eq!(
        (labels.len(), labels[0].key[0].1.clone()),
        (1, None),
        "no workload has the label"
    );
    let pattern = |c: &str, n: &str| NamespacePattern {
        cluster: c.into(),
        namespace: n.into(),
    };
    let teams = GroupBy::Team(vec![
        ("red".into(), vec![pattern("c0", "*")]),
        (
            "blue".into(),
            vec![pattern("*", "ns1"), pattern("c0", "ns2")],
        ),
    ]);
    let by_team = Read(&conn).workload_totals(&f, &teams, 0).expect("by team");
    let counts: Vec<(Option<String>, i64)> = by_team
        .iter()
        .map(|t| (t.key[0].1.clone(), t.workloads))
        .collect();
    // Blue's c0/ns1 is red's too: 120 − (40 + c1/ns1 + c2/ns1) are in no team.
    assert_eq!(
        counts,
        [
            (Some("red".into()), 40),
            (Some("blue".into()), 4),
            (None, 78)
        ]
    );
}

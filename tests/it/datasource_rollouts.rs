//! An Argo Rollout through a real Prometheus (issue 31, done means 2): its pods belong to
//! ReplicaSets that `kube_replicaset_owner` gives to the Rollout, so across three
//! revisions it stays one workload (kind `Rollout`), the newest revision its current
//! release and the two before it previous releases, where it used to be a bare
//! ReplicaSet per revision, each starting with no history. Its desired replicas come from
//! Argo's controller (`rollout_info_replicas_desired`).

use kerf::datasource::prometheus::ClientAuth;
use kerf::datasource::Source;

use crate::support::prometheus::{OpenMetrics, Prometheus};
use crate::support::series::{
    cadvisor, each, ksm_pod, pod, scope, source, END, MIB, MIN, START, WINDOW,
};

const REVISIONS: [&str; 3] = ["checkout-6b9f7c", "checkout-7d4c2a", "checkout-8e1b5f"];

fn three_revisions() -> OpenMetrics {
    let mut om = OpenMetrics::new();
    for rs in REVISIONS {
        let l = [
            ("cluster", "argo"),
            ("namespace", "shop"),
            ("replicaset", rs),
            ("owner_kind", "Rollout"),
            ("owner_name", "checkout"),
        ];
        for t in each(START - 60 * MIN, END + 1) {
            om.sample("kube_replicaset_owner", &l, 1.0, t);
        }
    }
    // Argo's controller, scraped too, says how many replicas the Rollout wants.
    let desired = [
        ("cluster", "argo"),
        ("namespace", "shop"),
        ("name", "checkout"),
    ];
    for t in each(START - 60 * MIN, END + 1) {
        om.sample("rollout_info_replicas_desired", &desired, 1.0, t);
    }
    // Each revision runs two hours, the last one to the end (a canary step each time).
    for (i, rs) in REVISIONS.iter().enumerate() {
        let from = START + i as i64 * 120 * MIN;
        let to = if i == 2 { END } else { from + 120 * MIN };
        let p = pod("argo", "shop", rs, "x1", from, to);
        ksm_pod(&mut om, &p, "checkout", 0.5, 512.0 * MIB);
        cadvisor(&mut om, &p, rs, from, to, 0.1, 200.0 * MIB, None);
        let created = [
            ("cluster", "argo"),
            ("namespace", "shop"),
            ("replicaset", *rs),
        ];
        for t in each(from, END + 1) {
            om.sample("kube_replicaset_created", &created, (from / 1000) as f64, t);
        }
    }
    om
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argo_rollout_stays_one_workload_across_three_revisions() {
    let prom = Prometheus::with_data(&three_revisions(), false);
    let collected = source(&prom.url, ClientAuth::None)
        .collect(&scope("argo"), WINDOW)
        .await
        .expect("collect");
    let names: Vec<(String, String)> = collected
        .workloads
        .iter()
        .map(|w| (w.kind.clone(), w.name.clone()))
        .collect();
    assert_eq!(names, [("Rollout".to_string(), "checkout".to_string())]);
    let app = collected
        .input
        .containers
        .iter()
        .find(|c| c.target.container == "app")
        .expect("the app container");
    assert_eq!(app.target.kind, "Rollout");
    assert_eq!(
        app.target.release, REVISIONS[2],
        "the newest revision is current"
    );
    assert_eq!(
        app.identity.release_started_at,
        START + 240 * MIN,
        "its ReplicaSet's creation starts the release"
    );
    let previous: Vec<&str> = app
        .previous_releases
        .iter()
        .map(|p| p.release.as_str())
        .collect();
    assert_eq!(
        previous,
        [REVISIONS[1], REVISIONS[0]],
        "the earlier revisions are its history, newest first"
    );
    assert_eq!(app.cpu.current_request.value, 500.0);
    // The replicas come from Argo's controller: the inventory is whole, so the engine
    // may shrink it.
    assert!(app.inventory.available);
    assert_eq!((app.inventory.eligible, app.inventory.observed), (1, 1));
    assert_eq!(collected.workloads[0].replicas, Some(1));
}

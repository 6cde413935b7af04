use super::*;
use crate::analysis::Sample;
use crate::datasource::raw::{Labels, RawInventory, RawSeries};

fn series(pairs: &[(&str, &str)]) -> RawSeries {
    let labels: Labels = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RawSeries {
        labels,
        samples: vec![Sample {
            timestamp: 1_000,
            value: 1.0,
        }],
    }
}

/// `(namespace, workload, pods)` as StatefulSets (no ReplicaSet indirection).
fn index(workloads: &[(&str, &str, usize)]) -> PodIndex {
    let mut inv = RawInventory::default();
    for (ns, name, pods) in workloads {
        for p in 0..*pods {
            let pod = format!("{name}-{p}");
            let uid = format!("{ns}-{pod}");
            let labels = [
                ("namespace", *ns),
                ("pod", pod.as_str()),
                ("uid", uid.as_str()),
                ("owner_kind", "StatefulSet"),
                ("owner_name", *name),
            ];
            inv.pod_owner.push(series(&labels));
            inv.pod_alive.push(series(&labels));
        }
    }
    PodIndex::build(&inv)
}

#[test]
fn namespaces_are_packed_under_the_budget_and_big_ones_split_by_workload() {
    let pods = index(&[
        ("a", "one", 2),
        ("a", "two", 1),
        ("b", "three", 2),
        ("c", "four", 3),
        ("c", "five", 3),
        ("c", "six", 1),
        ("d", "huge", 9),
    ]);
    let groups = plan_groups(&pods, 5);
    let shape: Vec<(Vec<&str>, usize, usize, usize)> = groups
        .iter()
        .map(|g| {
            let ns = g.namespaces.iter().map(String::as_str).collect();
            (ns, g.pods.len(), g.pod_count, g.workloads)
        })
        .collect();
    assert_eq!(
        shape,
        // Split namespaces come as they are met; packed ones when full or at the end.
        vec![
            (vec!["c"], 3, 3, 1),
            (vec!["c"], 4, 4, 2),
            (vec!["d"], 9, 9, 1),
            (vec!["a", "b"], 0, 5, 3),
        ]
    );
    // A workload's pods are never in two groups.
    assert_eq!(groups[0].pods, vec!["five-0", "five-1", "five-2"]);
    assert!(groups[1].pods.contains(&"four-0".to_string()));
    assert!(groups[1].pods.contains(&"six-0".to_string()));
    let total: usize = groups.iter().map(|g| g.workloads).sum();
    assert_eq!(total, 7);
}

#[test]
fn without_kube_state_metrics_everything_is_one_group() {
    let groups = plan_groups(&PodIndex::build(&RawInventory::default()), 5);
    assert_eq!(groups, vec![Group::default()]);
}

#[test]
fn the_pod_budget_follows_the_points_per_series() {
    let week = Window {
        end_ms: 7 * 86_400_000,
        start_ms: 0,
        step_seconds: 60,
    };
    // 10,000 points per request × 2 series per pod: 25 pods hold 500 k samples.
    assert_eq!(group_pods(week, Budget::default()), 25);
    let hour = Window {
        end_ms: 3_600_000,
        ..week
    };
    assert_eq!(group_pods(hour, Budget::default()), 400);
    let few_series = Budget {
        series_per_request: 100,
        ..Budget::default()
    };
    assert_eq!(group_pods(hour, few_series), 50);
    let tiny = Budget {
        samples_per_request: 1,
        series_per_request: 1,
    };
    assert_eq!(group_pods(week, tiny), 16);
}

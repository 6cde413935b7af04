//! The kube-state-metrics series of a hand-built snapshot: names, labels and values as
//! the hub's datasource mapping reads them.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::cluster::{
    Container, ContainerStatus, HpaMetric, PodPhase, PodRef, ResizeState, Resources, Termination,
    UpdateStrategy, WorkloadKey,
};

const AT: i64 = 1_700_000_300_000;
const MIB: u64 = 1 << 20;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn workload(kind: WorkloadKind, name: &str, replicas: i32, pairs: &[(&str, &str)]) -> Workload {
    Workload {
        key: WorkloadKey::new("shop", kind, name),
        uid: format!("w-{name}"),
        generation: 1,
        observed_generation: Some(1),
        replicas,
        ready_replicas: replicas,
        strategy: UpdateStrategy::OnDelete,
        labels: labels(pairs),
        annotations: BTreeMap::new(),
        selector: BTreeMap::new(),
        containers: Vec::new(),
        resource_owners: Vec::new(),
        node_selector: Default::default(),
        rollout: Default::default(),
        update_revision: None,
        created_ms: Some(1_700_000_000_500),
    }
}

fn pod(name: &str, uid: &str, controller: Option<OwnerRef>, pairs: &[(&str, &str)]) -> Pod {
    Pod {
        pod: PodRef::new("shop", name),
        uid: uid.into(),
        owner: None,
        controller,
        node: Some("n1".into()),
        phase: PodPhase::Running,
        ready: true,
        qos: None,
        generation: 1,
        observed_generation: Some(1),
        labels: labels(pairs),
        revision: None,
        containers: Vec::new(),
        statuses: Vec::new(),
        resize: ResizeState::Settled,
        created_ms: None,
        deleting: false,
        unschedulable: None,
    }
}

fn snapshot() -> Snapshot {
    let mut api = pod(
        "api-7f9-xyz",
        "u1",
        Some(OwnerRef::new("ReplicaSet", "api-7f9")),
        &[("app", "api"), ("pod-template-hash", "7f9")],
    );
    api.created_ms = Some(1_700_000_150_250);
    api.containers = vec![Container {
        name: "app".into(),
        resources: Resources {
            cpu_request: Some(250),
            memory_request: Some(256 * MIB),
            memory_limit: Some(512 * MIB),
            cpu_limit: None,
        },
        ..Container::default()
    }];
    api.statuses = vec![ContainerStatus {
        name: "app".into(),
        ready: true,
        restart_count: 2,
        resources: None,
        allocated: None,
        last_termination: Some(Termination {
            reason: "OOMKilled".into(),
            exit_code: 137,
            finished_at_ms: Some(1_700_000_200_999),
        }),
    }];
    let db = pod(
        "db-0",
        "u2",
        Some(OwnerRef::new("StatefulSet", "db")),
        &[("controller-revision-hash", "db-5c")],
    );
    let mut bare = pod("debug", "u3", None, &[]);
    bare.node = None;
    Snapshot {
        workloads: vec![
            workload(
                WorkloadKind::Deployment,
                "api",
                3,
                &[("app", "api"), ("app.kubernetes.io/managedBy", "helm")],
            ),
            workload(WorkloadKind::StatefulSet, "db", 2, &[]),
            workload(WorkloadKind::DaemonSet, "agent", 4, &[]),
        ]
        .into_iter()
        .map(Arc::new)
        .collect(),
        pods: [api, db, bare].into_iter().map(Arc::new).collect(),
        replica_sets: vec![ReplicaSet {
            namespace: "shop".into(),
            name: "api-7f9".into(),
            controller: Some(OwnerRef::new("Deployment", "api")),
            created_ms: Some(1_700_000_100_000),
            failure: None,
        }],
        hpas: vec![Hpa {
            namespace: "shop".into(),
            name: "api".into(),
            target: Some(WorkloadKey::new("shop", WorkloadKind::Deployment, "api")),
            min_replicas: 2,
            max_replicas: 10,
            metrics: vec![
                HpaMetric {
                    kind: "Resource".into(),
                    resource: Some("cpu".into()),
                    container: None,
                    target_utilization: Some(70),
                },
                HpaMetric {
                    kind: "Pods".into(),
                    resource: None,
                    container: None,
                    target_utilization: None,
                },
            ],
            metric_managers: Vec::new(),
            controller: None,
        }],
        ..Snapshot::default()
    }
}

/// A series as a map of its labels (`__name__` included).
fn labels_of(s: &TimeSeries) -> BTreeMap<&str, &str> {
    s.labels
        .iter()
        .map(|l| (l.name.as_str(), l.value.as_str()))
        .collect()
}

/// The series named `name` that carry `pairs`.
fn matching<'a>(all: &'a [TimeSeries], name: &str, pairs: &[(&str, &str)]) -> Vec<&'a TimeSeries> {
    all.iter()
        .filter(|s| {
            let l = labels_of(s);
            l.get("__name__") == Some(&name) && pairs.iter().all(|(k, v)| l.get(k) == Some(v))
        })
        .collect()
}

/// The value of the one series named `name` that carries `pairs`.
fn value(all: &[TimeSeries], name: &str, pairs: &[(&str, &str)]) -> f64 {
    match matching(all, name, pairs)[..] {
        [s] => s.samples[0].value,
        ref found => panic!("{} series {name} {pairs:?}: {found:?}", found.len()),
    }
}

#[test]
fn pods_carry_their_owner_creation_labels_and_containers_as_kube_state_metrics_writes_them() {
    let all = series(&snapshot(), AT);
    assert!(all
        .iter()
        .all(|s| s.samples.len() == 1 && s.samples[0].timestamp == AT));
    assert!(all
        .iter()
        .all(|s| s.labels.windows(2).all(|w| w[0].name < w[1].name)));
    let u1 = ("uid", "u1");
    let owner = [
        u1,
        ("namespace", "shop"),
        ("pod", "api-7f9-xyz"),
        ("owner_kind", "ReplicaSet"),
        ("owner_name", "api-7f9"),
        ("owner_is_controller", "true"),
    ];
    assert_eq!(value(&all, "kube_pod_owner", &owner), 1.0);
    let none = [
        ("uid", "u3"),
        ("owner_kind", "<none>"),
        ("owner_name", "<none>"),
    ];
    assert_eq!(value(&all, "kube_pod_owner", &none), 1.0);
    assert_eq!(value(&all, "kube_pod_created", &[u1]), 1_700_000_150.0);
    assert!(matching(&all, "kube_pod_created", &[("uid", "u3")]).is_empty());
    let revision = [("uid", "u2"), ("label_controller_revision_hash", "db-5c")];
    assert_eq!(value(&all, "kube_pod_labels", &revision), 1.0);
    let template = [u1, ("label_app", "api"), ("label_pod_template_hash", "7f9")];
    assert_eq!(value(&all, "kube_pod_labels", &template), 1.0);

    let setting = |name: &str, resource: &str, unit: &str| {
        let pairs = [
            u1,
            ("container", "app"),
            ("node", "n1"),
            ("resource", resource),
            ("unit", unit),
        ];
        value(&all, name, &pairs)
    };
    let (requests, limits) = (
        "kube_pod_container_resource_requests",
        "kube_pod_container_resource_limits",
    );
    assert_eq!(setting(requests, "cpu", "core"), 0.25);
    assert_eq!(setting(requests, "memory", "byte"), (256 * MIB) as f64);
    assert_eq!(setting(limits, "memory", "byte"), (512 * MIB) as f64);
    assert!(
        matching(&all, limits, &[("resource", "cpu")]).is_empty(),
        "no CPU limit set"
    );

    let app = [u1, ("container", "app")];
    assert_eq!(
        value(&all, "kube_pod_container_status_restarts_total", &app),
        2.0
    );
    let oom = [u1, ("container", "app"), ("reason", "OOMKilled")];
    assert_eq!(
        value(
            &all,
            "kube_pod_container_status_last_terminated_reason",
            &oom
        ),
        1.0
    );
    assert_eq!(
        value(
            &all,
            "kube_pod_container_status_last_terminated_timestamp",
            &app
        ),
        1_700_000_200.0
    );
}

#[test]
fn workloads_replica_sets_and_hpas_are_written_as_kube_state_metrics_names_them() {
    let all = series(&snapshot(), AT);
    let api = [("namespace", "shop"), ("deployment", "api")];
    assert_eq!(
        value(&all, "kube_deployment_created", &api),
        1_700_000_000.0
    );
    assert_eq!(value(&all, "kube_deployment_spec_replicas", &api), 3.0);
    let api_labels = [
        ("deployment", "api"),
        ("label_app", "api"),
        ("label_app_kubernetes_io_managed_by", "helm"),
    ];
    assert_eq!(value(&all, "kube_deployment_labels", &api_labels), 1.0);
    assert_eq!(
        value(&all, "kube_statefulset_replicas", &[("statefulset", "db")]),
        2.0
    );
    assert_eq!(
        value(&all, "kube_statefulset_created", &[("statefulset", "db")]),
        1_700_000_000.0
    );
    let agent = [("daemonset", "agent")];
    assert_eq!(
        value(
            &all,
            "kube_daemonset_status_desired_number_scheduled",
            &agent
        ),
        4.0
    );
    assert_eq!(value(&all, "kube_daemonset_labels", &agent), 1.0);

    let rs = [
        ("namespace", "shop"),
        ("replicaset", "api-7f9"),
        ("owner_kind", "Deployment"),
        ("owner_name", "api"),
        ("owner_is_controller", "true"),
    ];
    assert_eq!(value(&all, "kube_replicaset_owner", &rs), 1.0);
    assert_eq!(
        value(
            &all,
            "kube_replicaset_created",
            &[("replicaset", "api-7f9")]
        ),
        1_700_000_100.0
    );

    let hpa = ("horizontalpodautoscaler", "api");
    let info = [
        hpa,
        ("scaletargetref_api_version", "apps/v1"),
        ("scaletargetref_kind", "Deployment"),
        ("scaletargetref_name", "api"),
    ];
    assert_eq!(value(&all, "kube_horizontalpodautoscaler_info", &info), 1.0);
    let target = [
        hpa,
        ("metric_name", "cpu"),
        ("metric_target_type", "utilization"),
    ];
    assert_eq!(
        value(
            &all,
            "kube_horizontalpodautoscaler_spec_target_metric",
            &target
        ),
        70.0
    );
    assert_eq!(
        matching(
            &all,
            "kube_horizontalpodautoscaler_spec_target_metric",
            &[hpa]
        )
        .len(),
        1,
        "a Pods metric has no utilization target to export"
    );
    let bounds = [
        ("kube_horizontalpodautoscaler_spec_min_replicas", 2.0),
        ("kube_horizontalpodautoscaler_spec_max_replicas", 10.0),
    ];
    for (name, want) in bounds {
        assert_eq!(value(&all, name, &[hpa]), want);
    }
}

#[test]
fn label_names_are_sanitized_snake_cased_and_collisions_numbered_as_kube_state_metrics_does() {
    let got = label_names(&labels(&[
        ("a.b", "1"),
        ("a/b", "2"),
        ("a_b", "3"),
        ("helm.sh/chart", "x-1"),
        ("topologyKey", "zone"),
    ]));
    let names: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        names,
        [
            ("label_a_b_conflict1", "1"),
            ("label_a_b_conflict2", "2"),
            ("label_a_b_conflict3", "3"),
            ("label_helm_sh_chart", "x-1"),
            ("label_topology_key", "zone"),
        ]
    );
}

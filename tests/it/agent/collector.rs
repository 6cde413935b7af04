//! The agent's collector over the in-process sim: at each interval of the agent's clock
//! it ships the scope's usage (containers and pods, at the kubelet's time) and the
//! watches' kube-state-metrics series through the hub's `write`, each sample once.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kerf::agent::collector::{Collector, Enabled, Settings};
use kerf::agent::{FeedPage, Hub, HubError};
use kerf::clock::ManualClock;
use kerf::cluster::{Cluster, Container, Node, NodeManagers, Resources};
use kerf::metrics::{CollectorMetrics, OutcomeLabels};
use kerf::sim::in_process::{DeploymentSpec, SimCluster};
use kerf::wire::remote_write::{decode, TimeSeries};
use kerf::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness, UsageSource};

use crate::support::eventually;

const T0: i64 = 1_800_000_000_000;

/// A hub that keeps every write it is sent (its feeds are away).
#[derive(Default)]
struct Keeper {
    series: Mutex<Vec<TimeSeries>>,
}

impl Hub for Keeper {
    async fn config(&self, _: Option<String>) -> Result<ConfigFeed, HubError> {
        Err(HubError::Unreachable("away".into()))
    }
    async fn recommendations(
        &self,
        _: Option<String>,
        _: Option<String>,
    ) -> Result<FeedPage, HubError> {
        Err(HubError::Unreachable("away".into()))
    }
    async fn heartbeat(&self, _: &Heartbeat) -> Result<Readiness, HubError> {
        Err(HubError::Unreachable("away".into()))
    }
    async fn send_events(&self, _: &[AgentEvent]) -> Result<(), HubError> {
        Ok(())
    }

    async fn report_policies(
        &self,
        _: &kerf::wire::cluster_policies::ClusterPolicies,
    ) -> Result<kerf::wire::cluster_policies::ClusterPolicyVerdicts, HubError> {
        Ok(Default::default())
    }
    async fn write(&self, body: Bytes) -> Result<(), HubError> {
        let request = decode(&body).expect("a remote-write body");
        self.series.lock().unwrap().extend(request.timeseries);
        Ok(())
    }
}

fn labels(s: &TimeSeries) -> BTreeMap<String, String> {
    s.labels
        .iter()
        .map(|l| (l.name.clone(), l.value.clone()))
        .collect()
}

fn world(clock: Arc<ManualClock>) -> SimCluster {
    let node = Node {
        name: "n1".into(),
        labels: BTreeMap::new(),
        ready: true,
        allocatable_cpu: 8000,
        allocatable_memory: 16 << 30,
        swap_bytes: 0,
        unschedulable: false,
        managers: NodeManagers::default(),
        daemon_endpoint: None,
    };
    let sim = SimCluster::new(3, clock, vec![node]);
    for ns in ["shop", "other"] {
        let spec = DeploymentSpec {
            namespace: ns.into(),
            name: "web".into(),
            replicas: 2,
            containers: vec![Container {
                name: "app".into(),
                image: "web:1".into(),
                resources: Resources {
                    cpu_request: Some(100),
                    memory_request: Some(64 << 20),
                    ..Resources::default()
                },
                ..Container::default()
            }],
            usage: BTreeMap::new(),
        };
        sim.create_deployment(spec, "test").expect("deployment");
    }
    sim
}

#[tokio::test(flavor = "multi_thread")]
async fn the_collector_ships_usage_at_the_kubelets_time_and_kube_state_once_per_interval() {
    let clock = Arc::new(ManualClock::new(T0));
    let sim = world(clock.clone());
    let hub = Arc::new(Keeper::default());
    let metrics = CollectorMetrics::default();
    let (_source, rx) = tokio::sync::watch::channel(UsageSource::Prometheus);
    let collector = Collector {
        view: Arc::new(sim.watch(&[]).await.expect("the sim's view")),
        cluster: Arc::new(sim),
        hub: hub.clone(),
        clock: clock.clone(),
        settings: Settings {
            enabled: Enabled::On,
            ..Settings::default()
        },
        namespaces: vec!["shop".into()],
        metrics: metrics.clone(),
        source: rx,
    };
    let task = tokio::spawn(collector.run());
    let taken = |at: i64| {
        let hub = hub.clone();
        async move {
            let all = hub.series.lock().unwrap().clone();
            let kube_state_at = all
                .iter()
                .filter(|s| s.samples[0].timestamp == at)
                .any(|s| labels(s)["__name__"] == "kube_pod_owner");
            kube_state_at.then_some(all)
        }
    };
    let first = eventually("the first collection", Duration::from_secs(10), || {
        taken(T0)
    })
    .await;
    let usage: Vec<&TimeSeries> = first
        .iter()
        .filter(|s| labels(s)["__name__"] == "container_cpu_usage_seconds_total")
        .collect();
    // Two pods of shop/web, each its container and its own cgroup; nothing of `other`
    // (the kubelet serves every pod of its node, the scope is the agent's).
    assert_eq!(usage.len(), 4, "{usage:?}");
    for s in &usage {
        let l = labels(s);
        assert_eq!(l["namespace"], "shop");
        assert!(l["id"].starts_with("/kubepods/pod"), "{l:?}");
    }
    // A pod's own cgroup: no `container` label (an empty value is no label).
    let own = usage
        .iter()
        .filter(|s| !labels(s).contains_key("container"));
    assert_eq!(own.count(), 2);
    let owners = first
        .iter()
        .filter(|s| labels(s)["__name__"] == "kube_pod_owner" && labels(s)["namespace"] == "shop");
    assert!(
        owners.clone().count() == 2
            && owners
                .clone()
                .all(|s| labels(s)["owner_kind"] == "ReplicaSet")
    );

    // The next interval of the agent's clock: everything again, newer, and the
    // kubelet's own time on the usage (the sim's now when scraped).
    clock.advance(30_000);
    let both = eventually("the second collection", Duration::from_secs(10), || {
        taken(T0 + 30_000)
    })
    .await;
    let seen: BTreeSet<(Vec<(String, String)>, i64)> = both
        .iter()
        .map(|s| {
            let l = labels(s).into_iter().collect();
            (l, s.samples[0].timestamp)
        })
        .collect();
    assert_eq!(seen.len(), both.len(), "no sample was sent twice");
    assert_eq!(both.len(), 2 * first.len());
    let later = both
        .iter()
        .filter(|s| labels(s)["__name__"] == "container_memory_working_set_bytes")
        .filter(|s| s.samples[0].timestamp == T0 + 30_000)
        .count();
    assert_eq!(later, 4);
    let ok = metrics
        .scrapes
        .get_or_create(&OutcomeLabels {
            outcome: "ok".into(),
        })
        .get();
    assert_eq!(ok, 2, "one node, two collections");
    task.abort();
}

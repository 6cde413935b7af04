//! One agent loop over 500 workloads against the real API server (the tests' control
//! plane, the sim kubelet playing the nodes), as the agent's identity with the shipped
//! RBAC, the hub in its own process: half the workloads in `auto-patch` (in place).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kerf::agent::{Agent, Options, Outbox};
use kerf::clock::SystemClock;
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Node, NodeManagers};
use kerf::sim::api_kubelet::ApiKubelet;
use kube::api::{Api, ListParams, PostParams};

use super::hub::{self, rss, Seeded};

#[path = "../../tests/it/support/kube/mod.rs"]
#[allow(dead_code)]
mod kube_support;

const WORKLOADS: usize = 500;

fn deployment(name: &str, cpu: u64, memory: u64) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": name },
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [{ "name": "app", "image": "registry.example/app:1",
                    "resources": { "requests": { "cpu": format!("{cpu}m"), "memory": format!("{}Mi", memory >> 20) } } }] },
            },
        },
    }))
    .expect("deployment")
}

pub async fn run() {
    let plane = kube_support::control_plane();
    let admin = plane.admin().await;
    let auto = kube_support::namespace(&admin, "bench-auto").await;
    let audit = kube_support::namespace(&admin, "bench-audit").await;
    let nodes: Vec<Node> = (0..10)
        .map(|i| Node {
            name: format!("bench-node-{i}"),
            labels: Default::default(),
            ready: true,
            allocatable_cpu: 64_000,
            allocatable_memory: 256 << 30,
            swap_bytes: 0,
            unschedulable: false,
            managers: NodeManagers::default(),
            daemon_endpoint: None,
        })
        .collect();
    let _kubelet = ApiKubelet::start(admin.clone(), nodes, 11)
        .await
        .expect("sim kubelet");
    let items: Vec<Seeded> = (0..WORKLOADS)
        .map(|i| Seeded {
            namespace: if i % 2 == 0 {
                auto.name.clone()
            } else {
                audit.name.clone()
            },
            name: format!("svc-{i}"),
            cpu: 200 + (i as u64 % 7) * 100,
            memory: (256 + (i as u64 % 5) * 128) << 20,
        })
        .collect();
    let created = Instant::now();
    futures_util::stream::iter(items.iter().map(|w| {
        let api: Api<Deployment> = Api::namespaced(admin.clone(), &w.namespace);
        let d = deployment(&w.name, w.cpu, w.memory);
        async move {
            api.create(&PostParams::default(), &d)
                .await
                .expect("create")
        }
    }))
    .buffer_unordered(16)
    .collect::<Vec<_>>()
    .await;
    let pods: Api<Pod> = Api::all(admin.clone());
    loop {
        let running = pods
            .list(&ListParams::default())
            .await
            .expect("pods")
            .items
            .iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .count();
        if running >= WORKLOADS {
            break;
        }
        assert!(
            created.elapsed() < Duration::from_secs(600),
            "{running} pods running"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    println!(
        "{WORKLOADS} workloads on the real API server, their pods running after {:.0} s",
        created.elapsed().as_secs_f64()
    );
    let hub = hub::start("bench-real", "bench-auto-*", &items).await;
    let (before, _) = rss();
    let options = Options {
        cluster: "bench-real".into(),
        namespaces: vec![auto.name.clone(), audit.name.clone()],
        agent_version: "bench".into(),
    };
    let cluster = KubeCluster::new(plane.agent().await);
    let started = Instant::now();
    let mut agent = Agent::start(
        cluster,
        hub.client("bench-real"),
        Arc::new(SystemClock),
        options,
        Outbox::new(20_000, Default::default()),
    )
    .await
    .expect("agent");
    println!(
        "agent started (watches listed) in {:.0} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    println!("pass  ms      workloads  started  events  records  rss_mib");
    for pass in 1..=6 {
        let started = Instant::now();
        let report = agent.pass().await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        // Let the kubelet answer the resizes before the next pass.
        let settle = Instant::now();
        while agent.busy() && settle.elapsed() < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(500)).await;
            agent.advance_all().await;
        }
        let (now, _) = rss();
        println!(
            "{pass:<4}  {ms:<6.0}  {:<9}  {:<7}  {:<6}  {:<7}  {now:.1}",
            report.workloads, report.started, report.events, report.records_written
        );
    }
    let (after, peak) = rss();
    println!(
        "process RSS {after:.1} MiB (peak {peak:.1}); {before:.1} MiB before the agent started (the control-plane harness and the hub client); the agent added {:.1} MiB",
        after - before
    );
    plane.stop();
}

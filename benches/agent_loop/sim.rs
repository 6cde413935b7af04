//! One agent loop over 5,000 workloads of the sim's in-process cluster, against the hub
//! in another process over HTTP (as `mode = "agent"` runs): half the namespaces in
//! `auto-patch` (changed in place), half in `audit`.

use std::sync::Arc;
use std::time::Instant;

use kerf::agent::{Agent, Hub, Options, Outbox};
use kerf::clock::{Clock, ManualClock, SystemClock};
use kerf::cluster::{Container, Node, NodeManagers, Resources};
use kerf::sim::in_process::{DeploymentSpec, SimCluster};

use super::hub::{self, rss, Seeded};

const WORKLOADS: usize = 5_000;
const NAMESPACES: usize = 50;
const PASSES: usize = 6;

pub async fn run() {
    let items: Vec<Seeded> = (0..WORKLOADS)
        .map(|i| Seeded {
            namespace: format!("bench-{}", i % NAMESPACES),
            name: format!("svc-{i}"),
            cpu: 200 + (i as u64 % 7) * 100,
            memory: (256 + (i as u64 % 5) * 128) << 20,
        })
        .collect();
    // Namespaces bench-1, bench-10..19: ten in auto-patch, forty in audit.
    let hub = hub::start("bench", "bench-1*", &items).await;
    // The agent's clock moves only when the benchmark says, so the simulated world is
    // stepped between passes, not on every call (its cost is not the agent's).
    let clock = Arc::new(ManualClock::new(SystemClock.now_ms()));
    let nodes = (0..50)
        .map(|i| Node {
            name: format!("node-{i}"),
            labels: Default::default(),
            ready: true,
            allocatable_cpu: 128_000,
            allocatable_memory: 512 << 30,
            swap_bytes: 0,
            managers: NodeManagers::default(),
            daemon_endpoint: None,
        })
        .collect();
    let sim = SimCluster::new(9, clock.clone(), nodes);
    let mut specs = Vec::new();
    for w in &items {
        let resources = Resources {
            cpu_request: Some(w.cpu),
            memory_request: Some(w.memory),
            ..Resources::default()
        };
        let spec = DeploymentSpec {
            namespace: w.namespace.clone(),
            name: w.name.clone(),
            replicas: 1,
            containers: vec![Container {
                name: "app".into(),
                image: "registry.example/app:1".into(),
                resources,
                ..Container::default()
            }],
            usage: Default::default(),
        };
        specs.push(spec.into());
    }
    let built = Instant::now();
    sim.create_workloads(specs, "bench").expect("deployments");
    println!(
        "the simulated cluster: {WORKLOADS} Deployments and their pods in {:.1} s",
        built.elapsed().as_secs_f64()
    );
    let (before, _) = rss();
    let heap_before = super::live_heap_mib();
    let options = Options {
        cluster: "bench".into(),
        namespaces: Vec::new(),
        agent_version: "bench".into(),
    };
    let outbox = Outbox::new(20_000, Default::default());
    // The benchmark keeps its own handle on the simulated world, so dropping the agent
    // frees only what the agent holds.
    let world = sim.clone();
    let client = hub.client("bench");
    let mut agent = Agent::start(sim, client.clone(), clock.clone(), options, outbox)
        .await
        .expect("agent");
    println!("{WORKLOADS} workloads (sim in-process), hub in its own process over HTTP");
    println!("pass  ms      feeds_ms  workloads  started  events  records  rss_mib  heap_mib");
    for pass in 1..=PASSES {
        clock.advance(1_000);
        let feeds_ms = fetch_ms(client.as_ref()).await;
        let started = Instant::now();
        let report = agent.pass().await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        if agent.busy() {
            clock.advance(1_000);
            agent.advance_all().await;
        }
        // As the running agent's delivery task does between passes.
        agent.outbox().flush(client.as_ref()).await;
        let (now, _) = rss();
        println!(
            "{pass:<4}  {ms:<6.0}  {feeds_ms:<8.0}  {:<9}  {:<7}  {:<6}  {:<7}  {now:<7.1}  {:.1}",
            report.workloads,
            report.started,
            report.events,
            report.records_written,
            super::live_heap_mib()
        );
    }
    let (after, peak) = rss();
    println!(
        "process RSS {after:.1} MiB (peak {peak:.1}), of which the simulated cluster and the hub client's runtime were {before:.1} MiB before the agent started; RSS grew {:.1} MiB",
        after - before
    );
    // What the agent itself keeps: the live heap it frees when dropped. The rest of the
    // growth is the simulated cluster's (the records, Events and pods the agent wrote,
    // which a real cluster keeps in etcd, not in the agent).
    let heap_with_agent = super::live_heap_mib();
    drop(agent);
    let heap_without = super::live_heap_mib();
    drop(world);
    println!(
        "live heap: {heap_before:.1} MiB before the agent, {heap_with_agent:.1} MiB after {PASSES} passes, {heap_without:.1} MiB once the agent is dropped: the agent keeps {:.1} MiB, the simulated cluster grew {:.1} MiB",
        heap_with_agent - heap_without,
        heap_without - heap_before
    );
}

/// What fetching both feeds alone takes (the hub's share of a pass and the decoding),
/// measured just before the pass that fetches them again.
async fn fetch_ms(hub: &impl Hub) -> f64 {
    let started = Instant::now();
    hub.config().await.expect("config feed");
    let mut next = None;
    loop {
        let page = hub
            .recommendations(next)
            .await
            .expect("recommendation feed");
        next = page.next;
        if next.is_none() {
            break;
        }
    }
    started.elapsed().as_secs_f64() * 1000.0
}

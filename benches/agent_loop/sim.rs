//! The agent's loop over 5,000 and 20,000 workloads of the sim's in-process cluster,
//! against the hub in another process over HTTP (as `mode = "agent"` runs): eleven of
//! fifty namespaces in `auto-patch` (changed in place), the rest in `audit`. Passes that
//! settle the first recommendations, steady passes (nothing changed: the feeds answer
//! "nothing changed"), and a pass after 1 % of the recommendations changed, each with
//! its time and the feed bytes it read.

use std::sync::Arc;
use std::time::Instant;

use kerf::agent::http_hub::HttpHub;
use kerf::agent::{Agent, Options, Outbox};
use kerf::clock::{Clock, ManualClock, SystemClock};
use kerf::cluster::{Container, Node, NodeManagers, Resources};
use kerf::sim::in_process::{DeploymentSpec, SimCluster};

use super::hub::{self, rss, Seeded};

const NAMESPACES: usize = 50;
/// Passes that apply and settle what the first recommendations ask.
const SETTLING: usize = 4;
/// Passes with nothing changed anywhere.
const STEADY: usize = 3;

/// Both sizes, or only those `BENCH_WORKLOADS` lists (comma-separated).
pub async fn run() {
    let sizes: Vec<usize> = std::env::var("BENCH_WORKLOADS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![5_000, 20_000]);
    for workloads in sizes {
        scenario(workloads).await;
    }
}

async fn scenario(workloads: usize) {
    let items: Vec<Seeded> = (0..workloads)
        .map(|i| Seeded {
            namespace: format!("bench-{}", i % NAMESPACES),
            name: format!("svc-{i}"),
            cpu: 200 + (i as u64 % 7) * 100,
            memory: (256 + (i as u64 % 5) * 128) << 20,
        })
        .collect();
    // Namespaces bench-1, bench-10..19: eleven in auto-patch, the rest in audit.
    let hub = hub::start("bench", "bench-1*", &items).await;
    // The agent's clock moves only when the benchmark says, so the simulated world is
    // stepped between passes, not on every call (its cost is not the agent's).
    let clock = Arc::new(ManualClock::new(SystemClock.now_ms()));
    let nodes = (0..50)
        .map(|i| Node {
            name: format!("node-{i}"),
            labels: Default::default(),
            ready: true,
            allocatable_cpu: 512_000,
            allocatable_memory: 2048 << 30,
            swap_bytes: 0,
            unschedulable: false,
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
        "\nthe simulated cluster: {workloads} Deployments and their pods in {:.1} s",
        built.elapsed().as_secs_f64()
    );
    let (before, _) = rss();
    let heap_before = super::live_heap_mib();
    let options = Options {
        cluster: "bench".into(),
        namespaces: Vec::new(),
        agent_version: "bench".into(),
    };
    let outbox = Outbox::new(2 * workloads, Default::default());
    // The benchmark keeps its own handle on the simulated world, so dropping the agent
    // frees only what the agent holds.
    let world = sim.clone();
    let client = hub.client("bench");
    let mut agent = Agent::start(sim, client.clone(), clock.clone(), options, outbox)
        .await
        .expect("agent");
    println!("{workloads} workloads (sim in-process), hub in its own process over HTTP");
    println!("pass          ms      feed_bytes  started  events  records  rss_mib  heap_mib");
    for n in 1..=SETTLING {
        pass(&mut agent, &world, &client, &clock, &format!("settle {n}")).await;
    }
    for n in 1..=STEADY {
        pass(&mut agent, &world, &client, &clock, &format!("steady {n}")).await;
    }
    // 1 % of the recommendations change (a run's new values), spread over the fleet.
    let changed: Vec<Seeded> = items.iter().step_by(100).cloned().collect();
    hub.recommend("bench", &changed, 3.0).await;
    pass(&mut agent, &world, &client, &clock, "1% changed").await;
    pass(&mut agent, &world, &client, &clock, "steady again").await;
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
        "live heap: {heap_before:.1} MiB before the agent, {heap_with_agent:.1} MiB after its passes, {heap_without:.1} MiB once the agent is dropped: the agent keeps {:.1} MiB, the simulated cluster grew {:.1} MiB",
        heap_with_agent - heap_without,
        heap_without - heap_before
    );
}

/// One pass, timed, with the feed bytes it read; then what the running agent does
/// between passes (changes in flight advanced, events delivered). The pass's time is the
/// agent's: it reads the view and the feeds, decides and acts.
async fn pass(
    agent: &mut Agent<SimCluster, HttpHub>,
    world: &SimCluster,
    client: &HttpHub,
    clock: &ManualClock,
    label: &str,
) {
    clock.advance(1_000);
    // The simulated cluster's controllers and kubelets move it to the new time before
    // the pass: their work is the cluster's, not the agent's.
    world.step();
    let bytes = client.feed_bytes();
    let started = Instant::now();
    let report = agent.pass().await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let bytes = client.feed_bytes() - bytes;
    if agent.busy() {
        clock.advance(1_000);
        agent.advance_all().await;
    }
    agent.outbox().flush(client).await;
    let (now, _) = rss();
    println!(
        "{label:<12}  {ms:<6.1}  {bytes:<10}  {:<7}  {:<6}  {:<7}  {now:<7.1}  {:.1}",
        report.started,
        report.events,
        report.records_written,
        super::live_heap_mib()
    );
}

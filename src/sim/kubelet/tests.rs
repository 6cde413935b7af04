use super::*;
use crate::cluster::{NodeManagers, QosClass};

const MIB: u64 = 1 << 20;

fn node() -> Node {
    Node {
        name: "n".into(),
        labels: Default::default(),
        ready: true,
        allocatable_cpu: 4000,
        allocatable_memory: 8192 * MIB,
        swap_bytes: 0,
        unschedulable: false,
        managers: NodeManagers::default(),
        daemon_endpoint: None,
    }
}

fn res(cpu: u64, cpu_limit: Option<u64>, mem: u64, mem_limit: Option<u64>) -> Resources {
    Resources {
        cpu_request: Some(cpu),
        cpu_limit,
        memory_request: Some(mem * MIB),
        memory_limit: mem_limit.map(|m| m * MIB),
    }
}

fn usage(cpu: f64, mem_mib: f64) -> Usage {
    Usage {
        cpu: Cpu::Steady(cpu),
        memory: Memory::Flat(mem_mib * MIB as f64),
        scale: 1.0,
    }
}

#[test]
fn memory_above_the_limit_is_oom_killed_and_restarts() {
    let mut c = ContainerRun::start(
        "app",
        usage(100.0, 300.0),
        res(100, None, 128, Some(128)),
        ResizePolicy::default(),
        0,
    );
    assert!(c.advance(7, 1_000), "300 MiB in a 128 MiB limit is killed");
    assert_eq!(c.restarts, 1);
    assert_eq!(
        c.last_termination.as_ref().map(|t| t.reason.as_str()),
        Some("OOMKilled")
    );
    let mut roomy = ContainerRun::start(
        "app",
        usage(100.0, 300.0),
        res(100, None, 512, Some(512)),
        ResizePolicy::default(),
        0,
    );
    assert!(!roomy.advance(7, 1_000));
    assert_eq!(roomy.restarts, 0);
}

#[test]
fn cpu_above_the_limit_is_throttled_and_counted() {
    let mut c = ContainerRun::start(
        "app",
        usage(800.0, 10.0),
        res(200, Some(400), 64, None),
        ResizePolicy::default(),
        0,
    );
    for s in 1..=10 {
        c.advance(7, s * 1_000);
    }
    assert_eq!(c.periods, 100, "ten seconds of 100 ms periods");
    assert!(
        c.throttled_periods >= 40,
        "wants ~2x its limit: {}",
        c.throttled_periods
    );
    assert!(
        c.cpu_seconds <= 4.0 + 1e-9,
        "never more than the limit: {}",
        c.cpu_seconds
    );
    let mut free = ContainerRun::start(
        "app",
        usage(100.0, 10.0),
        res(200, Some(400), 64, None),
        ResizePolicy::default(),
        0,
    );
    free.advance(7, 1_000);
    assert_eq!(free.throttled_periods, 0);
}

#[test]
fn resize_restarts_only_under_restart_container() {
    let policy = ResizePolicy {
        cpu: RestartPolicy::NotRequired,
        memory: RestartPolicy::RestartContainer,
    };
    let mut c = ContainerRun::start(
        "app",
        usage(100.0, 10.0),
        res(100, None, 64, Some(64)),
        policy,
        0,
    );
    c.resize(res(200, None, 64, Some(64)), 10);
    assert_eq!(c.restarts, 0, "cpu is NotRequired");
    c.resize(res(200, None, 128, Some(128)), 20);
    assert_eq!(c.restarts, 1, "memory is RestartContainer");
    assert_eq!(c.actual.memory_limit, Some(128 * MIB));
}

#[test]
fn resize_verdicts_follow_capacity_and_node_policies() {
    let n = node();
    assert_eq!(
        decide_resize(&n, false, false, (1000, 0), (2000, 0)),
        ResizeState::Settled
    );
    assert!(matches!(
        decide_resize(&n, false, false, (3000, 0), (2000, 0)),
        ResizeState::Deferred { .. }
    ));
    assert!(matches!(
        decide_resize(&n, false, false, (0, 0), (5000, 0)),
        ResizeState::Infeasible { .. }
    ));
    let mut cpu_static = node();
    cpu_static.managers.cpu_static = true;
    assert!(matches!(
        decide_resize(&cpu_static, true, false, (0, 0), (100, 0)),
        ResizeState::Infeasible { .. }
    ));
    assert_eq!(
        decide_resize(&cpu_static, false, false, (0, 0), (100, 0)),
        ResizeState::Settled
    );
    let mut swap = node();
    swap.swap_bytes = 1 << 30;
    assert!(matches!(
        decide_resize(&swap, false, true, (0, 0), (100, MIB)),
        ResizeState::Infeasible { .. }
    ));
}

#[test]
fn qos_classes_follow_the_kubernetes_rules() {
    assert_eq!(QosClass::of(&[Resources::default()]), QosClass::BestEffort);
    assert_eq!(
        QosClass::of(&[res(500, Some(500), 64, Some(64))]),
        QosClass::Guaranteed
    );
    assert_eq!(
        QosClass::of(&[res(250, Some(500), 64, Some(64))]),
        QosClass::Burstable
    );
    let limits_only = Resources {
        cpu_limit: Some(500),
        memory_limit: Some(64 * MIB),
        ..Resources::default()
    };
    assert_eq!(QosClass::of(&[limits_only]), QosClass::Guaranteed);
}

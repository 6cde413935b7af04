//! The guardrails of the agent-guardrails issue, one row per case over the decision
//! fixture: HPA coordination and `HPACoupled`, `SingleReplicaUnsafe`, `Throttled`,
//! `OOMKilled`, `JVMFixedHeap`, `RestartPolicyRequired`, and the release.

use serde_json::json;

use super::fixture::*;
use super::*;
use crate::cluster::{
    EnvVar, Hpa, HpaMetric, Pdb, RestartPolicy, Termination, UpdateStrategy, WorkloadKey,
    WorkloadKind, FIELD_MANAGER,
};
use crate::wire::recommendation_feed::ThrottlingEvidence;

type Row = (&'static str, fn(Fixture) -> Fixture, &'static [Reason]);

fn metric(resource: &str, container: Option<&str>, target: i32) -> HpaMetric {
    HpaMetric {
        kind: if container.is_some() {
            "ContainerResource".into()
        } else {
            "Resource".into()
        },
        resource: Some(resource.into()),
        container: container.map(str::to_string),
        target_utilization: Some(target),
    }
}

fn with_hpa(mut f: Fixture, metrics: Vec<HpaMetric>) -> Fixture {
    f.hpas.push(Hpa {
        namespace: "shop".into(),
        name: "web".into(),
        target: Some(WorkloadKey::new("shop", WorkloadKind::Deployment, "web")),
        min_replicas: 2,
        max_replicas: 10,
        metrics,
        metric_managers: Vec::new(),
        controller: None,
    });
    f
}

fn single(mut f: Fixture) -> Fixture {
    f.live.replicas = 1;
    f.pods.truncate(1);
    f
}

fn pdb(allowed: i32) -> Pdb {
    Pdb {
        namespace: "shop".into(),
        name: "web-pdb".into(),
        selector: [("app".to_string(), "web".to_string())]
            .into_iter()
            .collect(),
        min_available: Some("2".into()),
        max_unavailable: None,
        disruptions_allowed: allowed,
        current_healthy: 2,
    }
}

fn oom(mut f: Fixture, ago_ms: i64) -> Fixture {
    f.pods[0].statuses[0].restart_count = 1;
    f.pods[0].statuses[0].last_termination = Some(Termination {
        reason: "OOMKilled".into(),
        exit_code: 137,
        finished_at_ms: Some(NOW - ago_ms),
    });
    f
}

fn env(mut f: Fixture, name: &str, value: &str) -> Fixture {
    f.live.containers[0].env.push(EnvVar {
        name: name.into(),
        value: Some(value.into()),
    });
    f
}

#[test]
fn each_guardrail_row_yields_its_reason() {
    use Reason::*;
    let rows: &[Row] = &[
        (
            "a CPU HPA with coordination off",
            |f| {
                with_hpa(f, vec![metric("cpu", None, 40)]).policy(json!({"hpaCoordination": false}))
            },
            &[HPACoupled],
        ),
        (
            "an HPA with several metrics",
            |f| with_hpa(f, vec![metric("cpu", None, 40), metric("memory", None, 70)]),
            &[HPACoupled],
        ),
        (
            "a container-resource metric on another container",
            |f| with_hpa(f, vec![metric("cpu", Some("sidecar"), 40)]),
            &[HPACoupled],
        ),
        (
            "the coordinated target would leave 1–100 %",
            |f| with_hpa(f, vec![metric("cpu", None, 60)]),
            &[HPACoupled],
        ),
        (
            "a CPU HPA and a memory-only change: nothing to coordinate",
            |f| with_hpa(f, vec![metric("cpu", None, 60)]).policy(json!({"mode": {"cpu": "off"}})),
            &[RecommendationApplied, ModeOff],
        ),
        (
            "a coordinated CPU HPA applies",
            |f| with_hpa(f, vec![metric("cpu", None, 40)]),
            &[RecommendationApplied],
        ),
        (
            "one replica, in place, memory restarts the container",
            |mut f| {
                f.live.containers[0].resize_policy.memory = RestartPolicy::RestartContainer;
                single(f)
            },
            &[SingleReplicaUnsafe],
        ),
        (
            "one replica, in place, no restart: safe",
            single,
            &[RecommendationApplied],
        ),
        (
            "one replica, rollout with the default surge: safe",
            |f| single(f).policy(json!({"apply": {"strategy": "rollout"}})),
            &[RecommendationApplied],
        ),
        (
            "one replica, Recreate",
            |mut f| {
                f.live.strategy = UpdateStrategy::Recreate;
                single(f).policy(json!({"apply": {"strategy": "rollout"}}))
            },
            &[SingleReplicaUnsafe],
        ),
        (
            "one replica, maxSurge 0",
            |mut f| {
                f.live.strategy = UpdateStrategy::RollingUpdate {
                    max_surge: Some("0".into()),
                    max_unavailable: Some("1".into()),
                };
                single(f).policy(json!({"apply": {"strategy": "deferred",
                    "maintenanceWindows": [{"cron": "0 10 * * 1", "duration": "1h"}]}}))
            },
            &[SingleReplicaUnsafe],
        ),
        (
            "a StatefulSet of one never rolls out safely",
            |mut f| {
                f.live.key.kind = WorkloadKind::StatefulSet;
                single(f).policy(json!({"apply": {"strategy": "rollout"}}))
            },
            &[SingleReplicaUnsafe],
        ),
        (
            "a PDB that allows no disruption, rollout with unavailability",
            |mut f| {
                f.live.strategy = UpdateStrategy::RollingUpdate {
                    max_surge: Some("1".into()),
                    max_unavailable: Some("1".into()),
                };
                f.pdbs.push(pdb(0));
                f.policy(json!({"apply": {"strategy": "rollout"}}))
            },
            &[SingleReplicaUnsafe],
        ),
        (
            "a PDB that allows a disruption",
            |mut f| {
                f.live.strategy = UpdateStrategy::Recreate;
                f.pdbs.push(pdb(1));
                f.policy(json!({"apply": {"strategy": "rollout"}}))
            },
            &[RecommendationApplied],
        ),
        (
            "opted in by annotation",
            |mut f| {
                f.live.strategy = UpdateStrategy::Recreate;
                f.live
                    .annotations
                    .insert(disruption::ALLOW_DISRUPTION.into(), "true".into());
                single(f).policy(json!({"apply": {"strategy": "rollout"}}))
            },
            &[RecommendationApplied],
        ),
        (
            "throttled: CPU refused, memory goes on",
            |mut f| {
                f.throttling.insert("app".into(), 0.5);
                f
            },
            &[RecommendationApplied, Throttled],
        ),
        (
            "throttled according to the hub",
            |mut f| {
                f.rec.throttling.push(ThrottlingEvidence {
                    container: "app".into(),
                    ratio: 0.4,
                    window: "1h".into(),
                });
                f
            },
            &[RecommendationApplied, Throttled],
        ),
        (
            "throttled below the policy's threshold",
            |mut f| {
                f.throttling.insert("app".into(), 0.5);
                f.policy(json!({"guardrails": {"rollback": {"throttlingRatio": 0.6}}}))
            },
            &[RecommendationApplied],
        ),
        (
            "OOM-killed an hour ago: memory refused, CPU goes on",
            |f| oom(f, 3_600_000),
            &[RecommendationApplied, OOMKilled],
        ),
        (
            "OOM-killed before the lookback",
            |f| oom(f, 9 * DAY),
            &[RecommendationApplied],
        ),
        (
            "OOM kill seen by the hub's analysis",
            |mut f| {
                if let Some(m) = f.rec.containers[0].memory.as_mut() {
                    m.notices.push("oom-kill-detected".into());
                }
                f
            },
            &[RecommendationApplied, OOMKilled],
        ),
        (
            "both resources under pressure: nothing changes",
            |mut f| {
                f.throttling.insert("app".into(), 0.9);
                oom(f, 60_000)
            },
            &[Throttled, OOMKilled],
        ),
        (
            "a JVM with -Xmx: memory is audit-only",
            |f| env(f, "JAVA_OPTS", "-Xms256m -Xmx512m"),
            &[RecommendationApplied, JVMFixedHeap],
        ),
        (
            "the hub flags jvm-fixed-heap",
            |mut f| {
                f.rec.flags.push("jvm-fixed-heap".into());
                f
            },
            &[RecommendationApplied, JVMFixedHeap],
        ),
        (
            "Python in place without RestartContainer for memory",
            |mut f| {
                f.live.containers[0].image = "python:3.12".into();
                f
            },
            &[RecommendationApplied, RestartPolicyRequired],
        ),
        (
            "a JVM without a fixed heap in place",
            |f| env(f, "JAVA_TOOL_OPTIONS", "-XX:MaxRAMPercentage=75"),
            &[RecommendationApplied, RestartPolicyRequired],
        ),
        (
            "Python in place with RestartContainer for memory",
            |mut f| {
                f.live.containers[0].image = "python:3.12".into();
                f.live.containers[0].resize_policy.memory = RestartPolicy::RestartContainer;
                f
            },
            &[RecommendationApplied],
        ),
        (
            "Python by rollout",
            |mut f| {
                f.live.containers[0].image = "python:3.12".into();
                f.policy(json!({"apply": {"strategy": "rollout"}}))
            },
            &[RecommendationApplied],
        ),
        (
            "a fixed heap comes before the restart policy",
            |mut f| {
                f.live.containers[0].image = "eclipse-temurin:21".into();
                f.live.containers[0].command = vec!["java".into(), "-Xmx1g".into()];
                f
            },
            &[RecommendationApplied, JVMFixedHeap],
        ),
    ];
    for (name, vary, want) in rows {
        let f = vary(fixture());
        assert_eq!(reasons(&f.decide()), *want, "{name}");
    }
}

#[test]
fn a_coordinated_hpa_keeps_its_absolute_target_by_the_request_ratio() {
    let f = with_hpa(fixture(), vec![metric("cpu", None, 40)]);
    let d = f.decide();
    let h = plan(&d).hpa.as_ref().expect("an HPA change");
    // 500m → 250m: the target doubles.
    assert_eq!((h.target_from, h.target_to), (40, 80));
    assert_eq!(h.to[0].target_utilization, Some(80));
    assert_eq!(h.from[0].target_utilization, Some(40));
    assert_eq!(h.reversed().to, h.from);
    let f = with_hpa(fixture(), vec![metric("cpu", Some("app"), 30)]);
    let d = f.decide();
    assert_eq!(plan(&d).hpa.as_ref().map(|h| h.target_to), Some(60));
}

#[test]
fn an_hpa_that_keda_makes_is_kept_by_its_scaled_objects_trigger_not_written() {
    let mut f = with_hpa(fixture(), vec![metric("cpu", None, 40)]);
    f.hpas[0].controller = Some(crate::cluster::OwnerRef::new("ScaledObject", "web-so"));
    let d = f.decide();
    let h = plan(&d)
        .hpa
        .as_ref()
        .expect("coordinated, like an HPA of its own");
    assert_eq!(h.scaled_object.as_deref(), Some("web-so"));
    assert_eq!((h.target_from, h.target_to), (40, 80));
    assert!(plan(&d).resources.contains(&EventResource::Cpu));
    // A rollback sets the trigger back.
    let back = h.reversed();
    assert_eq!((back.target_from, back.target_to), (80, 40));
    assert_eq!(back.scaled_object.as_deref(), Some("web-so"));
}

#[test]
fn guardrail_findings_carry_their_details() {
    let f = with_hpa(fixture(), vec![metric("cpu", None, 60)]);
    let d = f.decide();
    let hpa = finding(&d, Reason::HPACoupled);
    assert_eq!(hpa.details["hpa"], "web");
    assert_eq!(hpa.details["hpaTargetTo"], "120");
    let mut f = fixture();
    f.throttling.insert("app".into(), 0.5);
    let d = f.decide();
    let t = finding(&d, Reason::Throttled);
    assert_eq!(t.resources, [EventResource::Cpu]);
    assert_eq!(t.details["throttlingRatio"], "0.50");
    assert_eq!(plan(&d).resources, [EventResource::Memory]);
    let d = env(fixture(), "JAVA_OPTS", "-Xmx512m").decide();
    let j = finding(&d, Reason::JVMFixedHeap);
    assert_eq!(j.details["heapOption"], "-Xmx512m");
    assert_eq!(j.resources, [EventResource::Memory]);
    let mut f = single(fixture());
    f.live.containers[0].resize_policy.memory = RestartPolicy::RestartContainer;
    let d = f.decide();
    let s = finding(&d, Reason::SingleReplicaUnsafe);
    assert_eq!(s.details["cause"], "restart");
    assert_eq!(s.details["container"], "app");
    assert!(s.message.contains("allow-disruption"), "{}", s.message);
}

fn owned(mut f: Fixture) -> Fixture {
    f.state.mode = Some(f.rec.mode.clone());
    f.live.resource_owners.push(crate::cluster::FieldOwner {
        manager: FIELD_MANAGER.into(),
        operation: "Apply".into(),
        container: "app".into(),
        field: crate::cluster::ResourceField::CpuRequest,
    });
    f
}

#[test]
fn leaving_auto_patch_releases_what_kerf_owns_unless_paused_or_frozen() {
    let f = owned(fixture()).policy(json!({"mode": {"cpu": "audit", "memory": "audit"}}));
    match f.decide() {
        Decision::Release {
            resources,
            previous,
            now,
        } => {
            assert_eq!(resources, [EventResource::Cpu, EventResource::Memory]);
            assert_eq!(previous.cpu, Mode::AutoPatch);
            assert_eq!(now.cpu, Mode::Audit);
        }
        other => panic!("expected a release, got {other:?}"),
    }
    let mut paused = owned(fixture()).policy(json!({"mode": {"cpu": "audit", "memory": "audit"}}));
    paused.situation.pause = Some(PauseScope::Cluster);
    // Paused: the release that is due waits.
    assert_eq!(reasons(&paused.decide()), [Reason::Paused]);
    // Still auto-patch for one resource: nothing to release.
    let f = owned(fixture()).policy(json!({"mode": {"cpu": "audit"}}));
    assert_eq!(
        reasons(&f.decide()),
        [Reason::RecommendationApplied, Reason::ModeAudit]
    );
    // kerf never applied to it: nothing to release, the mode is reported.
    let mut f = fixture().policy(json!({"mode": {"cpu": "audit", "memory": "audit"}}));
    f.state.mode = Some(f.rec.mode.clone());
    assert_eq!(reasons(&f.decide()), [Reason::ModeAudit]);
}

#[test]
fn a_vpa_that_acts_on_the_workload_blocks_kerf_and_one_that_only_recommends_does_not() {
    let with_vpa = |mode: Option<&str>| {
        let mut f = fixture();
        let mut spec =
            json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}});
        if let Some(m) = mode {
            spec["updatePolicy"] = json!({ "updateMode": m });
        }
        f.vpas
            .push(crate::cluster::Vpa::from_spec("shop", "web-vpa", &spec));
        f
    };
    for mode in [
        None,
        Some("Auto"),
        Some("Recreate"),
        Some("Initial"),
        Some("InPlaceOrRecreate"),
    ] {
        let d = with_vpa(mode).decide();
        assert_eq!(reasons(&d), [Reason::VPAConflict], "{mode:?}");
        let f = finding(&d, Reason::VPAConflict);
        assert_eq!(f.details["vpa"], "web-vpa");
        assert_eq!(f.details["updateMode"], mode.unwrap_or("Auto"));
    }
    assert_eq!(
        reasons(&with_vpa(Some("Off")).decide()),
        [Reason::RecommendationApplied]
    );
    // Another workload's VPA is not this one's.
    let mut f = fixture();
    f.vpas.push(crate::cluster::Vpa::from_spec(
        "shop",
        "other",
        &json!({"targetRef": {"kind": "Deployment", "name": "api"}}),
    ));
    let d = f.decide();
    assert_eq!(reasons(&d), [Reason::RecommendationApplied]);
}

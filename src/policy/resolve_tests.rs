//! Table tests of effective-policy resolution.

use serde_json::json;

use crate::policy::model::{Mode, ModeSpec, OverrideSpec, PolicySpec, Strategy};
use crate::policy::resolve::{resolve, Origin, StoredPolicy, WorkloadRef};

fn policy(id: i64, v: serde_json::Value) -> StoredPolicy {
    StoredPolicy::hub(id, 1, serde_json::from_value(v).expect("policy decodes"))
}

fn api() -> WorkloadRef {
    WorkloadRef {
        cluster: "prod-eu".into(),
        workload: crate::workload::WorkloadKey::new("shop", "Deployment".into(), "api"),
        labels: [("tier".to_string(), "web".to_string())].into(),
    }
}

fn fleet() -> Vec<StoredPolicy> {
    vec![
        policy(
            1,
            json!({"name": "fleet", "mode": {"cpu": "audit", "memory": "audit"},
                         "guardrails": {"cooldown": "48h", "minConfidence": 60}}),
        ),
        policy(
            2,
            json!({"name": "prod", "selector": {"clusters": ["prod-*"]},
                         "mode": {"cpu": "auto-patch"}, "apply": {"strategy": "rollout"}}),
        ),
        policy(
            3,
            json!({"name": "shop-web", "selector": {"namespaces": ["shop"], "labels": {"tier": "web"}},
                         "guardrails": {"minConfidence": 80}}),
        ),
        policy(
            4,
            json!({"name": "batch", "selector": {"kinds": ["Job"]}, "mode": {"cpu": "off"}}),
        ),
        policy(
            5,
            json!({"name": "urgent", "priority": 10, "selector": {"names": ["api"]},
                         "apply": {"strategy": "in-place"}}),
        ),
    ]
}

fn from(id: i64, name: &str) -> Origin {
    Origin::Policy {
        id,
        name: name.into(),
        version: 1,
    }
}

#[test]
fn each_field_comes_from_the_first_matching_policy_in_precedence_order() {
    let r = resolve(&api(), &fleet(), None, &json!({}), 0);
    assert_eq!(r.matched, vec![5, 3, 2, 1], "priority, then specificity");
    assert_eq!(r.effective.mode.cpu, Mode::AutoPatch);
    assert_eq!(r.origins["mode.cpu"], from(2, "prod"));
    assert_eq!(r.effective.mode.memory, Mode::Audit);
    assert_eq!(r.origins["mode.memory"], from(1, "fleet"));
    assert_eq!(r.effective.apply.strategy, Strategy::InPlace);
    assert_eq!(r.origins["apply.strategy"], from(5, "urgent"));
    assert_eq!(r.effective.guardrails.min_confidence, 80);
    assert_eq!(r.effective.guardrails.cooldown, "48h");
    assert_eq!(r.origins["guardrails.changeTolerance"], Origin::Default);
    assert_eq!(r.effective.guardrails.change_tolerance, 0.05);
}

#[test]
fn equal_priority_ties_go_to_the_more_specific_selector_then_the_name() {
    let policies = vec![
        policy(
            7,
            json!({"name": "b-ns", "selector": {"namespaces": ["shop"]}, "mode": {"cpu": "off"}}),
        ),
        policy(
            8,
            json!({"name": "a-ns", "selector": {"namespaces": ["shop"]}, "mode": {"cpu": "auto-patch"}}),
        ),
        policy(
            9,
            json!({"name": "z-name", "selector": {"names": ["api"]}, "mode": {"memory": "off"}}),
        ),
    ];
    let r = resolve(&api(), &policies, None, &json!({}), 0);
    assert_eq!(r.matched, vec![9, 8, 7]);
    assert_eq!(
        r.effective.mode.cpu,
        Mode::AutoPatch,
        "a-ns sorts before b-ns"
    );
    assert_eq!(r.effective.mode.memory, Mode::Off);
}

#[test]
fn selectors_must_all_hold_and_non_matching_policies_contribute_nothing() {
    let mut w = api();
    w.labels.clear();
    let r = resolve(&w, &fleet(), None, &json!({}), 0);
    assert_eq!(r.matched, vec![5, 2, 1], "shop-web needs tier=web");
    w.workload.kind = "Job".into();
    w.workload.name = "nightly".into();
    let r = resolve(&w, &fleet(), None, &json!({}), 0);
    assert_eq!(r.matched, vec![4, 2, 1]);
    assert_eq!(r.effective.mode.cpu, Mode::Off);
}

#[test]
fn an_override_wins_until_it_expires() {
    let o = OverrideSpec {
        mode: Some(ModeSpec {
            cpu: Some(Mode::Off),
            memory: None,
        }),
        excluded_containers: vec!["sidecar".into()],
        ..Default::default()
    };
    let live = resolve(&api(), &fleet(), Some((&o, Some(1_000))), &json!({}), 999);
    assert_eq!(live.effective.mode.cpu, Mode::Off);
    assert_eq!(live.origins["mode.cpu"], Origin::Override);
    assert_eq!(
        live.effective.excluded_containers,
        vec!["sidecar".to_string()]
    );
    assert_eq!(live.origins["mode.memory"], from(1, "fleet"));
    let expired = resolve(&api(), &fleet(), Some((&o, Some(1_000))), &json!({}), 1_000);
    assert_eq!(expired.effective.mode.cpu, Mode::AutoPatch);
    assert!(expired.effective.excluded_containers.is_empty());
    assert_ne!(live.identity, expired.identity);
}

#[test]
fn no_policies_give_the_conservative_defaults_and_the_settings_analysis_policy() {
    let analysis = json!({"cpu": {"percentile": 90}});
    let r = resolve(&api(), &[], None, &analysis, 0);
    assert_eq!(
        (r.effective.mode.cpu, r.effective.mode.memory),
        (Mode::Audit, Mode::Audit)
    );
    assert_eq!(r.effective.analysis, analysis);
    assert!(r.origins.values().all(|o| *o == Origin::Default));
    assert!(r.matched.is_empty());
}

#[test]
fn the_identity_depends_on_the_effective_values_only() {
    let a = resolve(&api(), &fleet(), None, &json!({}), 0);
    let mut reverted = fleet();
    for p in &mut reverted {
        p.version = 7;
    }
    let b = resolve(&api(), &reverted, None, &json!({}), 0);
    assert_eq!(
        a.identity, b.identity,
        "a revert to the same content keeps the identity"
    );
    let mut edited = fleet();
    edited[1].spec.apply = None;
    let c = resolve(&api(), &edited, None, &json!({}), 0);
    assert_eq!(
        c.identity, a.identity,
        "the strategy still comes from `urgent`"
    );
    edited[4].spec.hpa_coordination = Some(false);
    let d = resolve(&api(), &edited, None, &json!({}), 0);
    assert_ne!(d.identity, a.identity);
    assert!(a.identity.starts_with("v1:") && a.identity.len() == 67);
}

#[test]
fn the_result_does_not_depend_on_the_order_policies_are_given_in() {
    let base = resolve(&api(), &fleet(), None, &json!({}), 0);
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..200 {
        let mut shuffled = fleet();
        shuffled.extend([
            policy(11, json!({"name": "same-prio-a", "selector": {"namespaces": ["shop"]}, "mode": {"memory": "off"}})),
            policy(12, json!({"name": "same-prio-b", "selector": {"namespaces": ["shop"]}, "mode": {"memory": "auto-patch"}})),
        ]);
        for i in (1..shuffled.len()).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            shuffled.swap(i, (seed % (i as u64 + 1)) as usize);
        }
        let r = resolve(&api(), &shuffled, None, &json!({}), 0);
        assert_eq!(r.effective.mode.memory, Mode::Off);
        assert_eq!(r.effective.mode.cpu, base.effective.mode.cpu);
        let again = resolve(&api(), &shuffled, None, &json!({}), 0);
        assert_eq!(r, again);
    }
}

#[test]
fn policies_decoded_from_json_round_trip_unchanged() {
    for p in fleet() {
        let text = serde_json::to_string(&p.spec).unwrap();
        let back: PolicySpec = serde_json::from_str(&text).unwrap();
        assert_eq!(back, p.spec);
    }
}

fn cluster_policy(id: i64, cluster: &str, generation: i64, v: serde_json::Value) -> StoredPolicy {
    StoredPolicy {
        cluster: Some(cluster.into()),
        ..StoredPolicy {
            version: generation,
            ..policy(id, v)
        }
    }
}

#[test]
fn a_clusters_own_policies_precede_the_override_and_every_hub_policy_of_that_cluster_only() {
    let mut set = fleet();
    // A lower priority than any hub policy still comes first: it is the cluster's own.
    set.push(cluster_policy(
        1,
        "prod-eu",
        4,
        json!({"name": "from-git", "priority": -5, "mode": {"cpu": "off"},
               "guardrails": {"cooldown": "72h"}}),
    ));
    set.push(cluster_policy(
        2,
        "prod-us",
        1,
        json!({"name": "other-cluster", "priority": 900, "mode": {"memory": "off"}}),
    ));
    let o = OverrideSpec {
        mode: Some(ModeSpec {
            cpu: Some(Mode::AutoPatch),
            memory: Some(Mode::AutoPatch),
        }),
        ..OverrideSpec::default()
    };
    let r = resolve(&api(), &set, Some((&o, None)), &json!({}), 0);
    assert_eq!(
        r.matched_cluster,
        vec![1],
        "another cluster's policy never selects"
    );
    assert_eq!(r.matched, vec![5, 3, 2, 1]);
    let git = Origin::ClusterPolicy {
        id: 1,
        cluster: "prod-eu".into(),
        name: "from-git".into(),
        generation: 4,
    };
    assert_eq!(r.effective.mode.cpu, Mode::Off, "Git beats the override");
    assert_eq!(r.origins["mode.cpu"], git);
    assert_eq!(
        r.effective.mode.memory,
        Mode::AutoPatch,
        "Git is silent: the override"
    );
    assert_eq!(r.origins["mode.memory"], Origin::Override);
    assert_eq!(r.effective.guardrails.cooldown, "72h");
    assert_eq!(r.origins["guardrails.cooldown"], git);
    assert_eq!(
        r.effective.guardrails.min_confidence, 80,
        "the hub's shop-web"
    );
    assert_eq!(r.origins["guardrails.minConfidence"], from(3, "shop-web"));
    // Without the override, the hub's policies decide what Git leaves unset.
    let r = resolve(&api(), &set, None, &json!({}), 0);
    assert_eq!(r.effective.mode.memory, Mode::Audit);
    assert_eq!(r.origins["mode.memory"], from(1, "fleet"));
}

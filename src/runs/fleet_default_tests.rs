//! The demo fleet under the shipped fleet default, through the run's own analysis
//! (`analyze_chunk`, as a run stores it): what a newcomer's first screen says must be
//! what kerf is for. The net monthly figure is a saving, at most a quarter of the
//! workloads are told to grow and each growth has its reason in the trace, and no
//! workload is `partial` only because of its release start.

use serde_json::Value;

use super::analyze::{analyze_chunk, ChunkContext};
use super::summary::{RISK_LEAK, RISK_OOM, RISK_UNDER_PROVISIONED};
use super::workload::group;
use super::RecommenderSettings;
use crate::datasource::{ClusterScope, DemoFleet};
use crate::policy::PolicySet;
use crate::store::NewRecommendation;

/// A Monday 00:00 UTC: the figures do not depend on when the test runs.
const END_MS: i64 = 1_767_571_200_000;

fn fleet() -> Vec<(String, NewRecommendation)> {
    let settings = RecommenderSettings::default();
    let window = super::engine::window_for(END_MS, &settings);
    let mut out = Vec::new();
    for cluster in DemoFleet::clusters() {
        let scope = ClusterScope {
            cluster: cluster.to_string(),
            selector_label: None,
            selector_value: None,
        };
        // The seed `kerf demo` uses (`demo::DEMO_SEED`).
        let collection = DemoFleet::new(42)
            .collect_now(&scope, window)
            .expect("collect");
        let ctx = ChunkContext {
            run_id: "test".into(),
            now_ms: END_MS,
            window,
            policies: PolicySet {
                default_analysis: serde_json::to_value(&settings.policy).expect("json"),
                ..PolicySet::default()
            },
            prices: super::Pricing::default().for_cluster(cluster),
        };
        let mut groups = group(cluster, collection);
        groups.retain(|g| !settings.excludes(&g.info.namespace));
        let outcome = analyze_chunk(groups, &ctx);
        assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
        out.extend(
            outcome
                .analyzed
                .into_iter()
                .map(|(seen, rec)| (format!("{}/{}", seen.namespace, seen.name), rec)),
        );
    }
    out
}

fn results(rec: &NewRecommendation) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&rec.analysis).expect("analysis");
    doc["results"].as_array().cloned().unwrap_or_default()
}

/// The trace step named `rule` of `setting`, if any.
fn step<'a>(r: &'a Value, setting: &str, rule: &str) -> Option<&'a Value> {
    r["decisionTrace"]["settings"]
        .as_array()?
        .iter()
        .find(|s| s["setting"] == setting)?["steps"]
        .as_array()?
        .iter()
        .find(|s| s["rule"] == rule)
}

/// Why the request of `r` grew, as the trace shows it; `None` when nothing explains it.
fn why_grown(r: &Value, notices: &[&str]) -> Option<&'static str> {
    let rec = r["recommendations"]
        .as_array()?
        .iter()
        .find(|x| x["setting"] == "requests")?;
    if rec["currentUnset"] == true {
        return Some("no request set");
    }
    let current = rec["currentValue"].as_f64()?;
    if r["resource"] == "memory" && notices.contains(&"oom-kill-detected") {
        let floor = step(r, "requests", "OOM floor")?;
        return (floor["values"]["floor"].as_f64()? > current).then_some("OOM-killed");
    }
    if r["resource"] == "memory" && r["memoryLeak"]["status"] == "potential-leak" {
        return Some("potential leak");
    }
    // Under-provisioned: the measured usage itself is near or above the request.
    let usage = step(r, "requests", "usage × headroom")?["values"]["usage"].as_f64()?;
    (usage >= 0.8 * current).then_some("under-provisioned")
}

#[test]
fn the_demo_under_the_fleet_default_saves_money_and_explains_every_growth() {
    let fleet = fleet();
    assert!(
        (55..=75).contains(&fleet.len()),
        "{} workloads",
        fleet.len()
    );
    let net: f64 = fleet.iter().filter_map(|(_, r)| r.cost_delta).sum();
    assert!(net < -500.0, "net monthly figure {net:.2}");
    let mut grown = Vec::new();
    for (name, rec) in &fleet {
        let results = results(rec);
        let raised: Vec<&Value> = results
            .iter()
            .filter(|r| {
                r["recommendations"].as_array().is_some_and(|recs| {
                    recs.iter().any(|x| {
                        x["setting"] == "requests"
                            && (x["currentUnset"] == true
                                || x["suggestedValue"].as_f64() > x["currentValue"].as_f64())
                    })
                })
            })
            .collect();
        if raised.is_empty() {
            continue;
        }
        let notices: Vec<&str> = results
            .iter()
            .flat_map(|r| r["notices"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .collect();
        for r in raised {
            let why = why_grown(r, &notices);
            assert!(
                why.is_some(),
                "{name}: {} grows without a reason: {r}",
                r["resource"]
            );
        }
        assert!(
            [RISK_OOM, RISK_LEAK, RISK_UNDER_PROVISIONED].contains(&rec.risk),
            "{name}: grows with risk class {}",
            rec.risk
        );
        grown.push(name.clone());
    }
    assert!(
        grown.len() * 4 <= fleet.len(),
        "{} of {} grow: {grown:?}",
        grown.len(),
        fleet.len()
    );
    // The specials still show: the OOM-killed and leaking workloads grow.
    for special in ["payments/ledger", "data/ingest-worker"] {
        assert!(grown.iter().any(|g| g == special), "{special} in {grown:?}");
    }
}

#[test]
fn no_demo_workload_is_partial_only_because_of_its_release_start() {
    for (name, rec) in fleet() {
        for r in results(&rec) {
            let reasons: Vec<&str> = r["dataQuality"]["reasons"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            // The release start is supplied: the engine infers it only past a rollout
            // it saw (the old pods outlive the new ReplicaSet's creation by a step):
            // storefront's, and the Argo Rollout checkout's canary.
            if reasons.contains(&"inferred-release-start") {
                let rolled = ["web/storefront", "payments/checkout"];
                assert!(rolled.contains(&name.as_str()), "{name}: {reasons:?}");
            }
            let lowering: Vec<&&str> = reasons
                .iter()
                .filter(|x| !super::summary::INFORMING_REASONS.contains(x))
                .collect();
            if lowering.is_empty() {
                assert_ne!(rec.data_quality, "partial", "{name}: {reasons:?}");
            }
        }
        if rec.data_quality == "partial" {
            assert_ne!(name, "web/storefront");
        }
    }
}

#[test]
fn the_ui_splits_data_quality_reasons_as_the_hub_does() {
    let js = include_str!("../../assets/ui/quality.js");
    let start = js
        .find("INFORMING_REASONS = [")
        .expect("the list in quality.js");
    let end = start + js[start..].find("];").expect("its end");
    let listed: Vec<&str> = js[start..end].split('"').skip(1).step_by(2).collect();
    assert_eq!(listed, super::summary::INFORMING_REASONS);
    // Every informing reason is an engine reason or notice.
    for r in super::summary::INFORMING_REASONS {
        let quoted = format!("\"{r}\"");
        assert!(
            serde_json::from_str::<crate::analysis::Reason>(&quoted).is_ok(),
            "{r} is not an engine reason"
        );
    }
}

#[test]
fn on_the_demo_the_fleet_default_costs_less_than_the_engines_defaults_with_no_more_oom_kills() {
    let settings = RecommenderSettings::default();
    let (window, span) = super::backtest::span_for(END_MS, &settings, 0.5);
    let mut groups = Vec::new();
    for cluster in DemoFleet::clusters() {
        let scope = ClusterScope {
            cluster: cluster.to_string(),
            selector_label: None,
            selector_value: None,
        };
        let collection = DemoFleet::new(42)
            .collect_now(&scope, window)
            .expect("collect");
        let mut g = group(cluster, collection);
        g.retain(|w| !settings.excludes(&w.info.namespace));
        groups.push((cluster.to_string(), g));
    }
    let report = |name: &str| {
        let policy = crate::policy::presets::get(name).expect("preset").analysis;
        let mut rows = Vec::new();
        for (cluster, g) in &groups {
            let prices = super::Pricing::default().for_cluster(cluster);
            rows.extend(super::backtest::backtest_groups(g, &policy, span, prices));
        }
        super::backtest::report(&policy, span, rows, false, Vec::new())
    };
    let (fleet, engine) = (
        report(crate::policy::presets::FLEET_DEFAULT),
        report("engine-default"),
    );
    for (mode, f, e) in [
        ("in sample", &fleet.in_sample, &engine.in_sample),
        ("out of sample", &fleet.out_of_sample, &engine.out_of_sample),
    ] {
        assert!(
            f.would_be_oom_kills <= e.would_be_oom_kills,
            "{mode}: {f:?} vs {e:?}"
        );
        assert!(f.cost_change < e.cost_change, "{mode}: {f:?} vs {e:?}");
        assert!(f.cost_change.is_some_and(|c| c < 0.0), "{mode}: a saving");
    }
    assert!(fleet.workloads_grown < engine.workloads_grown);
}

/// Defect 0 of "the truth after acting": 10,080 samples a minute apart span 6 d 23 h 59 m
/// but cover the whole 7-day window, so the shipped lookback reaches the shipped
/// learning period (`guardrails.learningPeriod`, 7 d) and the agent can act.
#[test]
fn a_fully_covered_default_window_covers_the_default_learning_period() {
    let fleet = fleet();
    let week = 7 * 86_400;
    let covered: Vec<i64> = fleet
        .iter()
        .map(|(name, rec)| {
            let summary: Value = serde_json::from_str(&rec.summary).expect("summary");
            summary["coveredSeconds"]
                .as_i64()
                .unwrap_or_else(|| panic!("{name}: no coveredSeconds in {summary}"))
        })
        .collect();
    assert!(covered.iter().all(|s| *s <= week), "{covered:?}");
    let full = covered.iter().filter(|s| **s == week).count();
    assert!(
        full * 2 > covered.len(),
        "most demo workloads have a week of history: {full} of {} cover 7 d ({covered:?})",
        covered.len()
    );
}

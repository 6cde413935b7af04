//! A datasource that gets answers wrong (issue 29, done-means 5): a range selector
//! answered with a vector, a truncated remote-read frame, a series out of time order
//! and one with two values at one timestamp. Each fails only its own workload, with a
//! run error naming the datasource, the workload and the fault; a conflicting duplicate
//! is refused, never dropped; every other workload's result is unchanged.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf::analysis::{analyze, default_policy};
use kerf::clock::ManualClock;
use kerf::datasource::prometheus::{ClientAuth, PrometheusSource, ProtocolChoice};
use kerf::datasource::{Collection, Datasource, Source};
use kerf::run_vocabulary::RunErrorEntry;
use kerf::runs::{Runs, Trigger};
use kerf::store::{self, Store, StoreOptions};

use crate::datasource_raw::{workload, Scrapes, Seeded, END, WINDOW};
use crate::support::fault_proxy::FaultProxy;
use crate::support::prometheus::Prometheus;
use crate::support::raw_tsdb::Dataset;
use crate::support::series::{scope, source};

const WORKLOADS: [&str; 6] = [
    "ok-a",
    "ok-b",
    "bad-shape",
    "bad-order",
    "bad-dup",
    "bad-frame",
];

fn dataset() -> Dataset {
    let mut rng = Seeded(0x51ed_2701_a5a5_0001);
    let mut ds = Dataset::default();
    for name in WORKLOADS {
        let scrapes = Scrapes {
            interval_ms: 30_000,
            offset: |k, _| (k * 1_100) % 30_000,
            outages: Vec::new(),
            reset_at: None,
            restart_at: None,
        };
        workload(&mut ds, name, &scrapes, &mut rng);
    }
    ds
}

/// Each workload's analysis output (JSON) and why it could not be read, if so.
fn results(c: &Collection) -> BTreeMap<String, (String, Option<String>)> {
    let out = analyze(&c.input, &default_policy()).expect("analyze");
    c.workloads
        .iter()
        .map(|w| {
            let mine: Vec<_> = out
                .results
                .iter()
                .filter(|r| r.target.name == w.name)
                .collect();
            let json = serde_json::to_string(&mine).expect("json");
            (w.name.clone(), (json, w.unreadable.clone()))
        })
        .collect()
}

fn with(url: &str, choice: ProtocolChoice) -> PrometheusSource {
    source(url, ClientAuth::None).with_protocol(choice)
}

/// The errors of one real run of cluster `raw` on `source`, by workload.
async fn run_errors(source: PrometheusSource) -> (String, BTreeMap<String, String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, 0).expect("store");
    let new = store::NewCluster {
        name: "raw",
        token_sha256: "raw",
    };
    store
        .writing(move |tx| tx.insert_cluster(&new, &Default::default(), 0))
        .await
        .expect("cluster");
    let clock = Arc::new(ManualClock::new(END));
    let runs = Runs::new(store, clock).with_source(Datasource::Prometheus(source));
    let run = runs.run_to_end("raw", Trigger::Manual).await.expect("run");
    let by_workload = run
        .errors
        .iter()
        .filter_map(|e| match e {
            RunErrorEntry::Workload { workload, message } => {
                Some((workload.clone(), message.clone()))
            }
            _ => None,
        })
        .collect();
    (run.status.as_str().to_string(), by_workload)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_faulty_answer_fails_only_its_workload_naming_the_datasource_and_the_fault() {
    let ds = dataset();
    let prom = Prometheus::remote_write_receiver();
    ds.write_to(&prom.url).await;
    let proxy = FaultProxy::start(&prom.url).await;
    let datasource = format!("datasource {}/", proxy.url);
    for choice in [ProtocolChoice::QueryRange, ProtocolChoice::RemoteRead] {
        let direct = with(&prom.url, choice)
            .collect(&scope("raw"), WINDOW)
            .await
            .expect("direct");
        let faulty = with(&proxy.url, choice)
            .collect(&scope("raw"), WINDOW)
            .await
            .expect("through the faults");
        let (clean, bad) = (results(&direct), results(&faulty));
        assert_eq!(clean.len(), WORKLOADS.len(), "{choice:?}");
        assert_eq!(
            bad.len(),
            WORKLOADS.len(),
            "every workload is named: {choice:?}"
        );
        let expected: &[(&str, &str)] = match choice {
            ProtocolChoice::RemoteRead => &[("bad-frame", "remote read:")],
            _ => &[
                (
                    "bad-shape",
                    "a range selector was answered with a vector of the wrong shape",
                ),
                ("bad-order", "samples out of time order"),
                ("bad-dup", "conflicting samples at one timestamp"),
            ],
        };
        for name in WORKLOADS {
            let fault = expected.iter().find(|(n, _)| *n == name);
            match (fault, &bad[name]) {
                (Some((_, what)), (_, Some(why))) => {
                    let workload = format!("workload raw/Deployment/{name}");
                    assert!(why.starts_with(&datasource), "{why}");
                    assert!(why.contains(&workload) && why.contains(what), "{why}");
                    assert!(clean[name].1.is_none(), "{name} reads fine directly");
                }
                (None, result) => {
                    assert!(result.1.is_none(), "{choice:?}: {name}: {:?}", result.1);
                    assert!(
                        result.0 == clean[name].0,
                        "{choice:?}: {name}'s result is unchanged"
                    );
                }
                (Some(_), (_, None)) => panic!(
                    "{choice:?}: {name} was not refused: {:?} {:?}",
                    faulty.stats,
                    bad[name].0.len()
                ),
            }
        }
        let (status, errors) = run_errors(with(&proxy.url, choice)).await;
        assert_eq!(status, "partial", "{choice:?}: {errors:?}");
        assert_eq!(errors.len(), expected.len(), "{choice:?}: {errors:?}");
        for (name, what) in expected {
            let message = &errors[&format!("raw/Deployment/{name}")];
            assert!(
                message.starts_with(&datasource) && message.contains(what),
                "{message}"
            );
        }
    }
}

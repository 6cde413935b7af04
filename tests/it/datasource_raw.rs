//! Raw samples on every collection path (issue 29): one seeded dataset — scrapes at 15 s
//! and at 60 s, offsets that drift across the step grid or straddle it, outages of 2 and
//! 20 minutes, counter resets, container restarts and staleness markers — written sample
//! for sample into a real Prometheus and a real VictoriaMetrics by remote write. Remote
//! read, the export API and range selectors must hand the engine exactly the samples each
//! TSDB stores (read back independently, a raw `selector[window]` query), give identical
//! recommendations, and size a container whose scrapes straddle the step from its real
//! rates, where the old step grid inflated them.

use std::collections::BTreeMap;

use kerf::analysis::{analyze, default_policy, ContainerObservation, Input};
use kerf::datasource::prometheus::{ClientAuth, PrometheusSource, ProtocolChoice};
use kerf::datasource::raw::Labels;
use kerf::datasource::{Collection, Source, Window};

use crate::support::prometheus::Prometheus;
use crate::support::raw_tsdb::{self, stale, Dataset};
use crate::support::series::{scope, source};
use crate::support::victoria::Victoria;

const MIN: i64 = 60_000;
pub(crate) const END: i64 = 1_760_000_000_000 - 1_760_000_000_000 % MIN;
pub(crate) const START: i64 = END - 6 * 60 * MIN;
pub(crate) const WINDOW: Window = Window {
    start_ms: START,
    end_ms: END,
    step_seconds: 60,
};
pub(crate) const USAGE: &str = "{__name__=~\"container_cpu_usage_seconds_total|container_memory_working_set_bytes\",cluster=\"raw\"}";

/// A seeded generator (xorshift64*): the same dataset every run.
pub(crate) struct Seeded(pub(crate) u64);

impl Seeded {
    pub(crate) fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How one container is scraped.
pub(crate) struct Scrapes {
    pub(crate) interval_ms: i64,
    /// The offset from the interval's tick of scrape `k`.
    pub(crate) offset: fn(i64, &mut Seeded) -> i64,
    /// Scrapes that fail (a staleness marker at the first).
    pub(crate) outages: Vec<(i64, i64)>,
    /// The counter starts again from a small value (same series).
    pub(crate) reset_at: Option<i64>,
    /// The container restarts: its series ends with a marker, a new `id` starts 20 s on.
    pub(crate) restart_at: Option<i64>,
}

/// Scrape times of one lifetime in `[from, to)` with the markers Prometheus writes: at
/// the first failed scrape of an outage, and at `to` when the series ends there.
fn times(s: &Scrapes, from: i64, to: i64, ends: bool, rng: &mut Seeded) -> Vec<(i64, bool)> {
    let mut out = Vec::new();
    let mut in_outage = false;
    for k in 0.. {
        let t = from + k * s.interval_ms + (s.offset)(k, rng);
        if t >= to {
            break;
        }
        // No sample exactly at the window start: the servers' edges are not under test.
        if t == START {
            continue;
        }
        let out_now = s.outages.iter().any(|(a, b)| (*a..*b).contains(&t));
        if out_now && !in_outage {
            out.push((t, true));
        }
        in_outage = out_now;
        if !out_now {
            out.push((t, false));
        }
    }
    if ends {
        out.push((to, true));
    }
    out
}

/// One pod of workload `name` (1 replica, container `app`) with kube-state-metrics
/// series scraped every 30 s, 7.3 s off the step, and usage scraped as `scrapes` says.
pub(crate) fn workload(ds: &mut Dataset, name: &str, scrapes: &Scrapes, rng: &mut Seeded) {
    let (ns, rs, pod, uid) = (
        "raw",
        format!("{name}-r1"),
        format!("{name}-r1-aaaaa"),
        format!("{name}-uid"),
    );
    let base = [("cluster", "raw"), ("namespace", ns)];
    let ksm_times: Vec<i64> = (0..)
        .map(|k| START - 60 * MIN + 7_300 + k * 30_000)
        .take_while(|t| *t <= END + 2 * MIN)
        .collect();
    let series = |v: f64| ksm_times.iter().map(|t| (*t, v)).collect::<Vec<_>>();
    let dep = [base[0], base[1], ("deployment", name)];
    ds.add(
        "kube_deployment_created",
        &dep,
        series(((START - 1_440 * MIN) / 1000) as f64),
    );
    ds.add("kube_deployment_spec_replicas", &dep, series(1.0));
    let rs_owner = [
        base[0],
        base[1],
        ("replicaset", rs.as_str()),
        ("owner_kind", "Deployment"),
        ("owner_name", name),
    ];
    ds.add("kube_replicaset_owner", &rs_owner, series(1.0));
    let p = [
        base[0],
        base[1],
        ("pod", pod.as_str()),
        ("uid", uid.as_str()),
    ];
    let owner = [
        p[0],
        p[1],
        p[2],
        p[3],
        ("owner_kind", "ReplicaSet"),
        ("owner_name", rs.as_str()),
        ("owner_is_controller", "true"),
    ];
    ds.add("kube_pod_owner", &owner, series(1.0));
    ds.add(
        "kube_pod_created",
        &p,
        series(((START - 60 * MIN) / 1000) as f64),
    );
    for (metric, resource, unit, v) in [
        ("kube_pod_container_resource_requests", "cpu", "core", 0.25),
        (
            "kube_pod_container_resource_requests",
            "memory",
            "byte",
            256.0 * 1_048_576.0,
        ),
        (
            "kube_pod_container_resource_limits",
            "memory",
            "byte",
            512.0 * 1_048_576.0,
        ),
    ] {
        let l = [
            p[0],
            p[1],
            p[2],
            p[3],
            ("container", "app"),
            ("resource", resource),
            ("unit", unit),
        ];
        ds.add(metric, &l, series(v));
    }
    let first = START - 30 * MIN;
    let last = END + 2 * MIN;
    let lifetimes = match scrapes.restart_at {
        Some(r) => vec![("/c1", first, r, true), ("/c2", r + 20_000, last, false)],
        None => vec![("/c1", first, last, false)],
    };
    for (id, from, to, ends) in lifetimes {
        let l = [
            base[0],
            base[1],
            ("pod", pod.as_str()),
            ("container", "app"),
            ("id", id),
        ];
        let (mut cpu, mut mem) = (Vec::new(), Vec::new());
        let (mut counter, mut prev) = (0.0f64, from);
        for (t, marker) in times(scrapes, from, to, ends, rng) {
            if marker {
                cpu.push((t, stale()));
                mem.push((t, stale()));
                continue;
            }
            let rate = 0.2 + 0.3 * rng.unit() * rng.unit();
            counter += rate * (t - prev) as f64 / 1000.0;
            if scrapes.reset_at.is_some_and(|r| prev < r && t >= r) {
                counter = 0.5 * rng.unit();
            }
            prev = t;
            // Values as cAdvisor writes them: nanosecond-rounded seconds, 4 KiB pages.
            cpu.push((t, (counter * 1e9).round() / 1e9));
            mem.push((
                t,
                (100.0 * 1_048_576.0 + (rng.unit() * 5_120.0).round() * 4096.0),
            ));
        }
        ds.add("container_cpu_usage_seconds_total", &l, cpu);
        ds.add("container_memory_working_set_bytes", &l, mem);
    }
}

/// The dataset: `fine` (15 s, drifting offsets, both outages, a reset, a restart),
/// `coarse` (60 s, the same troubles), `edge` (60 s, scrapes within ±1.5 s of the step).
pub(crate) fn dataset() -> Dataset {
    let mut rng = Seeded(0x9e37_79b9_7f4a_7c15);
    let mut ds = Dataset::default();
    let troubles = |interval_ms, offset| Scrapes {
        interval_ms,
        offset,
        outages: vec![
            (END - 300 * MIN, END - 298 * MIN),
            (END - 200 * MIN, END - 180 * MIN),
        ],
        reset_at: Some(END - 100 * MIN),
        restart_at: Some(END - 47 * MIN),
    };
    // Offsets creep forward across the whole interval (370 ms a scrape at 15 s, 1.7 s
    // at 60 s), so every phase against the step is visited.
    workload(
        &mut ds,
        "fine",
        &troubles(15_000, |k, _| (k * 370) % 15_000),
        &mut rng,
    );
    workload(
        &mut ds,
        "coarse",
        &troubles(60_000, |k, _| (k * 1_700) % 60_000),
        &mut rng,
    );
    let edge = Scrapes {
        interval_ms: 60_000,
        offset: |_, rng| (rng.unit() * 3_000.0) as i64 - 1_500,
        outages: Vec::new(),
        reset_at: None,
        restart_at: None,
    };
    workload(&mut ds, "edge", &edge, &mut rng);
    ds
}

/// Prometheus and VictoriaMetrics holding the dataset.
pub(crate) async fn servers(ds: &Dataset) -> (Prometheus, Victoria) {
    let prom = Prometheus::remote_write_receiver();
    ds.write_to(&prom.url).await;
    let vm = Victoria::empty().await;
    ds.write_to(&vm.url).await;
    vm.searchable(ds.series.len()).await;
    (prom, vm)
}

/// Samples by (pod, container, metric), each lifetime's `(ms, bits)` oldest first.
type ByContainer = BTreeMap<(String, String, String), Vec<Vec<(i64, u64)>>>;

fn reference(stored: &BTreeMap<Labels, Vec<(i64, u64)>>) -> ByContainer {
    let mut out = ByContainer::new();
    for (l, s) in stored {
        let key = (
            l["pod"].clone(),
            l["container"].clone(),
            l["__name__"].clone(),
        );
        out.entry(key).or_default().push(s.clone());
    }
    out.values_mut().for_each(|v| v.sort());
    out
}

fn handed(c: &Collection) -> ByContainer {
    let mut out = ByContainer::new();
    for o in &c.input.containers {
        for (metric, resource) in [
            ("container_cpu_usage_seconds_total", &o.cpu),
            ("container_memory_working_set_bytes", &o.memory),
        ] {
            for s in &resource.series {
                let pod = format!("{}-r1-aaaaa", o.target.name);
                let key = (pod, o.target.container.clone(), metric.to_string());
                let samples = s.samples.iter().map(|x| (x.timestamp, x.value.to_bits()));
                out.entry(key).or_default().push(samples.collect());
            }
        }
    }
    out.values_mut().for_each(|v| v.sort());
    out
}

fn with(url: &str, choice: ProtocolChoice) -> PrometheusSource {
    source(url, ClientAuth::None).with_protocol(choice)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_hands_the_engine_exactly_the_samples_each_tsdb_stores() {
    let ds = dataset();
    let (prom, vm) = servers(&ds).await;
    let written = ds.stored(START, END);
    let on_prom = raw_tsdb::stored(&prom.url, USAGE, END, END - START).await;
    let on_vm = raw_tsdb::stored(&vm.url, USAGE, END, END - START).await;
    let usage_written: BTreeMap<_, _> = written
        .iter()
        .filter(|(l, _)| l["__name__"].starts_with("container_"))
        .map(|(l, s)| (l.clone(), s.clone()))
        .collect();
    assert!(
        on_prom == usage_written,
        "Prometheus stores what was written"
    );
    assert_eq!(
        on_vm.len(),
        on_prom.len(),
        "VictoriaMetrics holds the same series"
    );
    // VictoriaMetrics keeps every timestamp, and each value to its 12 significant
    // digits (it stores decimals): its own samples are its reference.
    for (l, s) in &on_prom {
        let vm_series = on_vm.iter().find(|(m, _)| {
            ["pod", "container", "id", "__name__"]
                .iter()
                .all(|k| m.get(*k) == l.get(*k))
        });
        let vm_s = vm_series.map(|(_, v)| v.clone()).unwrap_or_default();
        let times = |v: &[(i64, u64)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
        assert!(
            times(&vm_s) == times(s),
            "VictoriaMetrics keeps {l:?}'s timestamps"
        );
        let close = vm_s.iter().zip(s).all(|(a, b)| {
            let (a, b) = (f64::from_bits(a.1), f64::from_bits(b.1));
            (a - b).abs() <= b.abs() * 1e-11
        });
        assert!(
            close,
            "VictoriaMetrics keeps {l:?}'s values to its precision"
        );
    }
    let cases = [
        (
            "remote read",
            &prom.url,
            ProtocolChoice::RemoteRead,
            "remote-read",
        ),
        (
            "range selectors on Prometheus",
            &prom.url,
            ProtocolChoice::QueryRange,
            "range-selector",
        ),
        ("export", &vm.url, ProtocolChoice::VmExport, "vm-export"),
        (
            "range selectors on VictoriaMetrics",
            &vm.url,
            ProtocolChoice::QueryRange,
            "range-selector",
        ),
    ];
    let mut outputs = Vec::new();
    for (what, url, choice, name) in cases {
        let got = with(url, choice)
            .collect(&scope("raw"), WINDOW)
            .await
            .expect(what);
        assert_eq!(got.stats.protocol, name, "{what}");
        for w in &got.workloads {
            assert!(w.unreadable.is_none(), "{what}: {:?}", w.unreadable);
        }
        let want = reference(if url == &prom.url { &on_prom } else { &on_vm });
        let have = handed(&got);
        assert_eq!(
            have.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{what}"
        );
        for (key, lifetimes) in &want {
            assert!(
                have[key] == *lifetimes,
                "{what}: {key:?} differs from the TSDB's samples"
            );
        }
        for (workload, interval) in [("fine", "15 s"), ("coarse", "60 s"), ("edge", "60 s")] {
            let n: usize = have
                .iter()
                .filter(|((pod, _, _), _)| pod.starts_with(workload))
                .flat_map(|(_, l)| l.iter().map(Vec::len))
                .sum();
            eprintln!("{what}: {workload} ({interval} scrapes): {n} samples equal the TSDB's");
        }
        settings_carry_their_raw_times(&got, &ds, what);
        let out = analyze(&got.input, &default_policy()).expect("analyze");
        let recommended: Vec<(String, f64)> = out
            .results
            .iter()
            .flat_map(|r| {
                r.recommendations.iter().map(move |x| {
                    let what = format!("{} {:?} {:?}", r.target.name, r.resource, x.setting);
                    (what, x.suggested_value)
                })
            })
            .collect();
        let json = serde_json::to_string(&out).expect("json");
        outputs.push((what, url == &prom.url, json, recommended));
    }
    // One server's protocols agree on every figure; the two servers on every
    // recommendation, to VictoriaMetrics's 12 digits (it stores values as decimals).
    let (first, rest) = outputs.split_first().expect("outputs");
    assert!(!first.3.is_empty(), "something is recommended");
    for (what, on_prom, json, recommended) in rest {
        let same_server = outputs
            .iter()
            .find(|o| o.1 == *on_prom)
            .expect("first of its server");
        assert!(
            json == &same_server.2,
            "{what} gives the figures {} gives",
            same_server.0
        );
        let names = |r: &[(String, f64)]| r.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(recommended),
            names(&first.3),
            "{what} recommends what remote read does"
        );
        for ((name, a), (_, b)) in recommended.iter().zip(&first.3) {
            assert!(
                (a - b).abs() <= b.abs() * 1e-9,
                "{what}: {name}: {a} against {b}"
            );
        }
    }
}

/// Current settings and identity carry the raw sample times (7.3 s off the step), not
/// an evaluation time.
fn settings_carry_their_raw_times(got: &Collection, ds: &Dataset, what: &str) {
    let latest = |name: &str| {
        ds.series
            .iter()
            .filter(|(l, _)| l["__name__"] == name)
            .flat_map(|(_, s)| s.iter().map(|x| x.0).filter(|t| *t <= END))
            .max()
            .expect("written")
    };
    for c in &got.input.containers {
        let request = c.cpu.current_request.timestamp;
        assert_eq!(
            request,
            latest("kube_pod_container_resource_requests"),
            "{what}"
        );
        assert_ne!(request % MIN, 0, "{what}: a raw time, not a step");
        assert_eq!(c.identity.timestamp, latest("kube_pod_owner"), "{what}");
    }
}

/// CPU P95 of one series the way the engine defines it: rates between adjacent raw
/// samples (Δ / elapsed seconds, in millicores), the nearest rank.
pub(crate) fn p95(samples: &[(i64, f64)]) -> f64 {
    let mut rates: Vec<f64> = samples
        .windows(2)
        .map(|w| {
            let delta = if w[1].1 >= w[0].1 {
                w[1].1 - w[0].1
            } else {
                w[1].1
            };
            delta / ((w[1].0 - w[0].0) as f64 / 1000.0) * 1000.0
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    let rank = (0.95 * rates.len() as f64).ceil() as usize;
    rates[rank.max(1) - 1]
}

fn edge_p95(input: &Input) -> f64 {
    let out = analyze(input, &default_policy()).expect("analyze");
    out.results
        .iter()
        .find(|r| r.target.name == "edge" && r.resource == kerf::analysis::Resource::Cpu)
        .map(|r| r.evidence.aggregated_usage.value)
        .expect("edge's CPU result")
}

fn edge(input: &mut Input) -> &mut ContainerObservation {
    input
        .containers
        .iter_mut()
        .find(|c| c.target.name == "edge")
        .expect("edge")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_offset_straddling_the_step_keeps_the_true_cpu_p95() {
    let ds = dataset();
    let prom = Prometheus::remote_write_receiver();
    ds.write_to(&prom.url).await;
    let got = with(&prom.url, ProtocolChoice::RemoteRead)
        .collect(&scope("raw"), WINDOW)
        .await
        .expect("remote read");
    let mut input = got.input.clone();
    let raw: Vec<(i64, f64)> = edge(&mut input).cpu.series[0]
        .samples
        .iter()
        .map(|s| (s.timestamp, s.value))
        .collect();
    let truth = p95(&raw);
    let now = edge_p95(&input);
    // The old grid: what query_range gives at the 60 s step, fed to the same engine.
    let form = [
        (
            "query",
            "container_cpu_usage_seconds_total{cluster=\"raw\",pod=\"edge-r1-aaaaa\"}".to_string(),
        ),
        ("start", format!("{}", START / 1000)),
        ("end", format!("{}", END / 1000)),
        ("step", "60".to_string()),
    ];
    let body: serde_json::Value = crate::support::client()
        .post(format!("{}/api/v1/query_range", prom.url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(form).expect("form"))
        .send()
        .await
        .expect("query_range")
        .json()
        .await
        .expect("json");
    let points: Vec<kerf::analysis::Sample> = body["data"]["result"][0]["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|p| kerf::analysis::Sample {
            timestamp: (p[0].as_f64().expect("t") * 1000.0).round() as i64,
            value: p[1].as_str().expect("v").parse().expect("float"),
        })
        .collect();
    edge(&mut input).cpu.series[0].samples = points;
    let grid = edge_p95(&input);
    eprintln!(
        "edge CPU P95: true {truth:.1} m; raw samples {now:.1} m ({:.4}×); old grid {grid:.1} m ({:.3}×)",
        now / truth,
        grid / truth
    );
    assert!(
        (now / truth - 1.0).abs() <= 0.02,
        "raw: {now} against {truth}"
    );
    assert!(
        grid / truth > 1.2,
        "the grid inflated it: {grid} against {truth}"
    );
}

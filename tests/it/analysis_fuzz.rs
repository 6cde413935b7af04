//! Seeded fuzz test of `analyze_json`: 100,000+ mutations of small valid inputs and
//! policies (structure, types, numbers, truncation, invalid UTF-8). The engine must never
//! panic, and every error must be a non-empty single line.

use std::panic::{catch_unwind, AssertUnwindSafe};

use kerf::analysis::analyze_json;
use serde_json::{json, Value};

const CASES: u64 = 100_000;

/// SplitMix64: tiny, seeded, good enough to drive mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seed_input() -> Value {
    let t0: i64 = 1_800_000_000_000;
    let samples = |base: f64| -> Value {
        (0..6)
            .map(|i| json!({"timestamp": t0 + i * 60_000, "value": base + i as f64}))
            .collect()
    };
    let sig = |v: f64| json!({"available": true, "timestamp": t0 + 300_000, "value": v});
    json!({
        "schemaVersion": "resource-analysis-input/v2",
        "evaluationTime": t0 + 300_000,
        "windowStart": t0,
        "containers": [{
            "target": {"namespace": "ns", "kind": "Deployment", "name": "api", "container": "app", "workloadUID": "uid", "release": "A"},
            "identity": {"available": true, "workloadUID": "uid", "release": "A", "timestamp": t0 + 300_000, "releaseStartedAt": 0},
            "inventory": {"available": true, "timestamp": t0 + 300_000, "eligible": 1, "observed": 1, "excluded": 0},
            "cpu": {"series": [
                {"id": "p1", "podUID": "p1", "workloadUID": "uid", "release": "A", "kind": "cpu-counter-seconds", "samples": samples(10.0)},
                {"id": "p0", "workloadUID": "uid", "release": "B", "kind": "gauge", "samples": samples(5.0)}],
                "currentRequest": sig(100.0), "currentLimit": sig(400.0)},
            "memory": {"series": [{"id": "p1", "podUID": "p1", "workloadUID": "uid", "release": "A", "kind": "gauge", "samples": samples(1e8)}],
                "currentRequest": {"available": true, "unset": true, "timestamp": t0 + 300_000, "value": 0}, "currentLimit": sig(3e8)},
            "oomKills": [{"id": "k1", "podUID": "p1", "workloadUID": "uid", "release": "A", "timestamp": t0 + 120_000}],
            "previousReleases": [{"release": "Z", "evaluationTime": t0 + 100_000, "cpu": [], "memory": [
                {"id": "z", "workloadUID": "uid", "release": "Z", "kind": "gauge", "samples": samples(3.0)}]}]
        }]
    })
}

fn seed_policy() -> Value {
    json!({"cpu": {"percentile": 50, "requestsOnly": false}, "memory": {"leakDetection": {}, "oomKilledCoefficient": 2},
           "evidence": {"minimumHistorySeconds": 60, "minimumSamples": 2}})
}

fn weird_value(rng: &mut Rng) -> Value {
    match rng.below(16) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(0),
        4 => json!(1e308),
        5 => json!(-1e308),
        6 => json!(i64::MAX),
        7 => json!(i64::MIN),
        8 => json!(u64::MAX),
        9 => json!(""),
        10 => json!("NaN"),
        11 => json!([]),
        12 => json!({}),
        13 => json!(0.5),
        14 => json!(rng.next() as i64 % 4_000_000_000_000),
        _ => json!("max"),
    }
}

fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => map
            .iter()
            .for_each(|(k, c)| pointers(c, format!("{at}/{k}"), out)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, c)| pointers(c, format!("{at}/{i}"), out)),
        _ => {}
    }
    out.push(at);
}

fn mutate_structure(v: &mut Value, rng: &mut Rng) {
    let mut all = Vec::new();
    pointers(v, String::new(), &mut all);
    for _ in 0..=rng.below(3) {
        let at = &all[rng.below(all.len())];
        let Some(node) = v.pointer_mut(at) else {
            continue;
        };
        match rng.below(5) {
            0 => *node = weird_value(rng),
            1 => {
                if let Value::Array(items) = node {
                    if let Some(first) = items.first().cloned() {
                        items.push(first);
                    }
                    items.reverse();
                }
            }
            2 => {
                if let Value::Object(map) = node {
                    if let Some(k) = map.keys().nth(rng.below(map.len())).cloned() {
                        map.remove(&k);
                    }
                }
            }
            3 => {
                if let Some(n) = node.as_f64() {
                    let factor = [-1.0, 1e20, 1e-20, 0.0, 1.000001][rng.below(5)];
                    *node = json!(n * factor);
                }
            }
            _ => {
                if let Some(n) = node.as_i64() {
                    *node = json!(n.wrapping_add((rng.next() % 2_000_000) as i64 - 1_000_000));
                }
            }
        }
    }
}

fn mutate_bytes(bytes: &mut Vec<u8>, rng: &mut Rng) {
    const TOKENS: &[&[u8]] = &[
        b"1e400",
        b"-0",
        b"9223372036854775808",
        b"NaN",
        b"\xff",
        b"\xc3",
        b"\"",
        b"{",
        b"]",
        b",",
        b"null",
    ];
    for _ in 0..=rng.below(3) {
        if bytes.is_empty() {
            return;
        }
        let at = rng.below(bytes.len());
        match rng.below(5) {
            0 => bytes[at] = rng.next() as u8,
            1 => bytes.truncate(at),
            2 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                bytes.splice(at..at, token.iter().copied());
            }
            3 => {
                let end = (at + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            _ => {
                // Replace the number starting near `at` with a hostile literal.
                if let Some(start) = bytes[at..]
                    .iter()
                    .position(|b| b.is_ascii_digit())
                    .map(|p| p + at)
                {
                    let end = bytes[start..]
                        .iter()
                        .position(|b| !b.is_ascii_digit())
                        .map_or(bytes.len(), |p| p + start);
                    let token = TOKENS[rng.below(4)];
                    bytes.splice(start..end, token.iter().copied());
                }
            }
        }
    }
}

#[test]
fn mutated_inputs_never_panic_and_errors_are_one_line() {
    let input = seed_input();
    let policy = seed_policy();
    let input_bytes = serde_json::to_vec(&input).expect("encodes");
    let policy_bytes = serde_json::to_vec(&policy).expect("encodes");
    let (mut ok, mut errors) = (0u64, 0u64);
    for case in 0..CASES {
        let mut rng = Rng(0x6B65_7266 ^ case.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let (mut in_bytes, mut pol_bytes) = (input_bytes.clone(), policy_bytes.clone());
        match rng.below(4) {
            0 => {
                let mut v = input.clone();
                mutate_structure(&mut v, &mut rng);
                in_bytes = serde_json::to_vec(&v).expect("encodes");
            }
            1 => {
                let mut v = policy.clone();
                mutate_structure(&mut v, &mut rng);
                pol_bytes = serde_json::to_vec(&v).expect("encodes");
            }
            _ => {}
        }
        match rng.below(4) {
            0 => mutate_bytes(&mut in_bytes, &mut rng),
            1 => mutate_bytes(&mut pol_bytes, &mut rng),
            _ => {}
        }
        let policy_arg = (rng.below(5) != 0).then_some(pol_bytes.as_slice());
        let pretty = rng.below(2) == 0;
        let result = catch_unwind(AssertUnwindSafe(|| {
            analyze_json(&in_bytes, policy_arg, pretty)
        }));
        match result {
            Err(_) => panic!(
                "case {case} panicked; input: {}",
                String::from_utf8_lossy(&in_bytes)
            ),
            Ok(Ok(out)) => {
                assert!(
                    serde_json::from_slice::<Value>(&out).is_ok(),
                    "case {case}: output is not JSON"
                );
                ok += 1;
            }
            Ok(Err(e)) => {
                let text = e.to_string();
                let detail = text.split_once(": ").map_or("", |(_, d)| d);
                assert!(
                    !detail.trim().is_empty(),
                    "case {case}: empty error message"
                );
                assert!(
                    !text.contains('\n') && !text.contains('\r'),
                    "case {case}: multi-line error {text:?}"
                );
                errors += 1;
            }
        }
    }
    assert_eq!(ok + errors, CASES);
    assert!(
        ok > CASES / 20,
        "too few mutated inputs analyzed successfully: {ok}"
    );
    assert!(
        errors > CASES / 20,
        "too few mutated inputs rejected: {errors}"
    );
}

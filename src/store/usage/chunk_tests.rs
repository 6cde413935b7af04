//! Chunks on disk: continued after a restart bit for bit, slots rolling on the epoch's
//! 2-hour boundaries, a cache of one chunk, and random batches (with restarts, and
//! chunks closing between them) read back exactly.

use super::fixture::*;
use super::*;
use crate::xor;

#[tokio::test]
async fn a_chunk_continued_after_reopening_equals_the_chunk_written_in_one_go() {
    let samples = every_30s(T0, 200);
    let now = T0 + SLOT_MS;
    let (dir, store) = open(&UsageOptions::default());
    let pod = [("pod", "a")];
    store
        .append("c1", vec![series("m", &pod, &samples[..77])], now)
        .await
        .expect("append");
    drop(store);
    let store = reopen(&dir, &UsageOptions::default());
    for part in samples[77..].chunks(41) {
        store
            .append("c1", vec![series("m", &pod, part)], now)
            .await
            .expect("append");
    }
    let (_dir2, at_once) = open(&UsageOptions::default());
    at_once
        .append("c1", vec![series("m", &pod, &samples)], now)
        .await
        .expect("append");
    let continued = chunk_rows(&store).await;
    assert_eq!(continued, chunk_rows(&at_once).await);
    assert_eq!(continued.len(), 1);
    assert_eq!(continued[0].3, xor::encode(&samples).expect("encodes"));
}

#[tokio::test]
async fn slots_roll_every_two_hours_on_the_epoch_boundary() {
    let (_dir, store) = open(&UsageOptions::default());
    let times = [T0 - 60_000, T0 - 1, T0, T0 + SLOT_MS - 1, T0 + SLOT_MS];
    let samples: Vec<(i64, f64)> = times.iter().map(|t| (*t, 1.0)).collect();
    let now = T0 + SLOT_MS;
    store
        .append("c1", vec![series("m", &[], &samples)], now)
        .await
        .expect("append");
    assert_eq!(
        shape(&chunk_rows(&store).await),
        [
            (T0 - SLOT_MS, true, vec![T0 - 60_000, T0 - 1]),
            (T0, false, vec![T0, T0 + SLOT_MS - 1]),
            (T0 + SLOT_MS, false, vec![T0 + SLOT_MS]),
        ],
        "the slot that ended an hour before now is closed"
    );
    assert_eq!(slot_of(T0 - 1), T0 - SLOT_MS);
}

#[tokio::test]
async fn a_cache_of_one_chunk_writes_the_same_bytes_as_a_large_one() {
    let tiny = UsageOptions {
        open_chunk_cache: 1,
        ..UsageOptions::default()
    };
    let (_d1, small) = open(&tiny);
    let (_d2, large) = open(&UsageOptions::default());
    let samples = every_30s(T0 - 4 * 3_600_000, 600);
    for part in samples.chunks(25) {
        let batch: Vec<WriteSeries> = ["a", "b", "c", "d"]
            .iter()
            .map(|p| series("m", &[("pod", p)], part))
            .collect();
        for store in [&small, &large] {
            let out = store.append("c1", batch.clone(), T0 + SLOT_MS).await;
            assert_eq!(out.expect("append").accepted, 100);
        }
    }
    assert_eq!(chunk_rows(&small).await, chunk_rows(&large).await);
    assert!(small.writer.lock().expect("writer").open.len() <= 1);
}

mod property {
    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;

    use super::*;

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 24,
            rng_seed: RngSeed::Fixed(0x6b65_7266),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn increasing_samples_appended_in_random_batches_read_back_exactly(
            steps in proptest::collection::vec((1i64..200_000, any::<u64>()), 1..400),
            cuts in proptest::collection::vec((0usize..400, any::<bool>(), 0i64..16), 0..8),
        ) {
            let mut t = T0 - 12 * 3_600_000;
            let samples: Vec<(i64, f64)> = steps
                .iter()
                .map(|&(step, value)| {
                    t += step;
                    (t, f64::from_bits(value))
                })
                .collect();
            let mut cuts = cuts;
            cuts.push((samples.len(), false, 0));
            cuts.sort();
            run(async {
                let (dir, mut store) = open(&UsageOptions::default());
                let mut at = 0;
                for (cut, restart, lag) in cuts {
                    let cut = cut.min(samples.len());
                    // The hub's clock: up to 4 hours after the batch's last sample, so
                    // chunks close between batches and late ones land in closed slots.
                    let last = samples[..cut.max(1)].last().map_or(T0, |s| s.0);
                    let now = last + lag * 900_000;
                    if restart {
                        drop(store);
                        store = reopen(&dir, &UsageOptions::default());
                    }
                    let part = series("m", &[("pod", "a")], &samples[at..cut.max(at)]);
                    let out = store.append("c1", vec![part], now).await;
                    let out = out.expect("append");
                    assert_eq!(out.accepted, (cut.max(at) - at) as u64);
                    at = cut.max(at);
                    assert_border(&chunk_rows(&store).await);
                }
                let got = read_all(&store, "c1", "m").await;
                let want: Vec<(i64, u64)> =
                    samples.iter().map(|(t, v)| (*t, v.to_bits())).collect();
                prop_assert_eq!(bits(&got[0].samples), want);
                Ok(())
            })?;
        }
    }
}

//! Appending what a cluster sent, in one write transaction per call: per series the
//! label check and the series limit, per sample the ordering rules (`Refusal`), and
//! the chunks written once per series at the end, not once per sample; then the chunks
//! whose slot ended long enough ago are closed (`chunks::close`), in the same transaction.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};

use super::cache::OpenChunks;
use super::chunks::{self, slot_of, Border, OpenChunk, Totals};
use super::labels::{render, Labels, SeriesKey};
use super::outcome::REFUSED_EXAMPLES;
use super::{
    refused, AppendOutcome, Refusal, StoreError, UsageOptions, Writer, FUTURE_TOLERANCE_MS,
};
use crate::analysis::Sample;
use crate::xor::{self, AppendError};

/// One series of a write: its full label set (`__name__` included) and its samples
/// (Unix ms, value), in increasing time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteSeries {
    pub labels: Labels,
    pub samples: Vec<(i64, f64)>,
}

/// Runs one append on the writer: everything or nothing, then the cache catches up.
pub(super) fn append(
    w: &mut Writer,
    opts: &UsageOptions,
    cluster: &str,
    batch: Vec<WriteSeries>,
    now: i64,
) -> Result<AppendOutcome, StoreError> {
    let Writer { conn, open } = w;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut call = Call {
        border: Border::read(&tx)?,
        tx: &tx,
        opts,
        cluster,
        now,
        oldest: opts.cutoff(now).max(0),
        open,
        working: HashMap::new(),
        outcome: AppendOutcome::default(),
        series_count: None,
        refused_kept: None,
    };
    for series in batch {
        call.series(series)?;
    }
    let Call {
        working, outcome, ..
    } = call;
    chunks::close(&tx, now, chunks::CLOSE_BATCH)?;
    tx.commit()?;
    open.put_back(working, now);
    Ok(outcome)
}

/// One call's state. Chunks taken from the cache live in `working` until the commit.
struct Call<'a> {
    tx: &'a Transaction<'a>,
    /// Where the chunks are (`close` moves it only after the series are written).
    border: Border,
    opts: &'a UsageOptions,
    cluster: &'a str,
    now: i64,
    /// The oldest time accepted.
    oldest: i64,
    open: &'a mut OpenChunks,
    working: HashMap<i64, OpenChunk>,
    outcome: AppendOutcome,
    series_count: Option<usize>,
    refused_kept: Option<usize>,
}

/// One series while its samples are applied.
#[derive(Default)]
struct Series {
    id: Option<i64>,
    /// Its latest chunk, and the ones this call finished (earlier slots it left).
    open: Option<OpenChunk>,
    finished: Vec<OpenChunk>,
    /// The samples of one of its chunks (slot, sample count when read), for the times
    /// at or before the last sample (retries read the same chunk again and again).
    decoded: Option<(i64, usize, Vec<Sample>)>,
    /// Reasons already given an example.
    exemplified: Vec<Refusal>,
}

/// What became of an accepted sample.
enum Fate {
    Stored,
    Duplicate,
}

impl Call<'_> {
    fn series(&mut self, write: WriteSeries) -> Result<(), StoreError> {
        let key = match SeriesKey::of(&write.labels) {
            Ok(key) => key,
            Err(why) => {
                let name = render(&write.labels);
                return self.refuse_series(&name, Refusal::BadLabels, &why, write.samples.len());
            }
        };
        let found: Option<(i64, i64)> = self
            .tx
            .prepare_cached("SELECT id, last_ms FROM series WHERE cluster = ?1 AND labels = ?2")?
            .query_row(params![self.cluster, key.text], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let mut series = match found {
            Some((id, last_ms)) => Series {
                id: Some(id),
                open: self.latest_chunk(id, last_ms)?,
                ..Series::default()
            },
            None => {
                let limit = self.opts.max_series_per_cluster;
                if self.series_count()? >= limit {
                    let why = format!("the cluster has {limit} series, its limit");
                    return self.refuse_series(
                        &key.text,
                        Refusal::SeriesLimit,
                        &why,
                        write.samples.len(),
                    );
                }
                Series::default()
            }
        };
        for (t, value) in write.samples {
            match self.sample(&mut series, t, value)? {
                Ok(Fate::Stored) => self.outcome.accepted += 1,
                Ok(Fate::Duplicate) => self.outcome.duplicates += 1,
                Err((reason, detail)) => {
                    *self.outcome.refused.entry(reason).or_default() += 1;
                    if !series.exemplified.contains(&reason) {
                        series.exemplified.push(reason);
                        self.example(&key.text, reason, &detail);
                    }
                }
            }
        }
        self.finish(series, &key)
    }

    /// Applies one sample to `s` in memory.
    fn sample(
        &mut self,
        s: &mut Series,
        t: i64,
        value: f64,
    ) -> Result<Result<Fate, (Refusal, String)>, StoreError> {
        if t < self.oldest {
            let why = format!(
                "{t} ms is before the retention's start at {} ms",
                self.oldest
            );
            return Ok(Err((Refusal::TooOld, why)));
        }
        if t > self.now.saturating_add(FUTURE_TOLERANCE_MS) {
            let why = format!("{t} ms is more than 10 minutes after now ({} ms)", self.now);
            return Ok(Err((Refusal::TooNew, why)));
        }
        let last = s.open.as_ref().and_then(|c| c.appender.last());
        if let Some((last, _)) = last.filter(|(last, _)| t <= *last) {
            return Ok(match self.stored_value(s, t)? {
                Some(bits) if bits == value.to_bits() => Ok(Fate::Duplicate),
                Some(bits) => Err((
                    Refusal::Conflict,
                    format!("{t} ms holds {}, not {value}", f64::from_bits(bits)),
                )),
                None => Err((
                    Refusal::OutOfOrder,
                    format!("{t} ms is before the last sample at {last} ms"),
                )),
            });
        }
        match s.open.as_mut() {
            Some(chunk) if chunk.slot == slot_of(t) => match chunk.appender.append(t, value) {
                Ok(()) => chunk.dirty = true,
                Err(AppendError::Full) => {
                    let why = format!("the slot at {} ms is full", chunk.slot);
                    return Ok(Err((Refusal::ChunkFull, why)));
                }
                Err(e @ AppendError::NotAfter { .. }) => {
                    return Ok(Err((Refusal::OutOfOrder, e.to_string())));
                }
            },
            _ => {
                if let Some(finished) = s.open.replace(OpenChunk::start(t, value)) {
                    s.finished.push(finished);
                }
            }
        }
        Ok(Ok(Fate::Stored))
    }

    /// The value bits stored at `t` (at or before the series' last sample), if any.
    fn stored_value(&mut self, s: &mut Series, t: i64) -> Result<Option<u64>, StoreError> {
        let slot = slot_of(t);
        let in_memory = s.open.iter().chain(&s.finished).find(|c| c.slot == slot);
        let len = in_memory.map_or(usize::MAX, |c| c.appender.len());
        let fresh = matches!(&s.decoded, Some((at, n, _)) if *at == slot && *n == len);
        if !fresh {
            let mut samples = Vec::new();
            match in_memory {
                Some(c) => {
                    xor::decode(c.appender.bytes(), i64::MIN, i64::MAX, &mut samples)
                        .map_err(|e| chunks::corrupt(s.id.unwrap_or(0), slot, e))?;
                }
                None => {
                    if let Some(id) = s.id {
                        chunks::read(self.tx, self.border, id, slot, &mut samples)?;
                    }
                }
            }
            s.decoded = Some((slot, len, samples));
        }
        let samples = s.decoded.as_ref().map(|d| &d.2[..]).unwrap_or_default();
        Ok(samples
            .binary_search_by_key(&t, |x| x.timestamp)
            .ok()
            .map(|i| samples[i].value.to_bits()))
    }

    /// Writes what `s` changed: its series row (created when new and something was
    /// accepted) and each chunk it changed, once.
    fn finish(&mut self, s: Series, key: &SeriesKey) -> Result<(), StoreError> {
        let Series {
            id,
            open,
            mut finished,
            ..
        } = s;
        let Some(mut open) = open else {
            return Ok(());
        };
        let last_ms = open.appender.last().map_or(open.slot, |(t, _)| t);
        let first = finished.first().unwrap_or(&open);
        let first_ms = chunks::first_time(first.appender.bytes()).unwrap_or(first.slot);
        let changed: Vec<&mut OpenChunk> = finished
            .iter_mut()
            .chain(std::iter::once(&mut open))
            .filter(|c| c.dirty)
            .collect();
        let mut grown = Totals::default();
        for c in &changed {
            grown.add(c.growth());
        }
        let id = match id {
            Some(id) if changed.is_empty() => {
                self.working.insert(id, open);
                return Ok(());
            }
            Some(id) => {
                self.tx
                    .prepare_cached(
                        "UPDATE series SET last_ms = ?2,
                         chunks = chunks + ?3, samples = samples + ?4, bytes = bytes + ?5
                         WHERE id = ?1",
                    )?
                    .execute(params![
                        id,
                        last_ms,
                        grown.chunks,
                        grown.samples,
                        grown.bytes
                    ])?;
                id
            }
            None => {
                let id = self
                    .tx
                    .prepare_cached(
                        "INSERT INTO series (cluster, labels, metric, namespace, pod,
                         first_ms, last_ms, chunks, samples, bytes)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
                    )?
                    .query_row(
                        params![
                            self.cluster,
                            key.text,
                            key.metric,
                            key.namespace,
                            key.pod,
                            first_ms,
                            last_ms,
                            grown.chunks,
                            grown.samples,
                            grown.bytes
                        ],
                        |r| r.get(0),
                    )?;
                if id > chunks::MAX_SERIES_ID {
                    // A chunk id holds 32 bits of series id: the whole append is undone.
                    return Err(rusqlite::Error::IntegralValueOutOfRange(0, id).into());
                }
                *self.series_count.get_or_insert(0) += 1;
                refused::forget(self.tx, self.cluster, &key.text)?;
                id
            }
        };
        for chunk in changed {
            chunks::write(self.tx, self.border, id, chunk)?;
        }
        self.working.insert(id, open);
        Ok(())
    }

    /// The series' latest chunk: this call's, the cache's, or read back and resumed.
    fn latest_chunk(&mut self, id: i64, last_ms: i64) -> Result<Option<OpenChunk>, StoreError> {
        if let Some(chunk) = self.working.remove(&id).or_else(|| self.open.take(id)) {
            return Ok(Some(chunk));
        }
        chunks::load(self.tx, self.border, id, slot_of(last_ms))
    }

    fn series_count(&mut self) -> Result<usize, StoreError> {
        if let Some(n) = self.series_count {
            return Ok(n);
        }
        let n: i64 = self
            .tx
            .prepare_cached("SELECT COUNT(*) FROM series WHERE cluster = ?1")?
            .query_row([self.cluster], |r| r.get(0))?;
        let n = usize::try_from(n).unwrap_or(0);
        self.series_count = Some(n);
        Ok(n)
    }

    fn refuse_series(
        &mut self,
        name: &str,
        reason: Refusal,
        why: &str,
        samples: usize,
    ) -> Result<(), StoreError> {
        *self.outcome.refused.entry(reason).or_default() += samples as u64;
        self.example(name, reason, why);
        let kept = self.opts.refused_series_kept;
        let seen = refused::Seen {
            cluster: self.cluster,
            series: name,
            reason,
            samples: samples as u64,
            now: self.now,
        };
        refused::record(self.tx, &seen, kept, &mut self.refused_kept)
    }

    fn example(&mut self, name: &str, reason: Refusal, detail: &str) {
        if self.outcome.refused_examples.len() < REFUSED_EXAMPLES {
            let line = format!("{name}: {reason} ({detail})");
            self.outcome.refused_examples.push(line);
        }
    }
}

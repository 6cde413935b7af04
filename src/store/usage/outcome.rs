//! What an append did: samples accepted, duplicates, and refusals by [`Refusal`], the
//! rules of what is refused, with a few examples naming the series.

use std::collections::BTreeMap;

/// At most this many `refused_examples` per call.
pub const REFUSED_EXAMPLES: usize = 10;

/// Why samples were refused. A sample after its series' last stored one is accepted;
/// one at a time already stored with a bit-identical value (`f64::to_bits`) is a
/// duplicate (a retried batch whose acknowledgement was lost), counted and accepted
/// silently. The rest is refused, checked in this order: bounds (`TooOld`, `TooNew`),
/// then the stored samples (`Conflict`, `OutOfOrder`). NaNs are values like any other,
/// kept bit for bit (Prometheus's staleness marker is one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Refusal {
    /// The whole series: no non-empty `__name__`, or a label name Prometheus refuses.
    BadLabels,
    /// The whole series: new, and the cluster has `max_series_per_cluster` already.
    SeriesLimit,
    /// A time already stored, with a different value.
    Conflict,
    /// Before the series' last stored sample, at a time not stored.
    OutOfOrder,
    /// Older than the retention (now − retention), or before 1970.
    TooOld,
    /// More than [`super::FUTURE_TOLERANCE_MS`] after now.
    TooNew,
    /// Its 2-hour slot holds 65,535 samples already (one every 110 ms).
    ChunkFull,
}

impl Refusal {
    /// Every reason, in order.
    pub const ALL: [Refusal; 7] = [
        Refusal::BadLabels,
        Refusal::SeriesLimit,
        Refusal::Conflict,
        Refusal::OutOfOrder,
        Refusal::TooOld,
        Refusal::TooNew,
        Refusal::ChunkFull,
    ];

    /// The stable name (stored, and a `/metrics` label value).
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::BadLabels => "bad_labels",
            Refusal::SeriesLimit => "series_limit",
            Refusal::Conflict => "conflict",
            Refusal::OutOfOrder => "out_of_order",
            Refusal::TooOld => "too_old",
            Refusal::TooNew => "too_new",
            Refusal::ChunkFull => "chunk_full",
        }
    }

    /// The reason named `name` by [`Refusal::as_str`].
    pub fn from_name(name: &str) -> Option<Refusal> {
        Refusal::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// True for reasons that refuse a whole series (remembered for readiness).
    pub fn is_series_wide(self) -> bool {
        matches!(self, Refusal::BadLabels | Refusal::SeriesLimit)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::BadLabels => "bad labels",
            Refusal::SeriesLimit => "over the cluster's series limit",
            Refusal::Conflict => "a different value at a time already stored",
            Refusal::OutOfOrder => "out of order",
            Refusal::TooOld => "too old",
            Refusal::TooNew => "too far in the future",
            Refusal::ChunkFull => "too many samples in one 2-hour chunk",
        })
    }
}

/// What one append did. Counts are samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppendOutcome {
    /// Samples stored by this call.
    pub accepted: u64,
    /// Samples already stored with the same value (accepted, not stored again).
    pub duplicates: u64,
    /// Samples refused, by reason (a series refused whole counts all its samples).
    pub refused: BTreeMap<Refusal, u64>,
    /// A few `metric{labels}: reason (detail)` lines, at most one per series and
    /// reason, at most [`REFUSED_EXAMPLES`].
    pub refused_examples: Vec<String>,
}

impl AppendOutcome {
    /// Samples refused, all reasons.
    pub fn refused_samples(&self) -> u64 {
        self.refused.values().sum()
    }
}

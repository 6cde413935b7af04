//! The vocabulary of a recommendation run's record: its status, phase and trigger, the
//! milliseconds it spent per phase, what its collection read and the errors it met,
//! each with the spelling the database and the API use. A leaf, so `store` (which keeps
//! the records) and `runs` (which writes them, and re-exports all of this) share it.
//! The states and their transitions: `docs/contracts/runs.md`, "Run states".

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A stored or requested spelling that names no value of its kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a run {what} (one of {expected})")]
pub struct UnknownValue {
    /// `status`, `phase` or `trigger`.
    pub what: &'static str,
    pub value: String,
    /// The spellings that are.
    pub expected: &'static str,
}

/// A stored JSON column of a run that does not read as its type.
#[derive(Debug, thiserror::Error)]
#[error("run column {column} holds {text:?}, which does not read: {source}")]
pub struct BadColumn {
    pub column: &'static str,
    pub text: String,
    pub source: serde_json::Error,
}

/// An enum of unit variants spelled in lowercase words, as stored and served.
macro_rules! spelled {
    ($(#[$doc:meta])* $name:ident, $what:literal, $expected:literal,
     { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The spelling stored and served.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value spelled `text`, or an error naming it.
            pub fn parse(text: &str) -> Result<$name, UnknownValue> {
                match text {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownValue {
                        what: $what,
                        value: text.to_string(),
                        expected: $expected,
                    }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = UnknownValue;
            fn from_str(s: &str) -> Result<$name, UnknownValue> {
                $name::parse(s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let text = std::borrow::Cow::<str>::deserialize(d)?;
                $name::parse(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}

spelled!(
    /// Where a run stands: `running` until it ends, then how it ended.
    RunStatus, "status", "running, succeeded, partial, failed", {
        /// Started and not ended (or left so by a process that stopped).
        Running => "running",
        /// Every group collected and every workload analyzed.
        Succeeded => "succeeded",
        /// Some recommendations made, but a group or a workload failed.
        Partial => "partial",
        /// Nothing made: the datasource, the plan, every group or the store failed.
        Failed => "failed",
    }
);

impl RunStatus {
    /// Whether the run has ended.
    pub fn is_finished(self) -> bool {
        self != RunStatus::Running
    }
}

spelled!(
    /// What a run is doing.
    Phase, "phase", "collect, analyze, store, done", {
        /// Planning (the inventory) and collecting usage.
        Collect => "collect",
        /// Analyzing collected workloads.
        Analyze => "analyze",
        /// Writing a chunk of recommendations.
        Store => "store",
        /// Ended (whatever the status).
        Done => "done",
    }
);

spelled!(
    /// What started a run.
    Trigger, "trigger", "scheduled, manual", {
        /// The recommender schedule fired.
        Scheduled => "scheduled",
        /// `POST /v1/clusters/{cluster}/runs` (or a caller of `Runs::start`).
        Manual => "manual",
    }
);

/// Milliseconds spent per phase, summed (phases overlap, so the sum can exceed the
/// run's wall time). Empty while the run runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PhaseMs(BTreeMap<Phase, u64>);

impl PhaseMs {
    /// The times of an ended run: collect, analyze and store, each given.
    pub fn ended(collect: u64, analyze: u64, store: u64) -> PhaseMs {
        PhaseMs(BTreeMap::from([
            (Phase::Collect, collect),
            (Phase::Analyze, analyze),
            (Phase::Store, store),
        ]))
    }

    /// The milliseconds of `phase`, if recorded.
    pub fn get(&self, phase: Phase) -> Option<u64> {
        self.0.get(&phase).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What a run's collection read (the API's `collect`), once the plan is in. Figures a
/// row written by an earlier version lacks read as zero.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct CollectSummary {
    /// HTTP queries issued (0 for the demo).
    pub queries: u64,
    pub series: u64,
    /// Samples handed to the engine.
    pub samples: u64,
    /// Answer bytes received.
    pub bytes: u64,
    /// Samples decoded from answers.
    pub samples_decoded: u64,
    /// How usage was read (empty for the demo).
    pub protocol: String,
    /// The datasource's own phases, summed over groups.
    pub phase_ms: BTreeMap<String, u64>,
    pub groups: u64,
    pub groups_failed: u64,
    pub excluded: Excluded,
}

/// What the recommender settings' `excludedNamespaces` left out of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Excluded {
    /// Namespaces seen and left out, sorted.
    pub namespaces: Vec<String>,
    /// Workloads with a pod alive at the end in them.
    pub workloads: u64,
}

/// One error a run met, as its `errors` list shows it (told apart by which name it has
/// besides `message`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RunErrorEntry {
    /// A group that could not be collected (`group` names its namespaces).
    Group { group: String, message: String },
    /// A workload that could not be analyzed (`namespace/kind/name`).
    Workload { workload: String, message: String },
    /// What failed the whole run.
    Run { message: String },
}

impl RunErrorEntry {
    pub fn message(&self) -> &str {
        match self {
            RunErrorEntry::Group { message, .. }
            | RunErrorEntry::Workload { message, .. }
            | RunErrorEntry::Run { message } => message,
        }
    }
}

/// The errors a run met, in the order met. Shown (`Display`) as the stored JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunErrors(Vec<RunErrorEntry>);

impl RunErrors {
    pub fn push(&mut self, entry: RunErrorEntry) {
        self.0.push(entry);
    }

    pub fn iter(&self) -> std::slice::Iter<'_, RunErrorEntry> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The same errors, each message rewritten by `shown` (what a reader may see).
    pub fn shown_as(&self, shown: impl Fn(&str) -> String) -> RunErrors {
        let entries = self.0.iter().map(|e| match e {
            RunErrorEntry::Group { group, message } => RunErrorEntry::Group {
                group: group.clone(),
                message: shown(message),
            },
            RunErrorEntry::Workload { workload, message } => RunErrorEntry::Workload {
                workload: workload.clone(),
                message: shown(message),
            },
            RunErrorEntry::Run { message } => RunErrorEntry::Run {
                message: shown(message),
            },
        });
        RunErrors(entries.collect())
    }
}

impl From<Vec<RunErrorEntry>> for RunErrors {
    fn from(entries: Vec<RunErrorEntry>) -> RunErrors {
        RunErrors(entries)
    }
}

impl fmt::Display for RunErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_column(self))
    }
}

/// The stored text of a JSON column: compact, keys sorted (as `serde_json` writes a
/// tree without `preserve_order`), so the text is what earlier versions wrote.
pub fn to_column<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .map(|v| v.to_string())
        .expect("run columns are plain data with string keys")
}

/// Reads a stored JSON column as `T`, or says which column holds what.
pub fn from_column<T: serde::de::DeserializeOwned>(
    column: &'static str,
    text: &str,
) -> Result<T, BadColumn> {
    serde_json::from_str(text).map_err(|source| BadColumn {
        column,
        text: text.to_string(),
        source,
    })
}

/// The stored text of a run's collection figures: `{}` before the plan is in.
pub fn collect_column(collect: Option<&CollectSummary>) -> String {
    collect.map_or_else(|| "{}".to_string(), to_column)
}

/// Reads the collection figures column (`{}` = none yet).
pub fn collect_from_column(text: &str) -> Result<Option<CollectSummary>, BadColumn> {
    let tree: serde_json::Value = from_column("collect_stats", text)?;
    if tree.as_object().is_some_and(|o| o.is_empty()) {
        return Ok(None);
    }
    from_column("collect_stats", text).map(Some)
}

#[cfg(test)]
mod tests;

//! OOM-kill handling (contract §2 OOMKill, §8): validation of every supplied event,
//! selection for the current rollout, and the memory request floor.

use std::collections::BTreeMap;

use super::error::go_quote;
use super::series::OomKill;

/// Validates all events (before any filtering) and rejects conflicting duplicates.
pub(crate) fn validate_oom_kills(kills: &[OomKill]) -> Result<(), String> {
    let mut by_id: BTreeMap<&str, &OomKill> = BTreeMap::new();
    for (i, kill) in kills.iter().enumerate() {
        let problem = if kill.id.is_empty() {
            Some("OOM kill ID is required")
        } else if kill.workload_uid.is_empty() || kill.release.is_empty() {
            Some("OOM kill workload UID and release are required")
        } else if kill.timestamp <= 0 {
            Some("OOM kill timestamp must be positive Unix milliseconds")
        } else if !(kill.memory_limit_bytes.is_finite() && kill.memory_limit_bytes >= 0.0) {
            Some("OOM kill memory limit must be finite and nonnegative")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(format!("oomKills[{i}]: {problem}"));
        }
        match by_id.get(kill.id.as_str()) {
            Some(seen) if *seen != kill => {
                return Err(format!(
                    "oomKills[{i}]: conflicting observations for OOM kill {}",
                    go_quote(&kill.id)
                ));
            }
            Some(_) => {}
            None => {
                by_id.insert(&kill.id, kill);
            }
        }
    }
    Ok(())
}

/// Events of the target rollout within `[start, end]`, de-duplicated and sorted by
/// (timestamp, id).
pub(crate) fn select_oom_kills<'a>(
    kills: &'a [OomKill],
    workload_uid: &str,
    release: &str,
    start: i64,
    end: i64,
) -> Vec<&'a OomKill> {
    let mut selected: Vec<&OomKill> = kills
        .iter()
        .filter(|k| k.workload_uid == workload_uid && k.release == release)
        .filter(|k| k.timestamp >= start && k.timestamp <= end)
        .collect();
    selected.sort_by(|a, b| (a.timestamp, &a.id).cmp(&(b.timestamp, &b.id)));
    selected.dedup_by(|a, b| a.id == b.id);
    selected
}

/// The sizing bases an event without a known limit may fall back to.
pub(crate) struct FloorBases {
    /// Current limit when it is usable and positive, else 0.
    pub current_limit: f64,
    /// Current request value.
    pub current_request: f64,
    /// Usage × headroom (0 when usage is blocked).
    pub usage_baseline: f64,
    /// `memory.oomKilledCoefficient`.
    pub coefficient: f64,
}

/// The OOM request floor and how it was derived.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OomFloor {
    pub floor: f64,
    pub used_current_fallback: bool,
    pub used_usage_fallback: bool,
}

/// Max over events of base × coefficient; the coefficient never compounds.
pub(crate) fn oom_floor(kills: &[&OomKill], bases: &FloorBases) -> Result<OomFloor, String> {
    let mut out = OomFloor {
        floor: 0.0,
        used_current_fallback: false,
        used_usage_fallback: false,
    };
    for kill in kills {
        let base = if kill.memory_limit_bytes > 0.0 {
            kill.memory_limit_bytes
        } else if bases.current_limit > 0.0 {
            out.used_current_fallback = true;
            bases.current_limit
        } else if bases.current_request > 0.0 {
            out.used_current_fallback = true;
            bases.current_request
        } else {
            out.used_usage_fallback = true;
            bases.usage_baseline
        };
        let floor = base * bases.coefficient;
        if !floor.is_finite() {
            return Err("OOM suggested value overflow".into());
        }
        out.floor = out.floor.max(floor);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kill(id: &str, ts: i64, limit: f64) -> OomKill {
        OomKill {
            id: id.into(),
            pod_uid: String::new(),
            workload_uid: "uid".into(),
            release: "A".into(),
            timestamp: ts,
            memory_limit_bytes: limit,
        }
    }

    const MIB: f64 = 1024.0 * 1024.0;

    #[test]
    fn a_512_mib_limit_gives_a_768_mib_floor_without_compounding() {
        let kills = [kill("a", 1, 512.0 * MIB), kill("b", 2, 512.0 * MIB)];
        let refs: Vec<&OomKill> = kills.iter().collect();
        let bases = FloorBases {
            current_limit: 0.0,
            current_request: 0.0,
            usage_baseline: 0.0,
            coefficient: 1.5,
        };
        let floor = oom_floor(&refs, &bases).expect("finite");
        assert_eq!(floor.floor, 768.0 * MIB);
        assert!(!floor.used_current_fallback && !floor.used_usage_fallback);
    }

    #[test]
    fn timestamp_only_events_fall_back_to_limit_then_request_then_usage() {
        let k = [kill("a", 1, 0.0)];
        let refs: Vec<&OomKill> = k.iter().collect();
        let mut bases = FloorBases {
            current_limit: 100.0,
            current_request: 50.0,
            usage_baseline: 10.0,
            coefficient: 2.0,
        };
        assert_eq!(oom_floor(&refs, &bases).expect("ok").floor, 200.0);
        bases.current_limit = 0.0;
        let by_request = oom_floor(&refs, &bases).expect("ok");
        assert_eq!(by_request.floor, 100.0);
        assert!(by_request.used_current_fallback);
        bases.current_request = 0.0;
        let by_usage = oom_floor(&refs, &bases).expect("ok");
        assert_eq!(by_usage.floor, 20.0);
        assert!(by_usage.used_usage_fallback && !by_usage.used_current_fallback);
    }

    #[test]
    fn identical_duplicates_are_accepted_and_conflicts_rejected() {
        assert!(validate_oom_kills(&[kill("a", 1, 0.0), kill("a", 1, 0.0)]).is_ok());
        let err =
            validate_oom_kills(&[kill("a", 1, 0.0), kill("a", 2, 0.0)]).expect_err("conflict");
        assert!(err.contains("conflicting observations for OOM kill \"a\""));
    }

    #[test]
    fn kills_at_window_edges_are_selected_and_sorted_by_time_then_id() {
        let kills = [
            kill("z", 10, 0.0),
            kill("b", 5, 0.0),
            kill("a", 5, 0.0),
            kill("a", 5, 0.0),
            kill("late", 11, 0.0),
        ];
        let ids: Vec<&str> = select_oom_kills(&kills, "uid", "A", 5, 10)
            .iter()
            .map(|k| k.id.as_str())
            .collect();
        assert_eq!(ids, vec!["a", "b", "z"]);
    }
}

//! The values a workload gets when no policy sets a field. Conservative on purpose: kerf
//! recommends everywhere but changes nothing until a policy says `auto-patch`.

use super::model::{Mode, Strategy};

/// Recommend and record, apply only on approval.
pub const MODE: Mode = Mode::Audit;
pub const LEARNING_PERIOD: &str = "7d";
pub const MIN_CONFIDENCE: u32 = 70;
pub const COOLDOWN: &str = "24h";
/// 5 %: smaller moves are not worth a restart.
pub const CHANGE_TOLERANCE: f64 = 0.05;
pub const ROLLBACK_OOM_KILLS: u32 = 1;
pub const ROLLBACK_RESTARTS: u32 = 3;
pub const ROLLBACK_THROTTLING: f64 = 0.25;
pub const WATCH_DURATION: &str = "30m";
pub const STRATEGY: Strategy = Strategy::InPlace;
pub const FALLBACK_AFTER: &str = "10m";
pub const HPA_COORDINATION: bool = true;

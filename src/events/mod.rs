//! Workload audit events of the events contract: the vocabulary (`wellknown`) and the
//! validation of agent batches, and the hub's own configuration changes
//! (`config_change`). Storage lives in `store`, HTTP in `api`.

pub mod config_change;
pub mod quantity;
pub mod validate;
pub mod wellknown;

pub use validate::{validate_batch, BatchError, ItemError, ValidEvent, MAX_BATCH_ITEMS};

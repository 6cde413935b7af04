//! The benches' harness is the tests' own (`tests/it/support`), included file by file,
//! not copied: the client, the waits, the `kerf` process and its ready file, the real
//! Prometheus and the generated fleet, the notification receivers. `child` (a child process measured by `wait4`)
//! and `procfs` (a running process's memory and CPU) are the benches' alone.

#![allow(dead_code, unused_imports)]

#[path = "../../tests/it/support/api.rs"]
pub mod api;
#[path = "../../tests/it/support/binary.rs"]
pub mod binary;
pub mod child;
#[path = "../../tests/it/support/fleet_tsdb.rs"]
pub mod fleet_tsdb;
pub mod procfs;
#[path = "../../tests/it/support/prometheus.rs"]
pub mod prometheus;
#[path = "../../tests/it/support/receiver.rs"]
pub mod receiver;
#[path = "../../tests/it/support/wait.rs"]
pub mod wait;

pub use api::{client, Api};
pub use binary::{bin, DataDir, Demo, Kerf};
pub use wait::{eventually, secs, within};

//! kerf rightsizes Kubernetes workloads: it measures what containers use, recommends
//! requests and limits with evidence, and keeps an audit trail of every decision.
//!
//! Module map (the architecture's source of truth; arrows point one way):
//! - `analysis`: the pure recommendation engine (no IO, clock, randomness, async or
//!   logging). Imports nothing else of kerf.
//! - `wire`: what travels between hub and agent (config feed, recommendation feed,
//!   heartbeat, typed agent events, the recommendation summary), Serialize +
//!   Deserialize. Uses only `policy` and `timestamp`; no store, no HTTP, so the agent
//!   imports it in either build.
//! - `events`: the audit-event vocabulary and batch validation (pure), validating into
//!   `wire::AgentEvent`.
//! - `store`: SQLite: migrations, one writer + readers, every SQL statement. Knows
//!   `events` types, nothing of HTTP.
//! - `auth`: tokens and principals. Uses `store`.
//! - `api`: HTTP handlers, the route table with per-route permissions, errors. Uses
//!   `store`, `auth`, `events`, `runs`, `metrics`, `ui`.
//! - `server`: listener, TLS, graceful shutdown; starts and supervises the background
//!   jobs. Uses `api`, `jobs`, `runs`, `fleet`.
//! - `jobs`: the supervised job runner (named jobs, status, graceful stop; a panic in a
//!   job stops the hub non-zero, naming it). Imports nothing of kerf.
//! - `clock`: the one `Clock` (system and manual). Imports nothing of kerf; below the
//!   top of the process everything takes `now` from its caller.
//! - `cli` / `commands` / `demo`: the command line (`demo` wires the demo fleet into
//!   `server`). Uses everything above; holds no domain logic.
//! - `config`, `telemetry`, `shutdown`, `tls`, `metrics`, `ui`: infrastructure leaves.
//!
//! - `datasource`: usage from Prometheus-compatible APIs or the demo fleet, mapped into
//!   the engine's input. Uses `analysis` types.
//! - `runs`: recommendation runs (collect → analyze → store), their schedule,
//!   progress, retention, recommender and pricing settings and savings. Uses `datasource`, `analysis`, `store`;
//!   knows nothing of HTTP. After each run it asks `fleet::readiness` to re-evaluate
//!   the cluster (the one call back into `fleet`).
//! - `fleet`: automation pauses and auto-resume, cluster readiness, agent settings
//!   (`agent_settings`) and the per-workload effective policy of the config feed. Uses
//!   `store`, `runs` (datasource, settings), `policy`, `events`; knows nothing of HTTP.
//!
//! - `cluster`: the agent's one view of a Kubernetes cluster (model, `Cluster` trait,
//!   errors that keep the API server's Status) and its kube-rs face (feature `kube`).
//!   Uses nothing else of kerf.
//! - `sim`: the simulated world (usage shapes, demo catalogue, the kubelet's decisions)
//!   with its two faces: a kubelet against a real API server (tests) and the in-process
//!   `Cluster` (demo). Uses `cluster`, `clock`; `datasource` reads its shapes. Only
//!   `sim::shape` and `sim::catalogue` are in the hub-only build.
//!
//! Later parts plug in beside these: `notify` and `agent` (feature `agent`, on `cluster`).

pub mod analysis;
pub mod api;
pub mod auth;
pub mod bootstrap;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod datasource;
pub mod demo;
pub mod events;
pub mod fleet;
pub mod jobs;
pub mod metrics;
pub mod policy;
pub mod runs;
pub mod server;
pub mod shutdown;
pub mod sim;
pub mod store;
pub mod telemetry;
pub mod timestamp;
pub mod tls;
pub mod ui;
pub mod wire;

//! kerf rightsizes Kubernetes workloads: it measures what containers use, recommends
//! requests and limits with evidence, and keeps an audit trail of every decision.
//!
//! Module map: the architecture's source of truth. Arrows point one way, from the top
//! of the process down; "uses" lists every module a module may import, and the module
//! fence test (`tests/it/module_fence.rs`) holds the same table and refuses any other
//! arrow and any cycle.
//!
//! Leaves (import nothing of kerf):
//! - `analysis`: the pure recommendation engine (no IO, clock, randomness, async or
//!   logging).
//! - `clock`: the one `Clock` (system and manual); below the top of the process
//!   everything takes `now` from its caller.
//! - `jobs`: the supervised job runner (named jobs, status, graceful stop; a panic in a
//!   job stops the hub non-zero, naming it) and the throttled log line for trouble
//!   that repeats.
//! - `names`: what cluster, user, team and token names may be.
//! - `fingerprint`: stable FNV-1a hashes of text (ids and seeds that never change).
//! - `timestamp`: RFC 3339 ⇄ Unix milliseconds.
//! - `config`, `shutdown`, `tls`, `metrics`, `ui`: infrastructure.
//!
//! Vocabulary and data:
//! - `policy`: the RightsizingPolicy model, validation and effective-policy resolution
//!   (pure). Uses `analysis`, `names`, `timestamp`.
//! - `wire`: what travels between hub and agent (config feed, recommendation feed,
//!   heartbeat, typed agent events with `EventType`/`Reason`, the recommendation
//!   summary), Serialize + Deserialize. Uses `policy`; no store, no HTTP, so the agent
//!   imports it in either build.
//! - `events`: the audit-event vocabulary and batch validation into `wire::AgentEvent`,
//!   and the configuration-change vocabulary (pure). Uses `wire`, `timestamp`.
//! - `store`: SQLite: migrations, one writer + readers, every SQL statement; hands the
//!   domain a `Read` / `Tx` unit of work, so transactions and rusqlite types stay
//!   inside. Uses `events`, `policy`, `wire`, `timestamp`.
//! - `operation`: `OpError`, what every hub operation returns when it does not do what
//!   was asked. Uses `store`.
//! - `datasource`: usage from Prometheus-compatible APIs (streamed remote read or
//!   `query_range`) or the demo fleet, mapped into the engine's input and streamed to
//!   runs workload by workload. Uses `analysis`, `clock` (probes ask the real present),
//!   `fingerprint`, `sim` (the demo fleet's catalogue and shapes), `tls`.
//! - (`cluster` and `sim`: see "The cluster side" below.)
//!
//! Domain (operations below the API: store, now, audit context and typed input in,
//! typed output or `OpError` out; nothing of HTTP):
//! - `auth`: users, passwords, sessions, tokens, teams and principals; the account and
//!   team operations (`auth::accounts`, `auth::teams`). Uses `store`, `events`,
//!   `operation`, `names`, `clock`, `config`, `timestamp`.
//! - `readiness`: the per-cluster readiness rule and its evaluation (after heartbeats,
//!   runs, datasource checks, ticks). Uses `store`, `events`, `wire`, `timestamp`.
//! - `runs`: recommendation runs (collect → analyze → store), their schedule and
//!   retention jobs, progress, recommender and pricing settings (saved as operations)
//!   and savings, and the backtest of a policy on recorded usage. Uses `analysis`,
//!   `datasource`, `policy`, `readiness`, `store`, `events`, `operation`, `wire`,
//!   `metrics`, `clock`, `jobs` (a run's task is watched like a job: a panic is recorded
//!   as a failed run), `timestamp`, `sim` (in tests only: the backtest's ground truth).
//! - `notify`: notification channels and rules, the audit-cursor dispatcher and
//!   per-channel senders (Slack, Teams, webhook with HMAC), payloads and the weekly
//!   digest; its dispatcher and digest are jobs. Uses `auth`, `clock`, `config`,
//!   `datasource` (sealed secrets), `events`, `jobs`, `metrics`, `runs`, `store`,
//!   `timestamp`, `tls`.
//! - `fleet`: clusters, pauses, datasources, policies, per-workload overrides,
//!   approvals and effective policy, the agent feeds, what agents send, and the ticker
//!   job, and the fleet the config file declares (`[fleet]`, applied at start). Uses
//!   `auth`, `config`, `datasource`, `events`, `names`, `operation`, `policy`,
//!   `readiness`, `runs`, `store`, `timestamp`, `wire`.
//!
//! The top:
//! - `api`: HTTP handlers (parse → call a domain operation → serialize), the route
//!   table with per-route permissions, errors, the OpenAPI document. Uses `auth`,
//!   `fleet`, `notify`, `readiness`, `runs` (the domain), `analysis`, `datasource`,
//!   `events`, `operation`, `policy`, `store`, `wire` (the vocabulary), `clock`,
//!   `config`, `jobs`, `metrics`, `timestamp`, `ui`, `cluster` (Kubernetes quantities
//!   of the recommendations export) and `agent` (only for `api::in_process`, the hub
//!   as the in-process agent reaches it).
//! - `server`: listener, TLS, connection bounds (cap with eviction of the longest-idle,
//!   header, idle and handshake timeouts), graceful shutdown; starts and supervises the
//!   jobs, and the agent of `all-in-one` (a job) or of `mode = "agent"`
//!   (`server::agent`). Uses `agent`, `api`, `auth`, `clock`, `cluster`, `config`,
//!   `datasource`, `events`, `fleet`, `jobs`, `metrics`, `notify`, `operation`, `runs`,
//!   `shutdown`, `store`, `tls`, `wire`.
//! - `commands`: the offline commands (they call the same operations as the API;
//!   backup and restore carry the datasource secret key; `kerf scan` collects and
//!   analyzes with `datasource` and `runs` as a hub run does and prints with `api`'s
//!   export plan; `kerf backtest` asks a hub). Uses `analysis`, `api`, `auth`, `clock`,
//!   `config`, `datasource`, `events`, `fleet`, `operation`, `policy`, `runs`, `server`,
//!   `store`, `timestamp`, `tls`, `wire`.
//! - `demo`: wires the demo fleet into `server`, with one in-process agent per demo
//!   cluster acting on the sim's in-process cluster, and the demo's policies. Uses
//!   `agent`, `api`, `auth`, `clock`, `commands`, `config`, `datasource`, `fleet`,
//!   `jobs`, `operation`, `policy`, `runs`, `server`, `sim`, `store`.
//! - `cli`: the command line's arguments and dispatch. Uses `commands`, `config`,
//!   `demo`, `server`, `telemetry`.
//! - `telemetry`: log output. Uses `config`.
//!
//! The cluster side (the agent builds on it):
//! - `cluster`: the agent's one view of a Kubernetes cluster (model, `Cluster` trait,
//!   errors that keep the API server's Status, kerf's RightsizingRecommendation
//!   records, the watched `View`, the kubelets' cAdvisor CPU counters) and its kube-rs
//!   face (feature `kube`, reflectors, the kubelet clients).
//!   Uses `fingerprint` (short record names).
//! - `sim`: the simulated world (usage shapes, demo catalogue, the kubelet's decisions)
//!   with its two faces: a kubelet against a real API server (tests) and the in-process
//!   `Cluster` (demo). Uses `cluster`, `clock`, `fingerprint`; the demo
//!   datasource reads its shapes and its one rule of what limits do to them. Only
//!   `sim::shape`, `sim::catalogue`, `sim::guarded` (the demo's guardrail workloads) and
//!   `sim::live` are in the hub-only build.
//!
//! - `agent` (feature `agent`): reads the hub's feeds through its `Hub` interface,
//!   decides per workload (`agent::decide`, pure and fenced like `analysis`), changes
//!   workloads through `cluster` (in place or by rollout), reports every decision as a
//!   contract event (bounded outbox) and keeps its memory in the RightsizingRecommendation
//!   records. Uses `clock`, `cluster`, `jobs`, `metrics`, `policy`, `timestamp`, `tls`,
//!   `wire`; never `store` (in all-in-one it reaches the hub through `api::in_process`).

#[cfg(feature = "agent")]
pub mod agent;
pub mod analysis;
pub mod api;
pub mod auth;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod datasource;
pub mod demo;
pub mod events;
pub mod fingerprint;
pub mod fleet;
pub mod jobs;
pub mod metrics;
pub mod names;
pub mod notify;
pub mod operation;
pub mod policy;
pub mod readiness;
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

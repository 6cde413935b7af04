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
//! - `quantity`: Kubernetes resource quantities: what is one, and the number it stands
//!   for (the one suffix table).
//! - `secret`: the `Secret` value (Debug, Display and Serialize give `***`; the one
//!   mask) and the secret box: `SecretKey` seals stored secrets with the data dir's
//!   `secret.key` (datasource credentials, channel URLs and signing secrets, SMTP
//!   passwords).
//! - `cron`: the one cron reader and evaluator (croner) and IANA zones (chrono-tz),
//!   pure: run schedules, digest slots and maintenance and freeze windows ask it.
//! - `backoff`: the one growing wait between failed tries (initial, factor, cap), pure:
//!   the accept loop, agent event delivery, datasource requests, notification retries.
//! - `workload`: the one workload identity, `WorkloadKey` (namespace, kind, name; the
//!   kind as text, or the agent's `WorkloadKind`), every module's name for a workload;
//!   and `ContainerRole` (app container, native sidecar, init container) with the pod's
//!   effective request as Kubernetes counts it.
//! - `run_vocabulary`: what a run's record says: `RunStatus`, `Phase`, `Trigger`,
//!   `PhaseMs`, `CollectSummary`, `RunErrors`, with their stored and served spellings
//!   (a leaf so `store` keeps typed records; `runs` re-exports it).
//! - `shutdown`, `tls`, `metrics`, `ui`: infrastructure.
//! - `outbound`: where calls made on a user's say-so may go (`[outbound]`): the rules
//!   (metadata, link-local and the hub's own address refused, Slack and Teams on their
//!   vendors' hosts, allow-lists) and the resolver that checks every address at each
//!   connection.
//! - `config`: infrastructure. Uses `cron` (the notification time zone), `outbound`
//!   (`[outbound]` becomes its policies), `secret` (loopback hosts).
//!
//! Vocabulary and data:
//! - `xor`: Prometheus's XOR chunk encoding both ways (remote read decodes it, the
//!   usage store writes and reads it), pure. Uses `analysis` (its `Sample`).
//! - `policy`: the RightsizingPolicy model, validation and effective-policy resolution
//!   (pure). Uses `analysis`, `cron`, `names`, `timestamp`, `workload`.
//! - `wire`: what travels between hub and agent (config feed, recommendation feed,
//!   heartbeat, typed agent events with `EventType`/`Reason`, the recommendation
//!   summary), Serialize + Deserialize, and the Prometheus remote-write 1.0 messages the
//!   agent's collector sends and the hub reads (`wire::remote_write`, protobuf). Uses `policy`, `workload`; no store, no HTTP,
//!   so the agent imports it in either build.
//! - `events`: the audit-event vocabulary and batch validation into `wire::AgentEvent`,
//!   and the configuration-change vocabulary (pure). Uses `wire`, `timestamp`,
//!   `workload`, `quantity`.
//! - `store`: SQLite: migrations, one writer + readers, every SQL statement. Its one
//!   surface is the unit of work: `Store::reading` hands a closure a `Read` (one reader
//!   connection), `Store::writing` a `Tx` (one transaction, all of it or none; a `Tx`
//!   reads too) and `Store::write_audited` a `Tx` whose returned change is recorded in
//!   the same transaction. Every query is a method of `Read` (reads) or `Tx` (writes),
//!   written in the file of its table; every paged answer is one `Page<T>` (items and
//!   the cursor of the next page). No rusqlite type leaves it but `StoreError`'s cause
//!   and the read-only connection `kerf migrate --status` inspects, so a second backend
//!   implements the same methods (`tests/it/store_fence.rs` keeps it one way). Uses
//!   `events`, `policy`, `run_vocabulary`, `wire`, `timestamp`, `xor` and `analysis`
//!   (`store::usage`, the embedded usage store: samples in XOR chunks in a second file).
//! - `operation`: `OpError`, what every hub operation returns when it does not do what
//!   was asked. Uses `store`.
//! - `datasource`: usage from Prometheus-compatible APIs (the TSDB's raw samples, by
//!   streamed remote read, VictoriaMetrics's export API or range selectors), the hub's
//!   embedded usage store (`datasource::embedded`: the same queries answered from
//!   `store::usage` with Prometheus's semantics) or the demo fleet, mapped into the
//!   engine's input and streamed to runs workload by workload; a datasource's
//!   credentials (`datasource::credentials`).
//!   Uses `analysis`, `backoff`, `clock` (probes ask the real present), `fingerprint`,
//!   `outbound`, `secret`, `sim` (the demo fleet's catalogue and shapes), `store` (only
//!   `store::usage`, read), `tls`, `workload`, `xor`.
//! - (`cluster` and `sim`: see "The cluster side" below.)
//!
//! Domain (operations below the API: store, now, audit context and typed input in,
//! typed output or `OpError` out; nothing of HTTP):
//! - `auth`: users, passwords, sessions, tokens, teams and principals; the account and
//!   team operations (`auth::accounts`, `auth::teams`); single sign-on through an
//!   OpenID Connect provider (`auth::sso`). Uses `store`, `events`, `operation`,
//!   `names`, `clock`, `config`, `timestamp`, `secret` (the provider's tokens a session
//!   keeps, sealed), `tls` (the provider's HTTPS), `wire` (the audit's actor).
//! - `readiness`: the per-cluster readiness rule and its evaluation (after heartbeats,
//!   runs, datasource checks, ticks). Uses `store`, `events`, `wire`, `timestamp`.
//! - `runs`: recommendation runs (collect → analyze → store; one `RunState` carries a
//!   running run through its phases, whose statuses, phases and transitions
//!   `docs/contracts/runs.md` "Run states" lists), their schedule and retention jobs,
//!   progress, recommender and pricing settings (saved as operations) and savings, and
//!   the backtest of a policy on recorded usage. Uses `analysis`, `cron`, `datasource`,
//!   `outbound`, `policy`, `readiness`, `run_vocabulary`, `secret`, `store`, `events`, `operation`,
//!   `wire`, `metrics`, `clock`, `jobs` (a run's task is watched like a job: a panic is recorded
//!   as a failed run), `timestamp`, `workload`, `sim` (in tests only: the backtest's
//!   ground truth).
//! - `notify`: notification channels and rules, the audit-cursor dispatcher and
//!   per-channel senders (Slack, Teams, webhook with HMAC), payloads and the weekly
//!   digest; its dispatcher and digest are jobs. Uses `auth`, `backoff`, `clock`,
//!   `config`, `cron`, `events`, `jobs`, `metrics`, `names`, `outbound`, `runs`, `secret` (sealed secrets),
//!   `store`, `timestamp`, `tls`, `workload`.
//! - `fleet`: clusters, pauses, datasources, policies, per-workload overrides,
//!   approvals and effective policy, the agent feeds, what agents send, and the ticker
//!   job, and the fleet the config file declares (`[fleet]`, applied at start). Uses
//!   `auth`, `config`, `datasource`, `events`, `names`, `operation`, `outbound`, `policy`,
//!   `readiness`, `runs`, `secret`, `store`, `timestamp`, `wire`.
//! - `export`: the recommendations as they leave kerf, for the export endpoint and
//!   `kerf scan` alike: each container's plan (Kubernetes quantities, rounded as the
//!   agent rounds) and the CSV, JSON and server-side apply YAML renderings. Uses
//!   `cluster` (quantities), `store`, `wire`, `workload` (container roles), `agent` (in
//!   tests only: the agent's rounding).
//!
//! The top:
//! - `api`: HTTP handlers (typed query, path and body in → call a domain operation →
//!   serialize), the route table with per-route permissions, errors, the OpenAPI
//!   document. Uses `auth`, `fleet`, `notify`, `readiness`, `runs` (the domain),
//!   `export`, `analysis`, `datasource`, `events`, `operation`, `policy`, `store`,
//!   `wire`, `workload` (the vocabulary), `clock`, `config`, `jobs`, `metrics`, `secret`,
//!   `timestamp`, `ui`.
//! - `server`: listener, TLS, connection bounds (cap with eviction of the longest-idle,
//!   header, idle and handshake timeouts), graceful shutdown; starts and supervises the
//!   jobs, and the agent of `all-in-one` (a job, reaching the hub through
//!   `server::in_process`) or of `mode = "agent"` (`server::agent`). Uses `agent`,
//!   `api`, `auth`, `backoff`, `clock`, `cluster`, `config`, `datasource`, `events`,
//!   `fleet`, `jobs`, `metrics`, `notify`, `operation`, `runs`, `secret`, `shutdown`,
//!   `store`, `tls`, `wire`.
//! - `commands`: the offline commands (they call the same operations as the API;
//!   backup and restore carry the datasource secret key; `kerf scan` collects and
//!   analyzes with `datasource` and `runs` as a hub run does and prints with the
//!   `export` plan; `kerf backtest` asks a hub). Uses `analysis`, `auth`, `clock`,
//!   `config`, `datasource`, `events`, `export`, `fleet`, `operation`, `policy`, `runs`,
//!   `secret`, `server`, `store`, `timestamp`, `tls`, `wire`, `workload`.
//! - `demo`: wires the demo fleet into `server`, with one in-process agent per demo
//!   cluster acting on the sim's in-process cluster, and the demo's policies (its
//!   clusters' own told to the hub as their agents report them). Uses `agent`, `api`,
//!   `auth`, `clock`, `commands`, `config`, `datasource`, `fleet`, `jobs`, `operation`,
//!   `policy`, `runs`, `server`, `sim`, `store`, `wire`.
//! - `cli`: the command line's arguments and dispatch. Uses `commands`, `config`,
//!   `demo`, `server`, `telemetry`.
//! - `telemetry`: log output. Uses `config`.
//!
//! The cluster side (the agent builds on it):
//! - `cluster`: the agent's one view of a Kubernetes cluster (model, `Cluster` trait,
//!   errors that keep the API server's Status, kerf's RightsizingRecommendation
//!   records, the watched `View`, what the kubelets serve at `/metrics/cadvisor`: CPU
//!   counters and usage, one parser) and its kube-rs face (feature `kube`, reflectors,
//!   the kubelet clients).
//!   Uses `fingerprint` (short record names), `quantity` (reading quantities), `workload`.
//! - `sim`: the simulated world (usage shapes, demo catalogue, the kubelet's decisions)
//!   with its two faces: a kubelet against a real API server (tests) and the in-process
//!   `Cluster` (demo). Uses `cluster`, `clock`, `fingerprint`, `workload`; the demo
//!   datasource reads its shapes and its one rule of what limits do to them. Only
//!   `sim::shape`, `sim::catalogue`, `sim::guarded` (the demo's guardrail workloads) and
//!   `sim::live` are in the hub-only build.
//!
//! - `agent` (feature `agent`): reads the hub's feeds through its `Hub` interface,
//!   decides per workload (`agent::decide`, pure and fenced like `analysis`), changes
//!   workloads through `cluster` (in place or by rollout), reports every decision as a
//!   contract event (bounded outbox), keeps its memory in the RightsizingRecommendation
//!   records, and collects usage for a hub without a Prometheus (`agent::collector`:
//!   kubelets and watches, shipped by remote write, bounded buffer). Uses `backoff`,
//!   `clock`, `cluster`, `cron` (the windows), `jobs`, `metrics`, `policy`,
//!   `timestamp`, `tls`, `wire`, `workload`; never `store` (in all-in-one it reaches
//!   the hub through `server::in_process`).

#[cfg(feature = "agent")]
pub mod agent;
pub mod analysis;
pub mod api;
pub mod auth;
pub mod backoff;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod cron;
pub mod datasource;
pub mod demo;
pub mod events;
pub mod export;
pub mod fingerprint;
pub mod fleet;
pub mod jobs;
pub mod metrics;
pub mod names;
pub mod notify;
pub mod operation;
pub mod outbound;
pub mod policy;
pub mod quantity;
pub mod readiness;
pub mod run_vocabulary;
pub mod runs;
pub mod secret;
pub mod server;
pub mod shutdown;
pub mod sim;
pub mod store;
pub mod telemetry;
pub mod timestamp;
pub mod tls;
pub mod ui;
pub mod wire;
pub mod workload;
pub mod xor;

//! The agent against the real API server with the sim kubelet (issue 12's "done
//! means"), through the same code `mode = "all-in-one"` runs.

mod apply;
mod argo;
mod bad_feed;
mod cluster_policies;
mod collector;
mod cronjob;
mod delivery;
mod demo_guardrails;
mod demo_world;
mod failures;
mod guardrails;
mod holds;
mod long_poll;
mod memory;
mod no_prometheus;
mod on_delete;
mod reasons;
mod remote;
mod shipped_defaults;
mod sidecars;
mod spec;
mod vpa;
mod world;

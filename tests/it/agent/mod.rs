//! The agent against the real API server with the sim kubelet (issue 12's "done
//! means"), through the same code `mode = "all-in-one"` runs.

mod apply;
mod demo_guardrails;
mod demo_world;
mod guardrails;
mod holds;
mod memory;
mod reasons;
mod remote;
mod world;

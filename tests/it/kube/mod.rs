//! Tests against the real control plane (`support::kube`) with the sim kubelet, and the
//! conformance suite that holds the in-process sim to the same outcomes.

mod apply_dry_run;
mod conformance;
mod control_plane;
mod demo_objects;
mod deployment;
mod throttling;

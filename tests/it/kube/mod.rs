//! Tests against the real control plane (`support::kube`) with the sim kubelet.

mod control_plane;
mod deployment;
mod objects;

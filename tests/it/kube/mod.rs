//! Tests against the real control plane (`support::kube`).

mod control_plane;

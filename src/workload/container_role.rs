//! What part a container plays in its pod, and what the pod as a whole reserves.
//!
//! Kubernetes runs three kinds of containers: app containers (`spec.containers`),
//! init containers that run to completion one after another before them
//! (`spec.initContainers`), and native sidecars: init containers with
//! `restartPolicy: Always`, which start in their turn and then run beside the app
//! containers for the pod's whole life.
//!
//! The scheduler, the kubelet and resource quotas count a pod's request (and limit) of
//! one resource as its *effective* value: the larger of what the pod needs while its
//! init containers run (each init container plus the sidecars started before it; each
//! sidecar plus those started before it) and what it needs afterwards (every app
//! container plus every sidecar). [`effective_pod_value`] is that formula.

use serde::{Deserialize, Serialize};

/// The part a container plays in its pod.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ContainerRole {
    /// In `spec.containers`.
    #[default]
    App,
    /// In `spec.initContainers` with `restartPolicy: Always`: runs for the pod's life.
    Sidecar,
    /// In `spec.initContainers`, runs to completion before the app starts.
    Init,
}

impl ContainerRole {
    /// From an init container's `restartPolicy` (`Always` makes it a sidecar).
    pub fn of_init_container(restart_policy: Option<&str>) -> ContainerRole {
        if restart_policy == Some("Always") {
            ContainerRole::Sidecar
        } else {
            ContainerRole::Init
        }
    }

    /// It is written in `spec.initContainers` (a sidecar or an init container).
    pub fn in_init_list(self) -> bool {
        self != ContainerRole::App
    }

    /// It runs for the pod's whole life (an app container or a sidecar).
    pub fn long_running(self) -> bool {
        self != ContainerRole::Init
    }

    /// `app`, `sidecar` or `init`.
    pub fn as_str(self) -> &'static str {
        match self {
            ContainerRole::App => "app",
            ContainerRole::Sidecar => "sidecar",
            ContainerRole::Init => "init",
        }
    }

    /// Where a container of this role starts when the real order is unknown
    /// (kube-state-metrics does not give the order of `spec.initContainers`): init
    /// containers first, then sidecars, then the app containers, as meshes inject them.
    /// Sort by it before [`effective_pod_value`].
    pub fn assumed_start(self) -> u8 {
        match self {
            ContainerRole::Init => 0,
            ContainerRole::Sidecar => 1,
            ContainerRole::App => 2,
        }
    }

    /// The default role serializes as nothing (`skip_serializing_if`).
    pub fn is_app(&self) -> bool {
        *self == ContainerRole::App
    }
}

/// The pod's effective value of one resource from its containers' values, init
/// containers and sidecars in `spec.initContainers` order (app containers may come
/// anywhere: only their sum counts).
pub fn effective_pod_value(containers: impl IntoIterator<Item = (ContainerRole, u64)>) -> u64 {
    let (mut apps, mut sidecars, mut while_initializing) = (0u64, 0u64, 0u64);
    for (role, value) in containers {
        match role {
            ContainerRole::App => apps = apps.saturating_add(value),
            ContainerRole::Sidecar => {
                sidecars = sidecars.saturating_add(value);
                while_initializing = while_initializing.max(sidecars);
            }
            ContainerRole::Init => {
                while_initializing = while_initializing.max(value.saturating_add(sidecars));
            }
        }
    }
    while_initializing.max(apps.saturating_add(sidecars))
}

#[cfg(test)]
mod tests {
    use super::ContainerRole::{App, Init, Sidecar};
    use super::*;

    #[test]
    fn app_containers_and_sidecars_add_up() {
        assert_eq!(effective_pod_value([(App, 300), (Sidecar, 100)]), 400);
        assert_eq!(effective_pod_value([(App, 300), (App, 200)]), 500);
        assert_eq!(effective_pod_value([]), 0);
    }

    #[test]
    fn a_large_init_container_sets_the_pod_value_with_the_sidecars_started_before_it() {
        // Init after a sidecar: 900 + 100 while it runs; afterwards 300 + 100.
        assert_eq!(
            effective_pod_value([(Sidecar, 100), (Init, 900), (App, 300)]),
            1000
        );
        // Init before the sidecar: 900 alone.
        assert_eq!(
            effective_pod_value([(Init, 900), (Sidecar, 100), (App, 300)]),
            900
        );
        // A small init container changes nothing.
        assert_eq!(
            effective_pod_value([(Init, 50), (Sidecar, 100), (App, 300)]),
            400
        );
    }

    #[test]
    fn roles_read_from_the_restart_policy_and_serialize_in_lowercase() {
        assert_eq!(ContainerRole::of_init_container(Some("Always")), Sidecar);
        assert_eq!(ContainerRole::of_init_container(None), Init);
        assert_eq!(ContainerRole::of_init_container(Some("Never")), Init);
        assert_eq!(serde_json::to_value(Sidecar).expect("json"), "sidecar");
        assert!(Sidecar.in_init_list() && !App.in_init_list());
        assert!(Sidecar.long_running() && !Init.long_running());
    }
}

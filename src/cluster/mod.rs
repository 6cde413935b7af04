//! The agent's one view of a Kubernetes cluster: what it reads (workloads, pods, nodes,
//! HPAs, PDBs, ReplicaSets, and from the kubelets their CPU counters and usage) and the few writes it makes (resize a pod,
//! server-side apply a pod template's resources or an HPA's target as field manager
//! `kerf`, release that ownership, evict a pod, record an Event). Two faces implement
//! it with the API server's semantics:
//! - `kube` (feature `kube`): a thin kube-rs adapter for real clusters;
//! - `crate::sim::SimCluster` (feature `agent`): the simulated world in-process, for
//!   `kerf demo`.
//!
//! The conformance suite (`tests/it/cluster_conformance`) runs the same scenarios on
//! both faces and expects the same outcomes, so code written against this trait behaves
//! the same in the demo as against a real API server.

pub mod admission;
pub mod cadvisor;
pub mod error;
#[cfg(feature = "kube")]
pub mod kube;
pub mod model;
pub mod policy_object;
pub mod quantity;
pub mod record;
mod snapshot;
#[cfg(test)]
mod snapshot_tests;
pub mod vpa;

use std::future::Future;
use std::time::Duration;

pub use cadvisor::{UsageMetric, UsageSample};
pub use error::{ApiStatus, Cause, ClusterError};
pub use model::*;
pub use policy_object::PolicyObject;
pub use record::Record;
pub use snapshot::*;
pub use vpa::Vpa;

/// The field manager kerf writes as.
pub const FIELD_MANAGER: &str = "kerf";

/// How a server-side apply is sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApplyMode {
    /// Take ownership of fields another manager owns instead of failing with 409.
    pub force: bool,
    /// Validate and answer without persisting (`dryRun=All`).
    pub dry_run: bool,
}

/// A live view of a cluster kept current by watches (kube-rs reflectors on a real
/// cluster): reading it makes no API call.
pub trait View: Send + Sync + 'static {
    /// What the watches have seen so far.
    fn snapshot(&self) -> Snapshot;

    /// Resolves when the watches see a change, or after `at_most`.
    fn changed(&self, at_most: Duration) -> impl Future<Output = ()> + Send;
}

/// A cluster as the agent uses it. Each call is one API round trip (or its in-process
/// equivalent); nothing is cached across calls, except in the [`View`] a `watch` keeps.
pub trait Cluster: Send + Sync {
    /// The live view `watch` returns.
    type View: View;

    /// The field manager this face applies as (`kerf` unless built for a test's
    /// other manager).
    fn field_manager(&self) -> &str;

    /// Everything the agent reads in `namespaces` (empty = all), plus all nodes.
    fn snapshot(
        &self,
        namespaces: &[String],
    ) -> impl Future<Output = Result<Snapshot, ClusterError>> + Send;

    fn workload(
        &self,
        key: &WorkloadKey,
    ) -> impl Future<Output = Result<Option<Workload>, ClusterError>> + Send;

    fn pod(&self, pod: &PodRef) -> impl Future<Output = Result<Option<Pod>, ClusterError>> + Send;

    /// Patches the pod's `resize` subresource with the given values (only the `Some`
    /// fields). Returns the pod as the API server stored it; the kubelet's verdict
    /// (`ResizeState`) arrives later in the pod's status.
    fn resize_pod(
        &self,
        pod: &PodRef,
        changes: &[ContainerResources],
    ) -> impl Future<Output = Result<Pod, ClusterError>> + Send;

    /// Server-side apply of the workload's pod-template container resources as
    /// `field_manager()`. The apply is the whole of what this manager owns there:
    /// fields it owned before and leaves out are released (and removed from the
    /// object when no other manager owns them), exactly as the API server does.
    /// A field owned by another manager with a different value fails with 409
    /// `FieldManagerConflict` unless `mode.force`.
    fn apply_template_resources(
        &self,
        key: &WorkloadKey,
        changes: &[ContainerResources],
        mode: ApplyMode,
    ) -> impl Future<Output = Result<Workload, ClusterError>> + Send;

    /// Gives up this manager's server-side-apply ownership of the workload's fields (its
    /// `Apply` entry in `managedFields` is removed; the values stay as they are). A field
    /// nobody owns any more can be set by any other manager without a conflict, so a
    /// GitOps tool restores what Git says; unlike an apply of an empty configuration, the
    /// values are not removed from the template in between.
    fn release_template_resources(
        &self,
        key: &WorkloadKey,
    ) -> impl Future<Output = Result<Workload, ClusterError>> + Send;

    /// Server-side apply of an HPA's `spec.metrics` (an atomic list: `metrics` is the
    /// whole of it) as `field_manager()`, forced: kerf keeps the HPA's absolute target
    /// when it changes the requests the utilization is measured against.
    fn apply_hpa_metrics(
        &self,
        namespace: &str,
        name: &str,
        metrics: &[HpaMetric],
    ) -> impl Future<Output = Result<Hpa, ClusterError>> + Send;

    /// Gives up this manager's ownership of an HPA's fields (as
    /// [`Cluster::release_template_resources`]: the values stay).
    fn release_hpa(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;

    /// Changes the `resource` (`cpu` or `memory`) utilization trigger of the KEDA
    /// `ScaledObject` `name` from `from` to `to` percent (KEDA then writes the HPA it
    /// makes), `targets` being (from, to), guarded: refused when the trigger is not at
    /// `from` any more.
    fn set_scaled_object_target(
        &self,
        namespace: &str,
        name: &str,
        resource: &str,
        targets: (i32, i32),
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;

    /// The CFS counters of every container on `node`, read from its kubelet's
    /// `/metrics/cadvisor` (as the agent's identity: RBAC `nodes/metrics` get).
    fn cpu_counters(
        &self,
        node: &Node,
    ) -> impl Future<Output = Result<Vec<CpuCounters>, ClusterError>> + Send;

    /// The CPU usage and memory working set of every container on `node` and of each of
    /// its pods' own cgroups, read from its kubelet's `/metrics/cadvisor` in one request
    /// (as `cpu_counters`). Samples keep the kubelet's timestamps; a line without one is
    /// stamped `scraped_at_ms`. The caller bounds the time it waits.
    fn usage(
        &self,
        node: &Node,
        scraped_at_ms: i64,
    ) -> impl Future<Output = Result<Vec<UsageSample>, ClusterError>> + Send;

    /// Evicts the pod through the Eviction API (429 when a PDB refuses).
    fn evict(&self, pod: &PodRef) -> impl Future<Output = Result<(), ClusterError>> + Send;

    /// Records a Kubernetes Event (events.k8s.io/v1) about `event.regarding`.
    fn record_event(
        &self,
        event: &ClusterEvent,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;

    /// The Events recorded about an object, oldest first.
    fn events(
        &self,
        regarding: &ObjectRef,
    ) -> impl Future<Output = Result<Vec<RecordedEvent>, ClusterError>> + Send;

    /// Starts watching the workloads, their pods, HPAs and PDBs in `namespaces` (empty =
    /// all) and every node; resolves once the first list is in.
    fn watch(
        &self,
        namespaces: &[String],
    ) -> impl Future<Output = Result<Self::View, ClusterError>> + Send;

    /// The API server's version (`gitVersion`, e.g. `v1.36.3`).
    fn server_version(&self) -> impl Future<Output = Result<String, ClusterError>> + Send;

    /// kerf's RightsizingRecommendations in `namespaces` (empty = all).
    fn records(
        &self,
        namespaces: &[String],
    ) -> impl Future<Output = Result<Vec<Record>, ClusterError>> + Send;

    /// Creates or updates a record's labels and spec (server-side apply as
    /// `field_manager()`, forced: kerf owns its records). Returns it with its uid.
    fn apply_record(
        &self,
        record: &Record,
    ) -> impl Future<Output = Result<Record, ClusterError>> + Send;

    /// Replaces a record's status (the status subresource). 404 when the record is gone.
    fn apply_record_status(
        &self,
        record: &Record,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;

    /// Replaces a RightsizingPolicy's status (the status subresource, server-side apply
    /// as `field_manager()`). 404 when the object is gone.
    fn apply_policy_status(
        &self,
        name: &str,
        status: &serde_json::Value,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;
}

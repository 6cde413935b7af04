//! The raw query results both sources produce: labelled series exactly as a
//! Prometheus-compatible API answers the queries in `docs/contracts/datasource.md`.
//! The Prometheus client fills these from HTTP answers; the demo fleet synthesizes them.
//! Everything after this point (`mapping`) is shared, so the demo exercises the real code.

use std::collections::BTreeMap;

use crate::analysis::Sample;

/// A series' label set (metric name under `__name__` when the query keeps it).
pub type Labels = BTreeMap<String, String>;

/// One labelled series: raw samples in Unix milliseconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawSeries {
    pub labels: Labels,
    pub samples: Vec<Sample>,
}

impl RawSeries {
    /// The value of label `name`, or "".
    pub fn label(&self, name: &str) -> &str {
        self.labels.get(name).map(String::as_str).unwrap_or("")
    }

    /// The latest sample, if any.
    pub fn last(&self) -> Option<Sample> {
        self.samples.iter().copied().max_by_key(|s| s.timestamp)
    }
}

/// Cluster-wide metadata from kube-state-metrics: small, fetched once per collection.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawInventory {
    /// `last_over_time(kube_pod_owner[window])`: every pod seen in the window, with its
    /// `uid`, `owner_kind` and `owner_name`. Empty means kube-state-metrics is missing.
    pub pod_owner: Vec<RawSeries>,
    /// `kube_pod_owner[5m]` at the window end: pods alive now, with raw sample times.
    pub pod_alive: Vec<RawSeries>,
    /// `last_over_time(kube_pod_created[window])`: pod creation (Unix seconds) per `uid`.
    pub pod_created: Vec<RawSeries>,
    /// `last_over_time(kube_pod_labels{label_controller_revision_hash!=""}[window])`.
    pub pod_revision: Vec<RawSeries>,
    /// `last_over_time({__name__=~"kube_replicaset_owner|kube_job_owner"}[window])`:
    /// ReplicaSet → Deployment or Rollout (label `replicaset`), Job → CronJob (label
    /// `job_name`; a Job without an owner has `owner_kind="<none>"`).
    pub replicaset_owner: Vec<RawSeries>,
    /// `last_over_time(kube_{deployment,statefulset,daemonset,cronjob}_created[window])`.
    pub workload_created: Vec<RawSeries>,
    /// Desired replicas at the end with raw sample times: `kube_deployment_spec_replicas`,
    /// `kube_statefulset_replicas`, `kube_daemonset_status_desired_number_scheduled`, and
    /// Argo's `rollout_info_replicas_desired` (metric name kept).
    pub replicas: Vec<RawSeries>,
    /// `kube_{deployment,statefulset,daemonset,cronjob}_labels` and `kube_pod_labels` at the end
    /// (metric name kept): allow-listed labels as `label_<sanitized name>`, of each
    /// workload and of each pod alive now (the fallback when a workload has none).
    pub labels: Vec<RawSeries>,
    /// `last_over_time(kube_replicaset_created[window])`: ReplicaSet creation (Unix
    /// seconds), the start of a Deployment's release.
    pub replicaset_created: Vec<RawSeries>,
    /// `kube_horizontalpodautoscaler_{info,spec_target_metric,spec_min_replicas,
    /// spec_max_replicas}[5m]` at the end (metric name kept): the HPAs and their targets.
    pub hpa: Vec<RawSeries>,
}

/// Current settings and OOM terminations of one batch of namespaces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawSettings {
    /// `kube_pod_container_resource_{requests,limits}{resource=~"cpu|memory"}[5m]` at the
    /// end (metric name kept in `__name__`), raw sample times; the same of init
    /// containers (`kube_pod_init_container_resource_*`) and `kube_pod_init_container_info`
    /// (which container is a sidecar).
    pub settings_now: Vec<RawSeries>,
    /// `kube_pod_container_resource_limits{resource="memory"}[window]` at the end, raw
    /// sample times: the memory-limit history of the pods with an OOM termination (a
    /// pod resized in place changes its limit, so each kill is stamped with the limit
    /// at its time). Empty when no pod of the batch was OOM-killed.
    pub memory_limits: Vec<RawSeries>,
    /// Range query of `kube_pod_container_status_last_terminated_timestamp` joined with a
    /// positive `..._last_terminated_reason{reason="OOMKilled"}`: values are termination
    /// times in Unix seconds.
    pub oom_terminations: Vec<RawSeries>,
    /// Only when `oom_terminations` is empty (kube-state-metrics without the
    /// termination timestamp): `kube_pod_container_status_restarts_total` of the
    /// containers whose last termination was `OOMKilled` in the window (range query).
    pub restarts: Vec<RawSeries>,
    /// …and their `kube_pod_container_status_last_terminated_reason{reason="OOMKilled"}`
    /// (range query): a restart seen while it is set was an OOM kill.
    pub oom_reasons: Vec<RawSeries>,
    /// `kube_pod_container_status_terminated_reason{reason="OOMKilled"} > 0` of the
    /// pods of batch work (range query): a container that ended in an OOM kill and was
    /// not restarted (a Job's pod with `restartPolicy: Never`), from the step it is
    /// first seen.
    pub terminated_ooms: Vec<RawSeries>,
}

/// Usage of one batch of namespaces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawUsage {
    /// `container_cpu_usage_seconds_total` (cumulative seconds), one series per cAdvisor
    /// container instance.
    pub cpu: Vec<RawSeries>,
    /// `container_memory_working_set_bytes`.
    pub memory: Vec<RawSeries>,
}

/// Label names used by the mapping (cAdvisor and kube-state-metrics spellings).
pub mod label {
    pub const NAME: &str = "__name__";
    pub const NAMESPACE: &str = "namespace";
    pub const POD: &str = "pod";
    pub const CONTAINER: &str = "container";
    pub const UID: &str = "uid";
    pub const CGROUP_ID: &str = "id";
    pub const OWNER_KIND: &str = "owner_kind";
    pub const OWNER_NAME: &str = "owner_name";
    pub const REPLICASET: &str = "replicaset";
    pub const JOB_NAME: &str = "job_name";
    pub const DEPLOYMENT: &str = "deployment";
    pub const STATEFULSET: &str = "statefulset";
    pub const DAEMONSET: &str = "daemonset";
    pub const CRONJOB: &str = "cronjob";
    pub const RESOURCE: &str = "resource";
    pub const RESTART_POLICY: &str = "restart_policy";
    pub const REVISION: &str = "label_controller_revision_hash";
    pub const HPA: &str = "horizontalpodautoscaler";
    pub const HPA_TARGET_KIND: &str = "scaletargetref_kind";
    pub const HPA_TARGET_NAME: &str = "scaletargetref_name";
    pub const HPA_METRIC: &str = "metric_name";
    pub const HPA_TARGET_TYPE: &str = "metric_target_type";
}

/// Metric names kerf reads.
pub mod metric {
    pub const CPU: &str = "container_cpu_usage_seconds_total";
    pub const MEMORY: &str = "container_memory_working_set_bytes";
    pub const REQUESTS: &str = "kube_pod_container_resource_requests";
    pub const LIMITS: &str = "kube_pod_container_resource_limits";
    /// What the settings query reads (`RawSettings::settings_now`).
    pub const SETTINGS_NOW: &[&str] = &[REQUESTS, LIMITS, INIT_REQUESTS, INIT_LIMITS, INIT_INFO];
    /// The same of init containers and native sidecars (`spec.initContainers`).
    pub const INIT_REQUESTS: &str = "kube_pod_init_container_resource_requests";
    pub const INIT_LIMITS: &str = "kube_pod_init_container_resource_limits";
    /// One series per init container; its `restart_policy` label (kube-state-metrics
    /// 2.10 and later) is `Always` for a native sidecar.
    pub const INIT_INFO: &str = "kube_pod_init_container_info";
    pub const POD_OWNER: &str = "kube_pod_owner";
    pub const POD_CREATED: &str = "kube_pod_created";
    pub const POD_LABELS: &str = "kube_pod_labels";
    pub const REPLICASET_OWNER: &str = "kube_replicaset_owner";
    /// A Job's owner (`job_name`, `owner_kind`, `owner_name`): a CronJob's Jobs are its runs.
    pub const JOB_OWNER: &str = "kube_job_owner";
    pub const DEPLOYMENT_CREATED: &str = "kube_deployment_created";
    pub const STATEFULSET_CREATED: &str = "kube_statefulset_created";
    pub const DAEMONSET_CREATED: &str = "kube_daemonset_created";
    pub const CRONJOB_CREATED: &str = "kube_cronjob_created";
    pub const DEPLOYMENT_LABELS: &str = "kube_deployment_labels";
    pub const STATEFULSET_LABELS: &str = "kube_statefulset_labels";
    pub const DAEMONSET_LABELS: &str = "kube_daemonset_labels";
    pub const CRONJOB_LABELS: &str = "kube_cronjob_labels";
    pub const DEPLOYMENT_REPLICAS: &str = "kube_deployment_spec_replicas";
    pub const STATEFULSET_REPLICAS: &str = "kube_statefulset_replicas";
    pub const DAEMONSET_DESIRED: &str = "kube_daemonset_status_desired_number_scheduled";
    /// An Argo Rollout's desired replicas, from Argo's own controller (labels
    /// `namespace`, `name`): kube-state-metrics exports no Rollout series.
    pub const ROLLOUT_REPLICAS: &str = "rollout_info_replicas_desired";
    pub const TERMINATED_REASON: &str = "kube_pod_container_status_last_terminated_reason";
    pub const TERMINATED_TIMESTAMP: &str = "kube_pod_container_status_last_terminated_timestamp";
    /// Why a container's current state is terminated (no time is exported).
    pub const TERMINATED_NOW_REASON: &str = "kube_pod_container_status_terminated_reason";
    pub const RESTARTS: &str = "kube_pod_container_status_restarts_total";
    /// The same of init containers and native sidecars (kube-state-metrics exports no
    /// termination timestamp of theirs: their OOM kills are inferred from restarts).
    pub const INIT_LAST_REASON: &str = "kube_pod_init_container_status_last_terminated_reason";
    pub const INIT_RESTARTS: &str = "kube_pod_init_container_status_restarts_total";
    pub const REPLICASET_CREATED: &str = "kube_replicaset_created";
    pub const HPA_INFO: &str = "kube_horizontalpodautoscaler_info";
    pub const HPA_TARGET_METRIC: &str = "kube_horizontalpodautoscaler_spec_target_metric";
    pub const HPA_MIN_REPLICAS: &str = "kube_horizontalpodautoscaler_spec_min_replicas";
    pub const HPA_MAX_REPLICAS: &str = "kube_horizontalpodautoscaler_spec_max_replicas";

    /// What `test` checks for: usage from cAdvisor, everything else from kube-state-metrics.
    pub const REQUIRED: &[&str] = &[CPU, MEMORY, POD_OWNER, REQUESTS, LIMITS, REPLICASET_OWNER];
}

//! What the API server holds a new or resized pod to before it exists: a namespace's
//! ResourceQuotas and LimitRanges, reduced to the CPU and memory facts kerf's changes
//! move (millicores and bytes, as everywhere in the model).

use serde::{Deserialize, Serialize};

/// The amounts of a quota kerf's changes move; `None` = the quota does not limit it.
/// `requests_cpu` is `requests.cpu` or its short spelling `cpu` (the smaller when both
/// are written), and so on; `pods` is `pods` or `count/pods`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuotaAmounts {
    pub requests_cpu: Option<u64>,
    pub requests_memory: Option<u64>,
    pub limits_cpu: Option<u64>,
    pub limits_memory: Option<u64>,
    pub pods: Option<u64>,
}

/// Which of the quota's amounts, named as in the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaResource {
    RequestsCpu,
    RequestsMemory,
    LimitsCpu,
    LimitsMemory,
    Pods,
}

impl QuotaResource {
    pub const ALL: [QuotaResource; 5] = [
        QuotaResource::RequestsCpu,
        QuotaResource::RequestsMemory,
        QuotaResource::LimitsCpu,
        QuotaResource::LimitsMemory,
        QuotaResource::Pods,
    ];

    /// The key in `spec.hard`.
    pub fn as_str(self) -> &'static str {
        match self {
            QuotaResource::RequestsCpu => "requests.cpu",
            QuotaResource::RequestsMemory => "requests.memory",
            QuotaResource::LimitsCpu => "limits.cpu",
            QuotaResource::LimitsMemory => "limits.memory",
            QuotaResource::Pods => "pods",
        }
    }
}

impl QuotaAmounts {
    pub fn get(&self, r: QuotaResource) -> Option<u64> {
        match r {
            QuotaResource::RequestsCpu => self.requests_cpu,
            QuotaResource::RequestsMemory => self.requests_memory,
            QuotaResource::LimitsCpu => self.limits_cpu,
            QuotaResource::LimitsMemory => self.limits_memory,
            QuotaResource::Pods => self.pods,
        }
    }

    /// What one pod whose containers (role and values, in template order) have
    /// `containers`' values counts against a quota: its effective requests and limits
    /// (unset counts 0) and itself.
    pub fn of_pod<'a>(
        containers: impl Iterator<Item = (super::ContainerRole, &'a super::Resources)>,
    ) -> QuotaAmounts {
        let totals = super::Resources::of_pod(containers);
        let (requests_cpu, requests_memory) = totals.effective_requests();
        QuotaAmounts {
            requests_cpu: Some(requests_cpu),
            requests_memory: Some(requests_memory),
            limits_cpu: Some(totals.cpu_limit.unwrap_or(0)),
            limits_memory: Some(totals.memory_limit.unwrap_or(0)),
            pods: Some(1),
        }
    }

    /// These amounts and `other`'s, each summed (unset counts 0, set stays set).
    pub fn plus(self, other: QuotaAmounts) -> QuotaAmounts {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        QuotaAmounts {
            requests_cpu: sum(self.requests_cpu, other.requests_cpu),
            requests_memory: sum(self.requests_memory, other.requests_memory),
            limits_cpu: sum(self.limits_cpu, other.limits_cpu),
            limits_memory: sum(self.limits_memory, other.limits_memory),
            pods: sum(self.pods, other.pods),
        }
    }
}

/// A ResourceQuota.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceQuota {
    pub namespace: String,
    pub name: String,
    /// `status.hard` (what the quota controller enforces), else `spec.hard`.
    pub hard: QuotaAmounts,
    /// `status.used`; `None` until the quota controller has counted.
    pub used: Option<QuotaAmounts>,
    /// `spec.scopes` and the scope names of `spec.scopeSelector` (`NotBestEffort`,
    /// `PriorityClass`, ...): empty = every pod of the namespace.
    pub scopes: Vec<String>,
}

/// What a LimitRange item constrains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LimitKind {
    /// Each container.
    Container,
    /// The sum over a pod's containers.
    Pod,
}

/// A CPU (millicores) and a memory (bytes) amount, each optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuMemory {
    pub cpu: Option<u64>,
    pub memory: Option<u64>,
}

/// One item of a LimitRange's `spec.limits` (PersistentVolumeClaim items are not kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitRangeItem {
    pub kind: LimitKind,
    /// Requests and limits may not be below it.
    pub min: CpuMemory,
    /// Requests and limits may not be above it.
    pub max: CpuMemory,
    /// `maxLimitRequestRatio` in thousandths (`2` is 2000): a limit may be at most this
    /// many times its request.
    pub max_ratio_milli: CpuMemory,
}

/// A LimitRange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitRange {
    pub namespace: String,
    pub name: String,
    pub items: Vec<LimitRangeItem>,
}

/// One namespace's quotas and limit ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamespaceAdmission {
    pub quotas: Vec<ResourceQuota>,
    pub limit_ranges: Vec<LimitRange>,
}

impl NamespaceAdmission {
    /// No quota and no limit range: nothing to check.
    pub const NONE: &'static NamespaceAdmission = &NamespaceAdmission {
        quotas: Vec::new(),
        limit_ranges: Vec::new(),
    };
}

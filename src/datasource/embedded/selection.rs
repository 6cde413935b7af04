//! PromQL's `S` for the usage store: one cluster's stored series (the store is keyed by
//! the kerf cluster), its cluster label when the scope names one (a writer's external
//! label), and a collection group's namespaces and pods, as the label matchers of a
//! [`SeriesQuery`]. `label=~"a|b"` of literal names is a set, so it is `one_of`.

use std::collections::BTreeSet;

use crate::datasource::raw::{label, RawSeries};
use crate::datasource::{ClusterScope, Group};
use crate::store::usage::{LabelMatcher, SeriesQuery};

/// Which stored series a query may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    cluster: String,
    cluster_label: Option<(String, String)>,
    /// Empty: every namespace.
    namespaces: Vec<String>,
    /// Empty: every pod of those namespaces.
    pods: Vec<String>,
}

impl Selection {
    /// Every series of `cluster` in `namespaces` (all when empty).
    pub fn new(cluster: &str, scope: &ClusterScope, namespaces: &[String]) -> Selection {
        let cluster_label = match (&scope.selector_label, &scope.selector_value) {
            (Some(l), Some(v)) if !l.is_empty() => Some((l.clone(), v.clone())),
            _ => None,
        };
        Selection {
            cluster: cluster.to_string(),
            cluster_label,
            namespaces: namespaces.to_vec(),
            pods: Vec::new(),
        }
    }

    /// The series of one collection group: its namespaces, and its pods when it is a
    /// slice of one namespace.
    pub fn group(cluster: &str, scope: &ClusterScope, group: &Group) -> Selection {
        Selection {
            pods: group.pods.clone(),
            ..Selection::new(cluster, scope, &group.namespaces)
        }
    }

    /// The same cluster, narrowed to the namespaces and pods `series` name (each
    /// namespace with each pod, as `namespace=~"…",pod=~"…"` selects).
    pub fn pods_of(&self, series: &[RawSeries]) -> Selection {
        let pick = |name: &str| -> Vec<String> {
            let set: BTreeSet<&str> = series.iter().map(|s| s.label(name)).collect();
            set.into_iter().map(str::to_string).collect()
        };
        Selection {
            namespaces: pick(label::NAMESPACE),
            pods: pick(label::POD),
            ..self.clone()
        }
    }

    /// Only the pods `pods` of namespace `namespace` (one workload's).
    pub fn pods(&self, namespace: &str, pods: &[String]) -> Selection {
        Selection {
            namespaces: vec![namespace.to_string()],
            pods: pods.to_vec(),
            ..self.clone()
        }
    }

    /// The series of `metrics` (`__name__=~"a|b"`) in this selection, all time.
    pub fn query(&self, metrics: &[&str]) -> SeriesQuery {
        let mut q = SeriesQuery::new(&self.cluster, metrics.iter().copied());
        if let Some((name, value)) = &self.cluster_label {
            q = q.matching(LabelMatcher::equal(name, value));
        }
        if !self.namespaces.is_empty() {
            q = q.matching(LabelMatcher::one_of(label::NAMESPACE, &self.namespaces));
        }
        if !self.pods.is_empty() {
            q = q.matching(LabelMatcher::one_of(label::POD, &self.pods));
        }
        q
    }
}

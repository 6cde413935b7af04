//! Workload labels for policy selectors, from kube-state-metrics: the workload's own
//! `kube_{deployment,statefulset,daemonset}_labels`, else the labels every alive pod of
//! the workload shares (`kube_pod_labels`) minus those a controller stamps per release or
//! per pod. KSM exports only allow-listed labels, with names sanitized (`label_<name>`,
//! `.`, `/` and `-` turned into `_`); kerf strips the prefix and keeps the rest as is.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use crate::datasource::raw::{label, metric, Labels, RawSeries};

use super::pods::{workload_of, PodMeta, WorkloadKey};

const PREFIX: &str = "label_";

/// Labels that differ between releases or pods of one workload (KSM spellings).
const PER_POD: &[&str] = &[
    "pod_template_hash",
    "controller_revision_hash",
    "pod_template_generation",
    "statefulset_kubernetes_io_pod_name",
    "apps_kubernetes_io_pod_index",
];

/// The `label_*` labels of a KSM series, prefix stripped, per-pod ones dropped.
fn label_set(s: &RawSeries) -> Labels {
    s.labels
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix(PREFIX)?, v)))
        .filter(|(k, v)| !v.is_empty() && !PER_POD.contains(k))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Labels by workload: its own labels when it has any, else those common to its pods.
/// `pods` resolves a pod UID to its workload.
pub fn workload_labels(
    series: &[RawSeries],
    pods: &HashMap<String, PodMeta>,
) -> HashMap<WorkloadKey, Labels> {
    let mut own: HashMap<WorkloadKey, Labels> = HashMap::new();
    let mut shared: HashMap<WorkloadKey, Labels> = HashMap::new();
    for s in series {
        if s.label(label::NAME) == metric::POD_LABELS {
            let Some(meta) = pods.get(s.label(label::UID)) else {
                continue;
            };
            let labels = label_set(s);
            match shared.entry(meta.workload.clone()) {
                Entry::Vacant(e) => {
                    e.insert(labels);
                }
                Entry::Occupied(mut e) => e.get_mut().retain(|k, v| labels.get(k) == Some(v)),
            }
        } else if let Some(key) = workload_of(s) {
            let labels = label_set(s);
            if !labels.is_empty() {
                own.insert(key, labels);
            }
        }
    }
    shared.extend(own);
    shared.retain(|_, l| !l.is_empty());
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(pairs: &[(&str, &str)]) -> RawSeries {
        RawSeries {
            labels: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            samples: Vec::new(),
        }
    }

    fn key(kind: &str, name: &str) -> WorkloadKey {
        WorkloadKey {
            namespace: "shop".into(),
            kind: kind.into(),
            name: name.into(),
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        series(pairs).labels
    }

    #[test]
    fn workload_labels_win_and_pods_fill_in_with_what_all_of_them_share() {
        let pods: HashMap<String, PodMeta> = [
            ("u1", key("Deployment", "api")),
            ("u2", key("StatefulSet", "db")),
            ("u3", key("StatefulSet", "db")),
        ]
        .into_iter()
        .map(|(uid, workload)| {
            let meta = PodMeta {
                uid: uid.into(),
                name: uid.into(),
                workload,
                release: String::new(),
                created_ms: 0,
                run: String::new(),
            };
            (uid.to_string(), meta)
        })
        .collect();
        let raw = [
            series(&[
                ("__name__", "kube_deployment_labels"),
                ("namespace", "shop"),
                ("deployment", "api"),
                ("label_app_kubernetes_io_name", "api"),
                ("label_tier", "web"),
            ]),
            series(&[
                ("__name__", "kube_pod_labels"),
                ("uid", "u1"),
                ("label_tier", "pod-level"),
            ]),
            // Allow-listed for deployments only: the StatefulSet's metric has no labels.
            series(&[
                ("__name__", "kube_statefulset_labels"),
                ("namespace", "shop"),
                ("statefulset", "db"),
            ]),
            series(&[
                ("__name__", "kube_pod_labels"),
                ("uid", "u2"),
                ("label_app", "db"),
                ("label_role", "primary"),
                ("label_controller_revision_hash", "db-7f9"),
                ("label_statefulset_kubernetes_io_pod_name", "db-0"),
            ]),
            series(&[
                ("__name__", "kube_pod_labels"),
                ("uid", "u3"),
                ("label_app", "db"),
                ("label_role", "replica"),
                ("label_controller_revision_hash", "db-7f9"),
            ]),
            series(&[("__name__", "kube_pod_labels"), ("uid", "gone")]),
        ];
        let got = workload_labels(&raw, &pods);
        assert_eq!(
            got.get(&key("Deployment", "api")),
            Some(&labels(&[
                ("app_kubernetes_io_name", "api"),
                ("tier", "web")
            ]))
        );
        assert_eq!(
            got.get(&key("StatefulSet", "db")),
            Some(&labels(&[("app", "db")]))
        );
        assert_eq!(got.len(), 2);
    }
}

//! HorizontalPodAutoscalers from kube-state-metrics: which workload each scales and on
//! what (`kube_horizontalpodautoscaler_info` names the target, `…_spec_target_metric`
//! the metrics with their target values, `…_spec_{min,max}_replicas` the bounds). A
//! workload whose HPA scales on CPU utilization moves its scaling point when its CPU
//! request changes; runs show the target that keeps it.

use std::collections::{BTreeMap, HashMap};

use crate::datasource::raw::{label, metric, RawSeries};
use crate::datasource::{Hpa, HpaTarget};

use super::pods::WorkloadKey;

/// The HPA of each workload that has one (the first by name when several claim it).
pub fn hpas(series: &[RawSeries]) -> HashMap<WorkloadKey, Hpa> {
    // (namespace, hpa name) → what we learn of it.
    let mut by_name: BTreeMap<(String, String), (Option<WorkloadKey>, Hpa)> = BTreeMap::new();
    for s in series {
        let (ns, name) = (s.label(label::NAMESPACE), s.label(label::HPA));
        if ns.is_empty() || name.is_empty() {
            continue;
        }
        let Some(last) = s.last().filter(|x| x.value.is_finite()) else {
            continue;
        };
        let entry = by_name
            .entry((ns.to_string(), name.to_string()))
            .or_insert_with(|| {
                let hpa = Hpa {
                    name: name.to_string(),
                    ..Hpa::default()
                };
                (None, hpa)
            });
        match s.label(label::NAME) {
            metric::HPA_INFO => {
                let (kind, target) = (
                    s.label(label::HPA_TARGET_KIND),
                    s.label(label::HPA_TARGET_NAME),
                );
                if !kind.is_empty() && !target.is_empty() {
                    entry.0 = Some(WorkloadKey {
                        namespace: ns.to_string(),
                        kind: kind.to_string(),
                        name: target.to_string(),
                    });
                }
            }
            metric::HPA_TARGET_METRIC => {
                let target = HpaTarget {
                    metric: s.label(label::HPA_METRIC).to_string(),
                    target_type: s.label(label::HPA_TARGET_TYPE).to_string(),
                    value: last.value,
                };
                if !entry.1.targets.contains(&target) {
                    entry.1.targets.push(target);
                }
            }
            metric::HPA_MIN_REPLICAS => entry.1.min_replicas = Some(last.value.max(0.0) as u32),
            metric::HPA_MAX_REPLICAS => entry.1.max_replicas = Some(last.value.max(0.0) as u32),
            _ => {}
        }
    }
    let mut out = HashMap::new();
    for (_, (target, mut hpa)) in by_name {
        let Some(key) = target else { continue };
        hpa.targets
            .sort_by(|a, b| (&a.metric, &a.target_type).cmp(&(&b.metric, &b.target_type)));
        out.entry(key).or_insert(hpa);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Sample;

    fn series(name: &str, extra: &[(&str, &str)], value: f64) -> RawSeries {
        let mut labels: crate::datasource::raw::Labels = [
            (label::NAME, name),
            (label::NAMESPACE, "shop"),
            (label::HPA, "api"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        for (k, v) in extra {
            labels.insert(k.to_string(), v.to_string());
        }
        RawSeries {
            labels,
            samples: vec![Sample {
                timestamp: 1,
                value,
            }],
        }
    }

    #[test]
    fn an_hpa_is_joined_to_the_workload_it_scales_with_its_targets_and_bounds() {
        let raw = vec![
            series(
                metric::HPA_INFO,
                &[
                    (label::HPA_TARGET_KIND, "Deployment"),
                    (label::HPA_TARGET_NAME, "api"),
                ],
                1.0,
            ),
            series(
                metric::HPA_TARGET_METRIC,
                &[
                    (label::HPA_METRIC, "cpu"),
                    (label::HPA_TARGET_TYPE, "utilization"),
                ],
                70.0,
            ),
            series(metric::HPA_MIN_REPLICAS, &[], 2.0),
            series(metric::HPA_MAX_REPLICAS, &[], 10.0),
        ];
        let found = hpas(&raw);
        let key = WorkloadKey {
            namespace: "shop".into(),
            kind: "Deployment".into(),
            name: "api".into(),
        };
        let hpa = &found[&key];
        assert_eq!(hpa.name, "api");
        assert_eq!((hpa.min_replicas, hpa.max_replicas), (Some(2), Some(10)));
        assert_eq!(hpa.cpu_utilization(), Some(70.0));
        // Without the info series nothing says which workload it scales.
        assert!(hpas(&raw[1..]).is_empty());
    }
}

//! Synthesizes the raw query answers for the demo catalogue: pod lifetimes, cAdvisor
//! usage scraped once a step (the demo's own scrape times: its raw samples, not a grid
//! laid over someone else's), and kube-state-metrics metadata, labelled exactly as the
//! Prometheus queries return them. Deterministic given the seed and the window.

use crate::analysis::Sample;
use crate::datasource::raw::{
    label, metric, Labels, RawInventory, RawSeries, RawSettings, RawUsage,
};
use crate::datasource::Window;

use super::pods::{pods_of, Pod};
use crate::sim::catalogue::{ContainerSpec, HpaSpec, Kind, WorkloadSpec};
use crate::sim::shape::{moment, Draws, Limits, Rng};

/// Demo workloads that existed before any window were created this long before its end.
const OLD_AGE_MS: i64 = 30 * 24 * 3_600_000;

/// Everything the demo answers for one cluster.
#[derive(Default)]
pub struct Answers {
    pub inventory: RawInventory,
    pub settings: RawSettings,
    pub usage: RawUsage,
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The demo's scrape times: one a step, ending exactly at the window end.
pub fn grid(window: Window) -> impl Iterator<Item = i64> {
    let step = i64::from(window.step_seconds.max(1)) * 1000;
    let n = (window.end_ms - window.start_ms).max(0) / step;
    (0..=n).map(move |k| window.end_ms - (n - k) * step)
}

/// Generates the answers for `specs` over `window`.
pub fn generate(seed: u64, cluster: &str, specs: &[WorkloadSpec], window: Window) -> Answers {
    let mut out = Answers::default();
    for spec in specs {
        let mut rng = Rng::new(seed, &format!("{cluster}/{}/{}", spec.namespace, spec.name));
        let created_ms = window.end_ms - spec.age_minutes.map(|m| m * 60_000).unwrap_or(OLD_AGE_MS);
        workload_metadata(&mut out.inventory, spec, created_ms, window.end_ms);
        for pod in pods_of(spec, &mut rng, created_ms, window) {
            pod_metadata(&mut out, spec, &pod, window);
            for c in &spec.containers {
                usage_of(&mut out, spec, c, &pod, (seed, &mut rng), window);
            }
        }
    }
    out
}

/// The kube-state-metrics label naming a workload of `kind` (Argo's controller names a
/// Rollout `name`).
fn kind_label(kind: Kind) -> &'static str {
    match kind {
        Kind::Deployment => label::DEPLOYMENT,
        Kind::StatefulSet => label::STATEFULSET,
        Kind::DaemonSet => label::DAEMONSET,
        Kind::Rollout => "name",
        Kind::CronJob => label::CRONJOB,
    }
}

/// A demo workload's labels as kube-state-metrics names them.
fn ksm_labels(spec: &WorkloadSpec) -> impl Iterator<Item = (String, String)> {
    let extra = crate::sim::guarded::extras(spec.namespace, &spec.name)
        .map(|e| e.labels)
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()));
    crate::sim::catalogue::labels(spec)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .chain(extra)
        .map(|(k, v)| (format!("label_{}", k.replace(['.', '/', '-'], "_")), v))
}

fn workload_metadata(inv: &mut RawInventory, spec: &WorkloadSpec, created_ms: i64, end: i64) {
    let l = kind_label(spec.kind);
    let (created, replicas) = match spec.kind {
        // kube-state-metrics says when a CronJob was made; it wants no replicas.
        Kind::CronJob => {
            inv.workload_created.push(RawSeries {
                labels: labels(&[(label::NAMESPACE, spec.namespace), (l, &spec.name)]),
                samples: vec![Sample {
                    timestamp: end,
                    value: (created_ms / 1000) as f64,
                }],
            });
            let mut with = labels(&[
                (label::NAME, metric::CRONJOB_LABELS),
                (label::NAMESPACE, spec.namespace),
                (l, &spec.name),
            ]);
            with.extend(ksm_labels(spec));
            inv.labels.push(RawSeries {
                labels: with,
                samples: vec![Sample {
                    timestamp: end,
                    value: 1.0,
                }],
            });
            return;
        }
        Kind::Deployment => (metric::DEPLOYMENT_CREATED, metric::DEPLOYMENT_REPLICAS),
        Kind::StatefulSet => (metric::STATEFULSET_CREATED, metric::STATEFULSET_REPLICAS),
        Kind::DaemonSet => (metric::DAEMONSET_CREATED, metric::DAEMONSET_DESIRED),
        Kind::Rollout => {
            // kube-state-metrics has nothing of a Rollout; Argo's controller its replicas.
            inv.replicas.push(RawSeries {
                labels: labels(&[
                    (label::NAME, metric::ROLLOUT_REPLICAS),
                    (label::NAMESPACE, spec.namespace),
                    (l, &spec.name),
                ]),
                samples: vec![Sample {
                    timestamp: end,
                    value: f64::from(spec.replicas),
                }],
            });
            return;
        }
    };
    inv.workload_created.push(RawSeries {
        labels: labels(&[(label::NAMESPACE, spec.namespace), (l, &spec.name)]),
        samples: vec![Sample {
            timestamp: end,
            value: (created_ms / 1000) as f64,
        }],
    });
    let _ = created;
    // As if kube-state-metrics allow-listed labels of Deployments and StatefulSets only:
    // DaemonSets get theirs from their pods (the mapping's fallback).
    let labels_metric = match spec.kind {
        Kind::Deployment => Some(metric::DEPLOYMENT_LABELS),
        Kind::StatefulSet => Some(metric::STATEFULSET_LABELS),
        Kind::DaemonSet | Kind::Rollout | Kind::CronJob => None,
    };
    if let Some(name) = labels_metric {
        let mut l = labels(&[
            (label::NAME, name),
            (label::NAMESPACE, spec.namespace),
            (l, &spec.name),
        ]);
        l.extend(ksm_labels(spec));
        inv.labels.push(RawSeries {
            labels: l,
            samples: vec![Sample {
                timestamp: end,
                value: 1.0,
            }],
        });
    }
    if let Some(h) = &spec.hpa {
        hpa_metadata(inv, spec, h, end);
    }
    inv.replicas.push(RawSeries {
        labels: labels(&[
            (label::NAME, replicas),
            (label::NAMESPACE, spec.namespace),
            (l, &spec.name),
        ]),
        samples: vec![Sample {
            timestamp: end,
            value: f64::from(spec.replicas),
        }],
    });
}

/// The HPA scaling `spec`, as kube-state-metrics exports it (named after the workload).
fn hpa_metadata(inv: &mut RawInventory, spec: &WorkloadSpec, h: &HpaSpec, end: i64) {
    let at_end = |value: f64| {
        vec![Sample {
            timestamp: end,
            value,
        }]
    };
    let base = [
        (label::NAMESPACE, spec.namespace),
        (label::HPA, spec.name.as_str()),
    ];
    let with = |name: &str, extra: &[(&str, &str)]| {
        let mut l = labels(&base);
        l.insert(label::NAME.into(), name.into());
        l.extend(labels(extra));
        l
    };
    let kind = spec.kind.as_str();
    inv.hpa.push(RawSeries {
        labels: with(
            metric::HPA_INFO,
            &[
                (label::HPA_TARGET_KIND, kind),
                (label::HPA_TARGET_NAME, spec.name.as_str()),
            ],
        ),
        samples: at_end(1.0),
    });
    inv.hpa.push(RawSeries {
        labels: with(
            metric::HPA_TARGET_METRIC,
            &[
                (label::HPA_METRIC, "cpu"),
                (label::HPA_TARGET_TYPE, "utilization"),
            ],
        ),
        samples: at_end(h.cpu_utilization),
    });
    for (name, value) in [
        (metric::HPA_MIN_REPLICAS, h.min_replicas),
        (metric::HPA_MAX_REPLICAS, h.max_replicas),
    ] {
        inv.hpa.push(RawSeries {
            labels: with(name, &[]),
            samples: at_end(f64::from(value)),
        });
    }
}

fn pod_metadata(out: &mut Answers, spec: &WorkloadSpec, pod: &Pod, window: Window) {
    let inv = &mut out.inventory;
    let base = [
        (label::NAMESPACE, spec.namespace),
        (label::POD, pod.name.as_str()),
        (label::UID, pod.uid.as_str()),
    ];
    let at_end = Sample {
        timestamp: window.end_ms,
        value: 1.0,
    };
    let mut owner = labels(&base);
    owner.insert(label::OWNER_KIND.into(), pod.owner_kind.into());
    owner.insert(label::OWNER_NAME.into(), pod.owner_name.clone());
    owner.insert("owner_is_controller".into(), "true".into());
    inv.pod_owner.push(RawSeries {
        labels: owner.clone(),
        samples: vec![at_end],
    });
    let alive = pod.end_ms >= window.end_ms;
    if alive {
        let mut l = owner.clone();
        l.insert(label::NAME.into(), metric::POD_OWNER.into());
        inv.pod_alive.push(RawSeries {
            labels: l,
            samples: vec![at_end],
        });
    }
    if alive {
        let mut l = labels(&base);
        l.insert(label::NAME.into(), metric::POD_LABELS.into());
        l.extend(ksm_labels(spec));
        let per_pod = match &pod.revision {
            Some(rev) => ("label_controller_revision_hash", rev.as_str()),
            None => (
                "label_pod_template_hash",
                pod.owner_name.rsplit('-').next().unwrap_or_default(),
            ),
        };
        l.insert(per_pod.0.into(), per_pod.1.into());
        inv.labels.push(RawSeries {
            labels: l,
            samples: vec![at_end],
        });
    }
    inv.pod_created.push(RawSeries {
        labels: labels(&base),
        samples: vec![Sample {
            timestamp: window.end_ms,
            value: (pod.start_ms / 1000) as f64,
        }],
    });
    if let Some(rev) = &pod.revision {
        let mut l = labels(&base);
        l.insert(label::REVISION.into(), rev.clone());
        inv.pod_revision.push(RawSeries {
            labels: l,
            samples: vec![at_end],
        });
    }
    if pod.owner_kind == "ReplicaSet" {
        let rs = labels(&[
            (label::NAMESPACE, spec.namespace),
            (label::REPLICASET, pod.owner_name.as_str()),
            (label::OWNER_KIND, spec.kind.as_str()),
            (label::OWNER_NAME, spec.name.as_str()),
        ]);
        if !inv.replicaset_owner.iter().any(|s| s.labels == rs) {
            inv.replicaset_owner.push(RawSeries {
                labels: rs,
                samples: vec![at_end],
            });
            inv.replicaset_created.push(RawSeries {
                labels: labels(&[
                    (label::NAMESPACE, spec.namespace),
                    (label::REPLICASET, pod.owner_name.as_str()),
                ]),
                samples: vec![Sample {
                    timestamp: window.end_ms,
                    value: (pod.release_ms / 1000) as f64,
                }],
            });
        }
    }
    if pod.owner_kind == "Job" {
        let job = labels(&[
            (label::NAMESPACE, spec.namespace),
            (label::JOB_NAME, pod.owner_name.as_str()),
            (label::OWNER_KIND, spec.kind.as_str()),
            (label::OWNER_NAME, spec.name.as_str()),
        ]);
        if !inv.replicaset_owner.iter().any(|s| s.labels == job) {
            inv.replicaset_owner.push(RawSeries {
                labels: job,
                samples: vec![at_end],
            });
        }
    }
    // The settings a pod last had: now if it runs, else (a finished latest run) when
    // it was last scraped.
    let settings_at = (alive || pod.latest_run).then_some(pod.end_ms.min(window.end_ms));
    for c in &spec.containers {
        let r = c.resources_at(window.end_ms);
        // A sidecar as kube-state-metrics exports it: init-container series, and its
        // info series saying it restarts always.
        let (requests, limits) = if c.role.in_init_list() {
            if alive {
                let mut info = labels(&base);
                info.insert(label::NAME.into(), metric::INIT_INFO.into());
                info.insert(label::CONTAINER.into(), c.name.into());
                info.insert(label::RESTART_POLICY.into(), "Always".into());
                out.settings.settings_now.push(RawSeries {
                    labels: info,
                    samples: vec![Sample {
                        timestamp: window.end_ms,
                        value: 1.0,
                    }],
                });
            }
            (metric::INIT_REQUESTS, metric::INIT_LIMITS)
        } else {
            (metric::REQUESTS, metric::LIMITS)
        };
        let settings = [
            (requests, "cpu", r.cpu_request.map(|m| m / 1000.0)),
            (limits, "cpu", r.cpu_limit.map(|m| m / 1000.0)),
            (requests, "memory", r.memory_request),
            (limits, "memory", r.memory_limit),
        ];
        for (name, resource, value) in settings {
            let Some(value) = value else { continue };
            let mut l = labels(&base);
            l.insert(label::CONTAINER.into(), c.name.into());
            l.insert(label::RESOURCE.into(), resource.into());
            if let Some(at) = settings_at {
                let mut now = l.clone();
                now.insert(label::NAME.into(), name.into());
                out.settings.settings_now.push(RawSeries {
                    labels: now,
                    samples: vec![Sample {
                        timestamp: at,
                        value,
                    }],
                });
            }
            if name == limits && resource == "memory" {
                // The limit at the window start, then each change made since (a resize
                // or a rollout while the demo runs): the limit at every kill.
                let mut samples = vec![Sample {
                    timestamp: window.start_ms,
                    value: c
                        .resources_at(window.start_ms)
                        .memory_limit
                        .unwrap_or(value),
                }];
                samples.extend(
                    c.changes
                        .iter()
                        .filter(|(at, _)| *at > window.start_ms && *at <= window.end_ms)
                        .filter_map(|(at, r)| {
                            r.memory_limit.map(|v| Sample {
                                timestamp: *at,
                                value: v,
                            })
                        }),
                );
                out.settings
                    .memory_limits
                    .push(RawSeries { labels: l, samples });
            }
        }
    }
}

/// The container lifetimes of one container of one pod, with OOM kills between them.
fn usage_of(
    out: &mut Answers,
    spec: &WorkloadSpec,
    c: &ContainerSpec,
    pod: &Pod,
    (seed, rng): (u64, &mut Rng),
    window: Window,
) {
    // Drawn as the sim's in-process cluster draws the same container (`Draws::at`).
    let draw_key = format!("{}/{}/{}", spec.namespace, spec.name, c.name);
    let points: Vec<i64> = grid(window)
        .filter(|t| *t >= pod.start_ms && *t <= pod.end_ms)
        .collect();
    if points.is_empty() {
        return;
    }
    let mut restart = 0u32;
    let mut life_start = pod.start_ms;
    let mut counter = rng.unit() * 50.0;
    let mut cpu = Vec::new();
    let mut mem = Vec::new();
    let mut kills: Vec<i64> = Vec::new();
    let mut oom_samples = Vec::new();
    let step_s = f64::from(window.step_seconds.max(1));
    let flush = |out: &mut Answers, cpu: &mut Vec<Sample>, mem: &mut Vec<Sample>, restart: u32| {
        let cgroup = format!("/kubepods/burstable/pod{}/{}-{restart}", pod.uid, c.name);
        let l = labels(&[
            (label::NAMESPACE, spec.namespace),
            (label::POD, pod.name.as_str()),
            (label::CONTAINER, c.name),
            (label::CGROUP_ID, cgroup.as_str()),
        ]);
        if !cpu.is_empty() {
            out.usage.cpu.push(RawSeries {
                labels: l.clone(),
                samples: std::mem::take(cpu),
            });
            out.usage.memory.push(RawSeries {
                labels: l,
                samples: std::mem::take(mem),
            });
        }
    };
    for t in points {
        let d = Draws::at(seed, &draw_key, t, spec.memory);
        let r = c.resources_at(t);
        let limits = Limits {
            cpu: r.cpu_limit,
            memory: r.memory_limit,
        };
        let m = moment(
            spec.cpu,
            spec.memory,
            c.scale,
            t,
            t - life_start,
            limits,
            &d,
        );
        counter += m.cpu / 1000.0 * step_s;
        let bytes = m.memory;
        if m.oom_killed {
            // OOM-killed: the container restarts with a new cAdvisor series and a fresh counter.
            kills.push(t);
            flush(out, &mut cpu, &mut mem, restart);
            restart += 1;
            life_start = t;
            counter = 0.0;
            continue;
        }
        cpu.push(Sample {
            timestamp: t,
            value: counter,
        });
        mem.push(Sample {
            timestamp: t,
            value: bytes,
        });
        if let Some(k) = kills.last() {
            oom_samples.push(Sample {
                timestamp: t,
                value: (*k / 1000) as f64,
            });
        }
    }
    flush(out, &mut cpu, &mut mem, restart);
    if !oom_samples.is_empty() {
        let l = labels(&[
            (label::NAMESPACE, spec.namespace),
            (label::POD, pod.name.as_str()),
            (label::UID, pod.uid.as_str()),
            (label::CONTAINER, c.name),
        ]);
        out.settings.oom_terminations.push(RawSeries {
            labels: l,
            samples: oom_samples,
        });
    }
}

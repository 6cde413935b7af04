//! The inventory (queries 1–8, 14 and 15 of docs/contracts/datasource.md) from the
//! stored kube-state-metrics series, at the window end, as Prometheus answers them:
//! `max by (…) (last_over_time(…[W]))` for what was seen in the window, raw `[5m]`
//! ranges for what is alive now (their own sample times), and the labels' plain
//! instant selector.

use super::promql::{instant_at, last_over_time, max_by, range_at};
use super::selection::Selection;
use crate::datasource::raw::{label, metric, RawInventory, RawSeries};
use crate::store::usage::LabelMatcher;
use crate::store::{StoreError, UsageRead};

/// The `[5m]` of the "now" answers (queries 2, 7, 9 and 15).
pub const NOW_RANGE_MS: i64 = 5 * 60_000;

/// The inventory of `sel` at `end` over the `window_ms` before it.
pub fn inventory(
    r: &UsageRead<'_>,
    sel: &Selection,
    end: i64,
    window_ms: i64,
) -> Result<RawInventory, StoreError> {
    // `max by (by) (last_over_time(metrics{extra, S}[W]))`.
    let seen = |metrics: &[&str], extra: Option<LabelMatcher>, by: &[&str]| {
        let mut q = sel.query(metrics);
        if let Some(m) = extra {
            q = q.matching(m);
        }
        Ok::<Vec<RawSeries>, StoreError>(max_by(by, last_over_time(r, &q, end, window_ms)?, end))
    };
    let now = |metrics: &[&str]| range_at(r, &sel.query(metrics), end, NOW_RANGE_MS);
    let pod = [label::NAMESPACE, label::POD, label::UID];
    Ok(RawInventory {
        pod_owner: seen(
            &[metric::POD_OWNER],
            None,
            &[
                label::NAMESPACE,
                label::POD,
                label::UID,
                label::OWNER_KIND,
                label::OWNER_NAME,
                "owner_is_controller",
            ],
        )?,
        pod_alive: now(&[metric::POD_OWNER])?,
        pod_created: seen(&[metric::POD_CREATED], None, &pod)?,
        pod_revision: seen(
            &[metric::POD_LABELS],
            Some(LabelMatcher::not_equal(label::REVISION, "")),
            &[label::NAMESPACE, label::POD, label::UID, label::REVISION],
        )?,
        replicaset_owner: seen(
            &[metric::REPLICASET_OWNER, metric::JOB_OWNER],
            None,
            &[
                label::NAMESPACE,
                label::REPLICASET,
                label::JOB_NAME,
                label::OWNER_KIND,
                label::OWNER_NAME,
            ],
        )?,
        workload_created: seen(
            &[
                metric::DEPLOYMENT_CREATED,
                metric::STATEFULSET_CREATED,
                metric::DAEMONSET_CREATED,
                metric::CRONJOB_CREATED,
            ],
            None,
            &[
                label::NAMESPACE,
                label::DEPLOYMENT,
                label::STATEFULSET,
                label::DAEMONSET,
                label::CRONJOB,
            ],
        )?,
        replicas: now(&[
            metric::DEPLOYMENT_REPLICAS,
            metric::STATEFULSET_REPLICAS,
            metric::DAEMONSET_DESIRED,
            metric::ROLLOUT_REPLICAS,
        ])?,
        labels: instant_at(
            r,
            &sel.query(&[
                metric::DEPLOYMENT_LABELS,
                metric::STATEFULSET_LABELS,
                metric::DAEMONSET_LABELS,
                metric::CRONJOB_LABELS,
                metric::POD_LABELS,
            ]),
            end,
        )?,
        replicaset_created: seen(
            &[metric::REPLICASET_CREATED],
            None,
            &[label::NAMESPACE, label::REPLICASET],
        )?,
        hpa: now(&[
            metric::HPA_INFO,
            metric::HPA_TARGET_METRIC,
            metric::HPA_MIN_REPLICAS,
            metric::HPA_MAX_REPLICAS,
        ])?,
    })
}

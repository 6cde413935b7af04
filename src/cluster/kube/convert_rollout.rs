//! How far a workload's controller has rolled out its template, from its `status`.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};

use crate::cluster::RolloutStatus;

pub fn deployment(d: &Deployment) -> RolloutStatus {
    let s = d.status.as_ref();
    let deadline_exceeded = s
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| {
            c.iter().find(|c| {
                c.type_ == "Progressing"
                    && c.status == "False"
                    && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
            })
        })
        .map(|c| {
            c.message
                .clone()
                .unwrap_or_else(|| "ProgressDeadlineExceeded".into())
        });
    RolloutStatus {
        updated: s.and_then(|s| s.updated_replicas).unwrap_or(0),
        total: s.and_then(|s| s.replicas).unwrap_or(0),
        available: s.and_then(|s| s.available_replicas).unwrap_or(0),
        deadline_exceeded,
    }
}

pub fn statefulset(st: &StatefulSet) -> RolloutStatus {
    let s = st.status.as_ref();
    // Pods of the update revision; once the rollout is over the controller moves
    // `currentRevision` and counts them as current.
    let settled =
        s.is_some_and(|s| s.current_revision.is_some() && s.current_revision == s.update_revision);
    let updated = s.and_then(|s| {
        if settled {
            s.current_replicas.or(s.updated_replicas)
        } else {
            s.updated_replicas
        }
    });
    RolloutStatus {
        updated: updated.unwrap_or(0),
        total: s.map(|s| s.replicas).unwrap_or(0),
        available: s.and_then(|s| s.available_replicas).unwrap_or(0),
        deadline_exceeded: None,
    }
}

pub fn daemonset(d: &DaemonSet) -> RolloutStatus {
    let s = d.status.as_ref();
    RolloutStatus {
        updated: s.and_then(|s| s.updated_number_scheduled).unwrap_or(0),
        total: s.map(|s| s.current_number_scheduled).unwrap_or(0),
        available: s.and_then(|s| s.number_available).unwrap_or(0),
        deadline_exceeded: None,
    }
}

/// The `ReplicaFailure` condition's message, while it holds.
pub fn replica_failure(rs: &ReplicaSet) -> Option<String> {
    let c = rs
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "ReplicaFailure" && c.status == "True")?;
    Some(
        c.message
            .clone()
            .unwrap_or_else(|| c.reason.clone().unwrap_or_default()),
    )
}

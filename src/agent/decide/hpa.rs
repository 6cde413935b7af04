//! HPA coordination (pure). An HPA that scales on CPU or memory *utilization* measures
//! usage against the requests, so changing the requests moves its absolute target. kerf
//! keeps the target where it was: new utilization = old × old request / new request
//! (the pod's summed requests for a `Resource` metric, the container's for a
//! `ContainerResource` one), applied to the HPA in the same change. When that cannot be
//! done the change waits as `HPACoupled`: coordination is off in the policy, the HPA has
//! several metrics (or several HPAs target the workload), a container-resource metric
//! reads a container kerf does not change, the request is unset, the new target would
//! leave 1–100 %, or a KEDA `ScaledObject` makes the HPA (KEDA writes its HPA back from
//! the ScaledObject's triggers, so kerf would fight it; the finding names the trigger
//! value that keeps the scaling point).

use super::values::{fields_of, Proposal};
use super::Finding;
pub use crate::agent::state::HpaChange;
use crate::cluster::{Hpa, Workload};
use crate::wire::{EventResource, Reason};

/// The kind of KEDA's object that makes an HPA (`keda.sh`), and writes it back.
pub const SCALED_OBJECT: &str = "ScaledObject";

/// The bounds a coordinated utilization target must stay in (percent).
pub const TARGET_BOUNDS: (i32, i32) = (1, 100);

fn resource_name(r: EventResource) -> &'static str {
    match r {
        EventResource::Cpu => "cpu",
        EventResource::Memory => "memory",
    }
}

fn coupled(hpa: &Hpa, message: String) -> Finding {
    Finding::new(Reason::HPACoupled, message).detail("hpa", &hpa.name)
}

/// The summed effective request of `r` over `values` (a request left unset defaults to
/// the limit, as the API server defaults the pods).
fn request(values: impl Iterator<Item = crate::cluster::Resources>, r: EventResource) -> u64 {
    let [req, lim] = fields_of(r);
    values.map(|v| v.get(req).or(v.get(lim)).unwrap_or(0)).sum()
}

/// The HPA change that keeps the absolute target, `Ok(None)` when no utilization HPA is
/// touched by the change, or the `HPACoupled` finding.
pub fn coordinate(
    live: &Workload,
    hpas: &[&Hpa],
    proposal: &Proposal,
    resources: &[EventResource],
    enabled: bool,
) -> Result<Option<HpaChange>, Finding> {
    let touched = |h: &Hpa| {
        h.metrics.iter().any(|m| {
            m.utilization()
                .is_some_and(|(r, _)| resources.iter().any(|x| resource_name(*x) == r))
        })
    };
    let relevant: Vec<&Hpa> = hpas.iter().copied().filter(|h| touched(h)).collect();
    let Some(hpa) = relevant.first() else {
        return Ok(None);
    };
    if !enabled {
        return Err(coupled(
            hpa,
            format!(
                "HPA {} scales on utilization and the policy turns hpaCoordination off",
                hpa.name
            ),
        ));
    }
    if relevant.len() > 1 || hpa.metrics.len() > 1 {
        return Err(coupled(
            hpa,
            format!(
                "HPA {} has several metrics (or several HPAs target the workload); kerf cannot keep its target",
                hpa.name
            ),
        ));
    }
    let metric = &hpa.metrics[0];
    let (name, from) = metric.utilization().expect("touched: a utilization metric");
    let r = if name == "cpu" {
        EventResource::Cpu
    } else {
        EventResource::Memory
    };
    let changed = |c: &str| proposal.containers.iter().any(|x| x.name == c);
    // Every container's value now and after (unchanged containers keep theirs).
    let after = |c: &crate::cluster::Container| {
        proposal
            .containers
            .iter()
            .find(|x| x.name == c.name)
            .map_or(c.resources, |x| x.target)
    };
    let (old, new) = match (&metric.kind[..], &metric.container) {
        ("ContainerResource", Some(container)) => {
            if !changed(container) {
                return Err(coupled(
                    hpa,
                    format!(
                        "HPA {} scales on container {container}, which this change leaves alone",
                        hpa.name
                    ),
                ));
            }
            let c = live.containers.iter().filter(|c| &c.name == container);
            (
                request(c.clone().map(|c| c.resources), r),
                request(c.map(after), r),
            )
        }
        // The app containers and sidecars: an init container has finished by the time
        // the HPA measures the pod.
        _ => {
            let running = || live.containers.iter().filter(|c| c.role.long_running());
            (
                request(running().map(|c| c.resources), r),
                request(running().map(after), r),
            )
        }
    };
    if old == 0 || new == 0 {
        return Err(coupled(
            hpa,
            format!(
                "HPA {} measures {name} against a request that is not set",
                hpa.name
            ),
        ));
    }
    if old == new {
        return Ok(None);
    }
    let to = (f64::from(from) * old as f64 / new as f64).round() as i64;
    let (lo, hi) = TARGET_BOUNDS;
    if to < i64::from(lo) || to > i64::from(hi) {
        return Err(coupled(
            hpa,
            format!(
                "keeping HPA {}'s target would need {to} % {name} utilization, outside {lo}–{hi} %",
                hpa.name
            ),
        )
        .detail("hpaTargetFrom", from.to_string())
        .detail("hpaTargetTo", to.to_string()));
    }
    // KEDA writes back the HPA it makes: its ScaledObject's trigger is changed instead.
    let scaled_object = hpa
        .controller
        .as_ref()
        .filter(|o| o.kind == SCALED_OBJECT)
        .map(|o| o.name.clone());
    let to = to as i32;
    let mut next = metric.clone();
    next.target_utilization = Some(to);
    Ok(Some(HpaChange {
        namespace: hpa.namespace.clone(),
        name: hpa.name.clone(),
        resource: name.to_string(),
        target_from: from,
        target_to: to,
        from: hpa.metrics.clone(),
        to: vec![next],
        scaled_object,
    }))
}

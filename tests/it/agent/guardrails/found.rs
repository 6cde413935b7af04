//! Defects an acceptance run against a real API server found, each proven here: a
//! workload the agent first meets while its cluster is paused is held
//! (`blocked HubUnreachable`) when the hub then goes away, like any other; and a
//! rollback resizes each pod once (the API server's audit log counts the agent's
//! `PATCH pods/resize` per pod). The third, the kubelet named as the API server in the
//! throttling warning, is `kube::throttling`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kerf::agent::{FeedPage, Hub, HubError};
use kerf::server::in_process::InProcessHub;
use kerf::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness, Reason};
use serde_json::json;

use super::super::world::{deployment, drive, ready, res, World};
use super::rollback::{a_memory_decrease_that_will_oom, live_again, oom_killed, rolled_back};
use super::{kinds, of, pair};
use crate::support::kube::{audit_log, control_plane, pki::AGENT_USER};

/// The in-process hub, whose feeds can be made unreachable.
struct Away {
    hub: InProcessHub,
    away: AtomicBool,
}

impl Away {
    fn check(&self) -> Result<(), HubError> {
        if self.away.load(Ordering::SeqCst) {
            Err(HubError::Unreachable("the hub is away".into()))
        } else {
            Ok(())
        }
    }
}

impl Hub for Away {
    async fn config(&self, since: Option<String>) -> Result<ConfigFeed, HubError> {
        self.check()?;
        self.hub.config(since).await
    }
    async fn recommendations(
        &self,
        since: Option<String>,
        next: Option<String>,
    ) -> Result<FeedPage, HubError> {
        self.check()?;
        self.hub.recommendations(since, next).await
    }
    async fn heartbeat(&self, heartbeat: &Heartbeat) -> Result<Readiness, HubError> {
        self.check()?;
        self.hub.heartbeat(heartbeat).await
    }
    async fn send_events(&self, batch: &[AgentEvent]) -> Result<(), HubError> {
        self.check()?;
        self.hub.send_events(batch).await
    }
    async fn write(&self, body: bytes::Bytes) -> Result<(), HubError> {
        self.check()?;
        self.hub.write(body).await
    }

    async fn report_policies(
        &self,
        report: &kerf::wire::cluster_policies::ClusterPolicies,
    ) -> Result<kerf::wire::cluster_policies::ClusterPolicyVerdicts, HubError> {
        self.check()?;
        self.hub.report_policies(report).await
    }
}

#[tokio::test]
async fn a_workload_first_seen_while_paused_is_held_when_the_hub_goes_away() {
    let w = World::now("found-paused", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &key, 2).await;
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(250, 500, 256, 512)).await;
    w.cluster_action("POST", "pause", json!({ "reason": "incident" }))
        .await;
    let hub = Arc::new(Away {
        hub: InProcessHub::new(w.hub.state.clone(), &w.cluster),
        away: AtomicBool::new(false),
    });
    // The agent's first look at the workload is while the cluster is paused.
    let mut agent = w.agent_with(hub.clone()).await;
    drive(&mut agent, "Paused", |a| {
        a.state(&key)
            .is_some_and(|s| s.last_reason == Some(Reason::Paused))
    })
    .await;
    hub.away.store(true, Ordering::SeqCst);
    drive(&mut agent, "HubUnreachable", |a| {
        a.state(&key)
            .is_some_and(|s| s.last_reason == Some(Reason::HubUnreachable))
    })
    .await;
    agent.pass().await;
    hub.away.store(false, Ordering::SeqCst);
    let flushed = agent.outbox().flush(hub.as_ref()).await;
    assert!(
        matches!(flushed, kerf::agent::outbox::Flushed::Empty { .. }),
        "{flushed:?}"
    );
    let events = w.audit().await;
    assert_eq!(
        kinds(&of(&events, "api")),
        [pair("blocked", "Paused"), pair("blocked", "HubUnreachable")]
    );
}

#[tokio::test]
async fn a_rollback_started_between_passes_resizes_each_pod_once() {
    let (w, key, base, _) = a_memory_decrease_that_will_oom("found-resize-once").await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied", |a| {
        a.state(&key).is_some_and(|s| s.watch.is_some())
    })
    .await;
    oom_killed(&w, &key).await;
    // Between passes the agent's loop looks at its watches (advance_all): that is
    // where most rollbacks start.
    crate::support::eventually("rolled back", crate::support::secs(60), async || {
        agent.advance_all().await;
        rolled_back(&agent, &key)
    })
    .await;
    live_again(&w, &key, 2, base).await;
    let pods: Vec<String> = ready(&w, &key, 2)
        .await
        .into_iter()
        .map(|p| p.pod.name)
        .collect();
    let resizes = audit_log::resizes(&control_plane().dir, &w.ns.name, AGENT_USER);
    for pod in &pods {
        // One resize for the change, one for its rollback.
        assert_eq!(resizes.get(pod), Some(&2), "{pod}: {resizes:?}");
    }
}

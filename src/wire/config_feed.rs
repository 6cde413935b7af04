//! `GET /v1/clusters/{cluster}/config`: everything the agent needs to decide, at the
//! hub's time. Pause flags and scope, the cluster-wide freeze, the agent settings, the
//! server time, and per workload its effective mode, effective policy and the policy's
//! identity (a recommendation made under another identity is `RecommendationStale`).

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::actor::Actor;
use crate::policy::{EffectiveMode, EffectivePolicy};

/// The config feed of one cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigFeed {
    pub cluster: String,
    /// The hub's now (RFC 3339): the time every flag and expiry here was judged at.
    pub server_time: String,
    pub flags: FeedFlags,
    /// The pause in force (the fleet's wins over the cluster's), if any.
    pub pause: Option<Pause>,
    /// The cluster-wide freeze in force; `enabled: false` when there is none.
    pub freeze: Freeze,
    pub agent: AgentSettings,
    /// Where the hub reads this cluster's usage: `embedded` (its own store, which the
    /// agent fills by remote write when its `[collector] enabled` is `auto`) or
    /// `prometheus`. Absent: `prometheus`.
    #[serde(default)]
    pub usage_source: UsageSource,
    /// Every workload of the cluster the hub knows (stale ones included), or on a change
    /// answer (`since`) the entries that changed.
    pub workloads: Vec<WorkloadConfig>,
    /// The feed's version: send it back as `since` to get only what changes after it
    /// (docs/contracts/agent.md, "Feeds by change"). Absent from hubs before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Set when this answer holds only what changed since that version (the one the
    /// agent sent); absent on a whole feed, which replaces what the agent holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Workload ids whose entry left the feed since `since` (on a change answer only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deleted: Vec<String>,
    /// Entries of `workloads` this agent could not read (filled by [`ConfigFeed::read`],
    /// never sent).
    #[serde(skip)]
    pub unreadable: Vec<UnreadableWorkload>,
}

/// A workload entry of the config feed that does not parse, named as far as it can be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableWorkload {
    /// The entry's workload id, when it could be read.
    pub workload_id: Option<String>,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub error: String,
}

impl ConfigFeed {
    /// Reads a feed the way an agent must: fields it does not know are ignored, and a
    /// workload entry that does not parse is set aside in `unreadable` (that workload is
    /// reported `failed`; the others go on). Anything else that does not parse fails the
    /// whole feed (the hub counts as unreachable).
    pub fn read(text: &str) -> Result<ConfigFeed, serde_json::Error> {
        /// The feed with its workload entries left unparsed, to be read one by one
        /// (straight into their type: no intermediate JSON tree).
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Envelope<'a> {
            cluster: String,
            server_time: String,
            flags: FeedFlags,
            pause: Option<Pause>,
            freeze: Freeze,
            agent: AgentSettings,
            #[serde(default)]
            usage_source: UsageSource,
            #[serde(borrow)]
            workloads: Vec<&'a RawValue>,
            #[serde(default)]
            version: Option<String>,
            #[serde(default)]
            since: Option<String>,
            #[serde(default)]
            deleted: Vec<String>,
        }
        let e: Envelope = serde_json::from_str(text)?;
        let mut feed = ConfigFeed {
            cluster: e.cluster,
            server_time: e.server_time,
            flags: e.flags,
            pause: e.pause,
            freeze: e.freeze,
            agent: e.agent,
            usage_source: e.usage_source,
            workloads: Vec::with_capacity(e.workloads.len()),
            version: e.version,
            since: e.since,
            deleted: e.deleted,
            unreadable: Vec::new(),
        };
        // Most workloads share a handful of policies: each distinct one is kept once.
        let mut distinct: HashMap<String, Vec<Arc<EffectivePolicy>>> = HashMap::new();
        for item in e.workloads {
            match serde_json::from_str::<WorkloadConfig>(item.get()) {
                Ok(mut w) => {
                    let same = distinct.entry(w.policy_identity.clone()).or_default();
                    match same.iter().find(|p| **p == w.policy) {
                        Some(p) => w.policy = p.clone(),
                        None => same.push(w.policy.clone()),
                    }
                    feed.workloads.push(w)
                }
                Err(error) => {
                    let named = serde_json::from_str::<NamedWorkload>(item.get()).ok();
                    let workload_id = named.as_ref().and_then(|n| n.workload_id.clone());
                    match named.and_then(NamedWorkload::name) {
                        Some(key) => feed.unreadable.push(UnreadableWorkload {
                            workload_id,
                            namespace: key.namespace,
                            kind: key.kind,
                            name: key.name,
                            error: error.to_string(),
                        }),
                        None => {
                            tracing::warn!(%error, "a config feed entry without a workload name was ignored")
                        }
                    }
                }
            }
        }
        Ok(feed)
    }
}

/// What names a workload in a feed entry, read on its own when the rest of the entry
/// does not parse (so that workload can be reported).
#[derive(Debug, Default, Deserialize)]
pub struct NamedWorkload {
    #[serde(rename = "workloadId")]
    workload_id: Option<String>,
    namespace: Option<String>,
    kind: Option<String>,
    name: Option<String>,
}

impl NamedWorkload {
    /// The workload's key when all three parts are there.
    pub fn name(self) -> Option<crate::workload::WorkloadKey> {
        Some(crate::workload::WorkloadKey {
            namespace: self.namespace?,
            kind: self.kind?,
            name: self.name?,
        })
    }
}

/// Where the hub reads a cluster's usage from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum UsageSource {
    /// A Prometheus-compatible datasource.
    #[default]
    Prometheus,
    /// The hub's own store, filled by the cluster's agent through remote write.
    Embedded,
}

impl<'de> Deserialize<'de> for UsageSource {
    /// A source this agent does not know (a newer hub's) reads as `prometheus`: the
    /// agent then collects only when configured to, and the rest of the feed still reads.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match String::deserialize(d)?.as_str() {
            "embedded" => UsageSource::Embedded,
            _ => UsageSource::Prometheus,
        })
    }
}

/// What stops the agent from changing anything, at a glance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedFlags {
    /// Automation paused: report `blocked Paused` with `details.pauseScope`.
    pub paused: bool,
    /// `cluster` or `fleet` while paused.
    pub pause_scope: Option<PauseScope>,
    /// The cluster-wide freeze is on: report `blocked FreezeWindow`.
    pub frozen: bool,
}

/// Which pause applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PauseScope {
    Cluster,
    Fleet,
}

impl PauseScope {
    /// `cluster` or `fleet`.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseScope::Cluster => "cluster",
            PauseScope::Fleet => "fleet",
        }
    }
}

/// A pause of automation (also the API's representation of one, and the `before`/`after`
/// of its audit rows). `paused: false` with only `id` and `scope` when not paused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pause {
    /// The cluster's name, or `*` for the fleet.
    pub id: String,
    pub scope: PauseScope,
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<Actor>,
    /// When the hub resumes it on its own (RFC 3339), if set. Present (as `null` when
    /// unset) on every pause in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_at: Option<Option<String>>,
}

/// The cluster-wide freeze: no change and no release of field ownership while on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Freeze {
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// When it ends on its own (RFC 3339); `null` while on without an end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Option<String>>,
}

impl Freeze {
    /// No freeze.
    pub fn off() -> Freeze {
        Freeze {
            enabled: false,
            reason: None,
            since: None,
            until: None,
        }
    }
}

/// How the agent runs, set by the hub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSettings {
    /// How often the agent runs its decision loop, in seconds.
    pub loop_interval_seconds: u64,
    /// How often it sends a heartbeat, in seconds.
    pub heartbeat_interval_seconds: u64,
    /// Changes smaller than this fraction are skipped as `NoSignificantChange` unless a
    /// policy sets its own tolerance.
    pub change_tolerance_default: f64,
    /// Events buffered while the hub is unreachable (oldest dropped first).
    pub event_buffer_size: u32,
}

impl Default for AgentSettings {
    /// The build's defaults (the hub's `[agents]` section may change the intervals and
    /// the buffer).
    fn default() -> Self {
        AgentSettings {
            loop_interval_seconds: 30,
            heartbeat_interval_seconds: 30,
            change_tolerance_default: crate::policy::defaults::CHANGE_TOLERANCE,
            event_buffer_size: 10_000,
        }
    }
}

/// One workload's effective policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadConfig {
    pub workload_id: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    /// The effective mode per resource (also inside `policy`).
    pub mode: EffectiveMode,
    /// The identity of `policy`; recommendations made under another are stale.
    pub policy_identity: String,
    // Shared among the workloads of a feed that have the same one (the agent side).
    #[schema(value_type = EffectivePolicy)]
    pub policy: Arc<EffectivePolicy>,
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::policy::model::{FreezeWindow, MaintenanceWindow};
    use crate::policy::{resolve, StoredPolicy, WorkloadRef};

    /// A feed as the hub writes it, with two workloads under a policy with windows.
    fn feed() -> Value {
        let spec: crate::policy::PolicySpec = serde_json::from_value(json!({
            "name": "w",
            "apply": {
                "strategy": "deferred",
                "maintenanceWindows": [{"cron": "0 2 * * *", "duration": "2h"}],
                "freezeWindows": [{"start": "2026-12-24T00:00:00Z", "end": "2026-12-27T00:00:00Z"}]
            }
        }))
        .unwrap();
        let policies = [StoredPolicy::hub(1, 1, spec)];
        let workload = |name: &str| {
            let w = WorkloadRef {
                cluster: "prod".into(),
                workload: crate::workload::WorkloadKey::new("shop", "Deployment".into(), name),
                ..Default::default()
            };
            let r = resolve::resolve(&w, &policies, None, &json!({}), 0);
            WorkloadConfig {
                workload_id: format!("wl-{name}"),
                namespace: w.workload.namespace,
                kind: w.workload.kind,
                name: w.workload.name,
                mode: r.effective.mode.clone(),
                policy_identity: r.identity,
                policy: Arc::new(r.effective),
            }
        };
        let feed = ConfigFeed {
            cluster: "prod".into(),
            server_time: "2026-12-01T00:00:00.000Z".into(),
            flags: FeedFlags {
                paused: false,
                pause_scope: None,
                frozen: false,
            },
            pause: None,
            freeze: Freeze::off(),
            agent: AgentSettings::default(),
            usage_source: UsageSource::Embedded,
            workloads: vec![workload("cart"), workload("web")],
            version: Some("e.1".into()),
            since: None,
            deleted: Vec::new(),
            unreadable: Vec::new(),
        };
        serde_json::to_value(feed).unwrap()
    }

    #[test]
    fn workloads_with_the_same_policy_share_one_copy_and_a_different_one_stays_apart() {
        let mut v = feed();
        let mut third = v["workloads"][1].clone();
        third["name"] = json!("api");
        // Same identity, different policy: equality, not the identity, decides sharing.
        third["policy"]["guardrails"]["minConfidence"] = json!(99);
        v["workloads"].as_array_mut().unwrap().push(third);
        let read = ConfigFeed::read(&v.to_string()).expect("reads");
        let [cart, web, api] = &read.workloads[..] else {
            panic!("three workloads: {:?}", read.unreadable)
        };
        assert!(Arc::ptr_eq(&cart.policy, &web.policy));
        assert!(!Arc::ptr_eq(&web.policy, &api.policy));
        assert_eq!(api.policy.guardrails.min_confidence, 99);
        assert_eq!(web.policy_identity, api.policy_identity);
    }

    #[test]
    fn fields_a_newer_hub_adds_anywhere_are_ignored() {
        let mut v = feed();
        v["shards"] = json!(3);
        v["flags"]["draining"] = json!(true);
        v["agent"]["profile"] = json!("fast");
        let apply = &mut v["workloads"][0]["policy"]["apply"];
        apply["maintenanceWindows"][0]["jitter"] = json!("5m");
        apply["freezeWindows"][0]["label"] = json!("holidays");
        apply["canary"] = json!({"steps": 2});
        v["workloads"][1]["priorityClass"] = json!("high");
        let read = ConfigFeed::read(&v.to_string()).expect("a newer hub's feed reads");
        assert_eq!(read.workloads.len(), 2, "{:?}", read.unreadable);
        assert!(read.unreadable.is_empty());
        let apply = &read.workloads[0].policy.apply;
        assert_eq!(
            apply.maintenance_windows,
            [MaintenanceWindow {
                cron: "0 2 * * *".into(),
                duration: "2h".into(),
                timezone: "UTC".into()
            }]
        );
        assert_eq!(apply.freeze_windows.len(), 1);
        let _: &FreezeWindow = &apply.freeze_windows[0];
        // And the feed reads back as the hub wrote it.
        assert_eq!(
            ConfigFeed::read(&feed().to_string()).unwrap(),
            serde_json::from_value(feed()).unwrap()
        );
    }

    #[test]
    fn the_usage_source_is_prometheus_when_absent_or_unknown() {
        let source = |v: Option<Value>| {
            let mut feed = feed();
            match v {
                Some(v) => feed["usageSource"] = v,
                None => {
                    feed.as_object_mut().unwrap().remove("usageSource");
                }
            }
            ConfigFeed::read(&feed.to_string())
                .expect("reads")
                .usage_source
        };
        assert_eq!(source(Some(json!("embedded"))), UsageSource::Embedded);
        assert_eq!(source(None), UsageSource::Prometheus);
        assert_eq!(source(Some(json!("otlp"))), UsageSource::Prometheus);
    }

    #[test]
    fn one_workload_entry_that_does_not_parse_is_set_aside_and_the_others_are_read() {
        let mut v = feed();
        v["workloads"][0]["mode"]["cpu"] = json!("turbo");
        let read = ConfigFeed::read(&v.to_string()).expect("the feed reads");
        assert_eq!(read.workloads.len(), 1);
        assert_eq!(read.workloads[0].name, "web");
        let bad = &read.unreadable;
        assert_eq!(bad.len(), 1);
        assert_eq!(
            (bad[0].namespace.as_str(), bad[0].name.as_str()),
            ("shop", "cart")
        );
        assert!(bad[0].error.contains("turbo"), "{}", bad[0].error);
    }

    #[test]
    fn a_feed_that_does_not_parse_as_a_whole_is_an_error() {
        for broken in [json!({"cluster": "prod"}), json!([]), {
            let mut v = feed();
            v["flags"] = json!("paused");
            v
        }] {
            assert!(ConfigFeed::read(&broken.to_string()).is_err());
        }
    }

    #[test]
    fn users_policies_stay_strict_about_window_fields() {
        let spec = json!({"name": "w", "apply": {"maintenanceWindows": [
            {"cron": "0 2 * * *", "duration": "2h", "jitter": "5m"}]}});
        assert!(serde_json::from_value::<crate::policy::PolicySpec>(spec).is_err());
    }
}

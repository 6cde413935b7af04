//! Done means 6: `mode = "agent"` — the real `kerf` binary as the agent, against a hub
//! in another process (the real binary, HTTPS with its own CA) with the cluster token,
//! and the real control plane as the agent's identity (its kubeconfig, the shipped
//! RBAC). Stopping the hub yields one `HubUnreachable`; once it is back, the buffered
//! events arrive exactly once.

use std::time::Duration;

use kerf::cluster::WorkloadKind;
use kerf::sim::api_kubelet::ApiKubelet;
use kerf::store::{Store, StoreOptions};
use serde_json::{json, Value};

use super::world::{seed, Rec};
use crate::support::kube::objects::{deployment, node};
use crate::support::kube::{control_plane, namespace};
use crate::support::{eventually, Api, DataDir, Kerf};

impl Api {
    /// `(type, reason, id)` of the cluster's stored events, oldest first (empty while
    /// the hub does not answer).
    async fn events(&self, cluster: &str) -> Vec<(String, String, String)> {
        let (s, v) = self
            .try_call(
                "GET",
                &format!("/v1/audit?cluster={cluster}&limit=500"),
                None,
            )
            .await;
        if s != 200 {
            return Vec::new();
        }
        let mut out: Vec<(String, String, String)> = v["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|e| {
                let f = |k: &str| e[k].as_str().unwrap_or_default().to_string();
                (f("type"), f("reason"), f("id"))
            })
            .collect();
        out.reverse();
        out
    }
}

#[tokio::test]
async fn a_remote_agent_over_https_buffers_while_the_hub_is_away() {
    let plane = control_plane();
    let admin = plane.admin().await;
    let ns = namespace(&admin, "agent-remote").await;
    let _kubelet = ApiKubelet::start(admin.clone(), vec![node(&ns.name, 4000, 8192)], 3)
        .await
        .expect("kubelet");
    let cluster = ns.name.clone();
    // The hub: its own certificate, agents told to loop every second.
    let hub_dir = DataDir::new();
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).expect("cert");
    let (crt, key) = (
        hub_dir.path().join("hub.crt"),
        hub_dir.path().join("hub.key"),
    );
    std::fs::write(&crt, cert.cert.pem()).expect("cert");
    std::fs::write(&key, cert.signing_key.serialize_pem()).expect("key");
    let token = hub_dir.create_cluster(&cluster);
    let admin_token = hub_dir.admin_token();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let listen = format!("127.0.0.1:{port}");
    let (crt_s, key_s) = (crt.display().to_string(), key.display().to_string());
    let hub_env = [
        ("KERF_TLS__CERT_FILE", crt_s.as_str()),
        ("KERF_TLS__KEY_FILE", key_s.as_str()),
        ("KERF_AGENTS__LOOP_INTERVAL_SECONDS", "1"),
        ("KERF_AGENTS__HEARTBEAT_INTERVAL_SECONDS", "1"),
    ];
    let hub = Kerf::builder(hub_dir.path())
        .envs(&hub_env)
        .listen(&listen)
        .start();
    let https = Api::new(format!("https://{listen}"), admin_token).with_http(
        reqwest::Client::builder()
            .add_root_certificate(
                reqwest::Certificate::from_pem(cert.cert.pem().as_bytes()).expect("ca"),
            )
            .build()
            .expect("client"),
    );
    // A workload, a policy, a recommendation (written as a run writes it).
    kube::Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(admin.clone(), &ns.name)
        .create(
            &Default::default(),
            &deployment(&ns.name, "web", 1, 500, 256),
        )
        .await
        .expect("deployment");
    let (s, v) = https
        .try_call(
            "POST",
            "/v1/policies",
            Some(json!({
            "name": "remote", "selector": { "clusters": [cluster] },
            "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
            "guardrails": { "learningPeriod": "1d", "minConfidence": 50 } })),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let key = kerf::cluster::WorkloadKey::new(&ns.name, WorkloadKind::Deployment, "web");
    let wid = kerf::runs::workload::workload_id(&cluster, &ns.name, "Deployment", "web");
    let store = Store::open_and_migrate(
        &hub_dir.path().join("kerf.db"),
        &StoreOptions {
            readers: 1,
            busy_timeout_ms: 5000,
        },
        0,
    )
    .expect("store");
    let now = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
    let suggested = kerf::cluster::Resources {
        cpu_request: Some(250),
        memory_request: Some(200 << 20),
        ..Default::default()
    };
    seed(
        &store,
        &cluster,
        &key,
        &wid,
        suggested,
        "pending",
        Rec::default(),
        now,
    )
    .await;
    let agent_client = reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(cert.cert.pem().as_bytes()).expect("ca"),
        )
        .build()
        .expect("client");
    let feed: Value = agent_client
        .get(format!("https://{listen}/v1/clusters/{cluster}/config"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("config feed")
        .json()
        .await
        .expect("json");
    let identity = feed["workloads"][0]["policyIdentity"]
        .as_str()
        .expect("identity")
        .to_string();
    seed(
        &store,
        &cluster,
        &key,
        &wid,
        suggested,
        &identity,
        Rec::default(),
        now,
    )
    .await;
    // The agent: its own process, the hub's CA, the token in the environment, the
    // control plane through its kubeconfig as kerf-agent.
    let agent_dir = DataDir::new();
    let kubeconfig = plane.pki.kubeconfig(
        agent_dir.path(),
        "agent",
        &plane.server,
        &plane.pki.tokens.agent.token,
    );
    let (kc, ca) = (kubeconfig.display().to_string(), crt_s.clone());
    let hub_url = format!("https://{listen}");
    let agent_env = [
        ("KERF_MODE", "agent"),
        ("KERF_AGENT__CLUSTER", cluster.as_str()),
        ("KERF_AGENT__HUB_URL", hub_url.as_str()),
        ("KERF_AGENT__HUB_CA_FILE", ca.as_str()),
        ("KERF_AGENT__NAMESPACES", ns.name.as_str()),
        ("KERF_AGENT_TOKEN", token.as_str()),
        ("KUBECONFIG", kc.as_str()),
    ];
    let agent = Kerf::builder(agent_dir.path()).envs(&agent_env).start();
    let applied = eventually(
        "the remote agent's applied event",
        Duration::from_secs(120),
        async || {
            let e = https.events(&cluster).await;
            e.iter().any(|(t, _, _)| t == "applied").then_some(e)
        },
    )
    .await;
    assert_eq!(applied[0].1, "RecommendationApplied", "{applied:?}");
    // The heartbeat cleared the cluster's readiness check.
    let (_, r) = https
        .try_call("GET", &format!("/v1/clusters/{cluster}/readiness"), None)
        .await;
    assert_eq!(r["checks"]["heartbeat"]["status"], "pass", "{r}");
    // The hub goes away for a while: the agent notices on its next passes.
    eventually(
        "the quiet after the apply",
        Duration::from_secs(30),
        async || {
            let e = https.events(&cluster).await;
            e.iter()
                .any(|(_, r, _)| r == "NoSignificantChange")
                .then_some(())
        },
    )
    .await;
    assert_eq!(hub.stop(), Some(0));
    eventually(
        "the agent to miss the hub three times",
        Duration::from_secs(60),
        async || {
            (agent
                .log_text()
                .matches("the hub cannot be reached")
                .count()
                >= 3)
                .then_some(())
        },
    )
    .await;
    let hub = Kerf::builder(hub_dir.path())
        .envs(&hub_env)
        .listen(&listen)
        .start();
    let events = eventually("the buffered events", Duration::from_secs(60), async || {
        let e = https.events(&cluster).await;
        (e.iter()
            .filter(|(_, r, _)| r == "NoSignificantChange")
            .count()
            == 2)
            .then_some(e)
    })
    .await;
    // A few more passes with the hub back: nothing repeats.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let settled = eventually("the hub answering", Duration::from_secs(10), async || {
        Some(https.events(&cluster).await).filter(|e| !e.is_empty())
    })
    .await;
    assert_eq!(settled, events, "nothing more after the hub came back");
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|(t, r, _)| (t.as_str(), r.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("applied", "RecommendationApplied"),
            ("skipped", "NoSignificantChange"),
            ("blocked", "HubUnreachable"),
            ("skipped", "NoSignificantChange"),
        ]
    );
    let mut ids: Vec<&String> = events.iter().map(|(_, _, id)| id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 4, "each stored once");
    assert!(
        !agent.log_text().contains(&token),
        "the token never reaches the logs"
    );
    assert_eq!(agent.stop(), Some(0));
    drop(hub);
}

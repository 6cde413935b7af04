//! Reading a node's kubelet directly, as metrics-server does: `GET
//! https://<InternalIP>:<daemonEndpoints.kubeletEndpoint.Port>/metrics/cadvisor` (CPU
//! throttling counters, and the usage the agent's collector ships) with the
//! agent's own credentials (the kubelet authorizes it as `nodes/metrics` get through the
//! API server, a read-only right, unlike `nodes/proxy`). The kubelet's serving
//! certificate is checked against `[agent] kubelet_ca_file`, else the cluster's CA (right
//! when the kubelets' serving certificates are signed by it, `serverTLSBootstrap`), or not
//! at all with `kubelet_insecure_tls` (self-signed kubelet certificates).

use std::collections::HashMap;
use std::sync::Mutex;

use kube::{Client, Config};

use crate::cluster::{ClusterError, CpuCounters, Node, UsageSample};

/// How kerf trusts the kubelets' serving certificates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeletTls {
    /// DER certificates of the CA(s) that signed the kubelets' serving certificates;
    /// `None`: the cluster's CA.
    pub ca: Option<Vec<Vec<u8>>>,
    /// Accept any serving certificate (kubelets with self-signed certificates).
    pub insecure: bool,
}

/// One client per kubelet, made from the agent's own Kubernetes config.
pub struct Kubelets {
    base: Config,
    tls: KubeletTls,
    clients: Mutex<HashMap<String, Client>>,
}

impl Kubelets {
    pub fn new(base: Config, tls: KubeletTls) -> Kubelets {
        Kubelets {
            base,
            tls,
            clients: Mutex::new(HashMap::new()),
        }
    }

    fn client(&self, endpoint: &str) -> Result<Client, ClusterError> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients.get(endpoint) {
            return Ok(c.clone());
        }
        let mut config = self.base.clone();
        config.cluster_url =
            format!("https://{endpoint}")
                .parse()
                .map_err(|e| ClusterError::Unexpected {
                    object: format!("kubelet endpoint {endpoint}"),
                    problem: format!("not a URL authority: {e}"),
                })?;
        if let Some(ca) = &self.tls.ca {
            config.root_cert = Some(ca.clone());
            config.root_cert_file = None;
        }
        config.accept_invalid_certs = self.tls.insecure;
        config.tls_server_name = None;
        config.default_retry = false;
        let client = Client::try_from(config).map_err(super::error)?;
        clients.insert(endpoint.to_string(), client.clone());
        Ok(client)
    }

    /// What `node`'s kubelet serves at `/metrics/cadvisor`: one request.
    async fn cadvisor(&self, node: &Node) -> Result<String, ClusterError> {
        let endpoint = node
            .daemon_endpoint
            .as_deref()
            .ok_or_else(|| ClusterError::Unexpected {
                object: format!("Node {}", node.name),
                problem: "the node names no kubelet endpoint (status.daemonEndpoints)".into(),
            })?;
        let client = self.client(endpoint)?;
        let kubelet = |code: Option<u16>, message: String| ClusterError::Kubelet {
            node: node.name.clone(),
            code,
            message,
        };
        let request = http::Request::get("/metrics/cadvisor")
            .body(Vec::new())
            .map_err(|e| kubelet(None, e.to_string()))?;
        client.request_text(request).await.map_err(|e| match e {
            kube::Error::Api(s) => kubelet(
                Some(s.code),
                format!("refused ({}, {}): {}", s.code, s.reason, s.message),
            ),
            other => kubelet(None, other.to_string()),
        })
    }

    /// The CFS counters of every container on `node`.
    pub async fn cpu_counters(&self, node: &Node) -> Result<Vec<CpuCounters>, ClusterError> {
        let text = self.cadvisor(node).await?;
        Ok(crate::cluster::cadvisor::cpu_counters(&text))
    }

    /// The usage samples of every container and pod on `node`.
    pub async fn usage(
        &self,
        node: &Node,
        scraped_at_ms: i64,
    ) -> Result<Vec<UsageSample>, ClusterError> {
        let text = self.cadvisor(node).await?;
        Ok(crate::cluster::cadvisor::usage(&text, scraped_at_ms))
    }
}

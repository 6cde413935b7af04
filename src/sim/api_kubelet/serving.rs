//! The kubelet's own HTTPS endpoint, as a real kubelet with webhook authentication and
//! authorization serves it: one listener per node (its port advertised in
//! `status.daemonEndpoints.kubeletEndpoint`), `GET /metrics/cadvisor` answered only for a
//! bearer token the API server accepts (TokenReview) and whose user may `get`
//! `nodes/metrics` of that node (SubjectAccessReview, decided by the cluster's RBAC).
//! Verdicts are cached for ten seconds, as the kubelet caches them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use k8s_openapi::api::authentication::v1::TokenReview;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use kube::api::{Api, PostParams};
use kube::Client;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;

use super::Shared;
use crate::cluster::ClusterError;

/// The kubelets' serving certificate and key (PEM).
#[derive(Debug, Clone)]
pub struct Serving {
    pub cert_pem: String,
    pub key_pem: String,
}

/// How long an authentication and authorization verdict is kept.
const CACHE_FOR: Duration = Duration::from_secs(10);

#[derive(Clone)]
struct Node {
    name: String,
    client: Client,
    shared: Arc<Shared>,
    verdicts: Arc<Mutex<HashMap<String, (Instant, StatusCode)>>>,
}

/// The TLS acceptor for `serving`.
pub fn acceptor(serving: &Serving) -> Result<tokio_rustls::TlsAcceptor, ClusterError> {
    let bad = |what: &str, e: String| ClusterError::Transport(format!("kubelet {what}: {e}"));
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(serving.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| bad("certificate", e.to_string()))?;
    let key = PrivateKeyDer::from_pem_slice(serving.key_pem.as_bytes())
        .map_err(|e| bad("key", e.to_string()))?;
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad("TLS config", e.to_string()))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// Serves node `name`'s kubelet endpoint on `listener` until the task is aborted.
pub async fn serve(
    listener: tokio::net::TcpListener,
    tls: tokio_rustls::TlsAcceptor,
    name: String,
    client: Client,
    shared: Arc<Shared>,
) {
    let node = Node {
        name,
        client,
        shared,
        verdicts: Arc::new(Mutex::new(HashMap::new())),
    };
    let app = Router::new()
        .route("/metrics/cadvisor", get(cadvisor))
        .with_state(node);
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let (tls, app) = (tls.clone(), app.clone());
        tokio::spawn(async move {
            let Ok(stream) = tls.accept(tcp).await else {
                return;
            };
            let service = TowerToHyperService::new(app);
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn cadvisor(State(node): State<Node>, headers: HeaderMap) -> (StatusCode, String) {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let Some(token) = token else {
        return (StatusCode::UNAUTHORIZED, "Unauthorized".into());
    };
    let verdict = verdict(&node, &token).await;
    if verdict != StatusCode::OK {
        let text = if verdict == StatusCode::UNAUTHORIZED {
            "Unauthorized".to_string()
        } else {
            format!(
                "Forbidden (verb=get, resource=nodes, subresource=metrics, name={})",
                node.name
            )
        };
        return (verdict, text);
    }
    (
        StatusCode::OK,
        super::metrics::render(&node.shared, Some(&node.name)),
    )
}

/// OK, UNAUTHORIZED or FORBIDDEN for `token`, cached.
async fn verdict(node: &Node, token: &str) -> StatusCode {
    {
        let cache = node.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, v)) = cache.get(token) {
            if at.elapsed() < CACHE_FOR {
                return *v;
            }
        }
    }
    let v = review(node, token).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "sim kubelet: cannot review a request");
        StatusCode::INTERNAL_SERVER_ERROR
    });
    node.verdicts
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(token.to_string(), (Instant::now(), v));
    v
}

async fn review(node: &Node, token: &str) -> Result<StatusCode, kube::Error> {
    let tr: TokenReview = serde_json::from_value(json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": { "token": token },
    }))
    .map_err(kube::Error::SerdeError)?;
    let tr = Api::<TokenReview>::all(node.client.clone())
        .create(&PostParams::default(), &tr)
        .await?;
    let status = tr.status.unwrap_or_default();
    let Some(user) = status.user.filter(|_| status.authenticated == Some(true)) else {
        return Ok(StatusCode::UNAUTHORIZED);
    };
    let sar: SubjectAccessReview = serde_json::from_value(json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {
            "user": user.username, "groups": user.groups, "uid": user.uid,
            "resourceAttributes": {
                "verb": "get", "resource": "nodes", "subresource": "metrics", "name": node.name,
            },
        },
    }))
    .map_err(kube::Error::SerdeError)?;
    let sar = Api::<SubjectAccessReview>::all(node.client.clone())
        .create(&PostParams::default(), &sar)
        .await?;
    let allowed = sar.status.is_some_and(|s| s.allowed);
    Ok(if allowed {
        StatusCode::OK
    } else {
        StatusCode::FORBIDDEN
    })
}

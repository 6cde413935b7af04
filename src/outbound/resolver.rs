//! Name resolution under the outbound policy. HTTP clients resolve through [`Vetted`]
//! at every new connection, and connect only to the addresses it let through, so a
//! name cannot pass the check with one answer and connect with another. SMTP resolves
//! once per submission with [`resolve`] and connects to the address it returns.

use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::{Policy, Refused};

/// The addresses of `host:port` the policy lets through, in the resolver's order.
pub async fn resolve(policy: &Policy, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refused> {
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| Refused(format!("{host} does not resolve: {e}")))?
        .collect();
    let mut first_refusal = None;
    let mut kept = Vec::new();
    for addr in found {
        match policy.check_addr(host, addr) {
            Ok(()) => kept.push(addr),
            Err(r) => {
                first_refusal.get_or_insert(r);
            }
        }
    }
    match (kept.is_empty(), first_refusal) {
        (false, _) => Ok(kept),
        (true, Some(r)) => Err(r),
        (true, None) => Err(Refused(format!("{host} resolves to no address"))),
    }
}

/// A reqwest resolver that drops the addresses the policy refuses (port 0: the port
/// is the URL's, checked before the request by [`Policy::check_url`]).
#[derive(Debug, Clone)]
pub struct Vetted {
    pub policy: Arc<Policy>,
}

impl Resolve for Vetted {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = resolve(&policy, &host, 0).await?;
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

//! How usage samples are read from one datasource, chosen once per source: streamed
//! remote read when the server answers it (Prometheus ≥ 2.13, Mimir, Cortex), else
//! VictoriaMetrics's export API when it answers that, else `query_range`. The datasource
//! setting `protocol` can force any of them. With remote read, the server's lookback
//! delta and version decide how raw samples are put on the step grid; with the export
//! API, VictoriaMetrics's rollup settings do; so every protocol gives the engine the
//! samples that server's `query_range` would.

use super::client::Client;
use super::remote_read::{MatchType, Matcher, ReadQuery};
use super::resample::Lookback;
use super::vm_export::{self, VmRollup};
use crate::datasource::DatasourceError;

/// The `protocol` setting of a datasource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtocolChoice {
    /// Remote read when the server streams it, else `query_range`.
    #[default]
    Auto,
    /// Remote read or fail (a server that refuses it fails the collection).
    RemoteRead,
    /// VictoriaMetrics's export API or fail.
    VmExport,
    /// Always `query_range`.
    QueryRange,
}

impl ProtocolChoice {
    /// The setting's spelling: `auto`, `remoteRead`, `vmExport`, `queryRange`.
    pub fn parse(text: &str) -> Option<ProtocolChoice> {
        match text {
            "auto" => Some(ProtocolChoice::Auto),
            "remoteRead" => Some(ProtocolChoice::RemoteRead),
            "vmExport" => Some(ProtocolChoice::VmExport),
            "queryRange" => Some(ProtocolChoice::QueryRange),
            _ => None,
        }
    }
}

/// The protocol a source reads usage with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    RemoteRead(Lookback),
    VmExport(VmRollup),
    QueryRange,
}

impl Protocol {
    /// As run records, metrics and the datasource test name it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::RemoteRead(_) => "remote-read",
            Protocol::VmExport(_) => "vm-export",
            Protocol::QueryRange => "query-range",
        }
    }
}

/// Whether the server streams remote-read chunks: one tiny read of a metric nobody has.
/// Credentials refused and an unreachable server are errors (the caller reports them);
/// any other refusal is a plain "no".
pub async fn probe(client: &Client, now_ms: i64) -> Result<Result<(), String>, DatasourceError> {
    let query = ReadQuery {
        start_ms: now_ms - 60_000,
        end_ms: now_ms,
        matchers: vec![Matcher::new(
            MatchType::Eq,
            "__name__",
            "kerf_remote_read_probe",
        )],
    };
    let mut stream = match client.remote_read(std::slice::from_ref(&query)).await {
        Ok(s) => s,
        Err(
            e @ (DatasourceError::Unauthorized(_)
            | DatasourceError::Unreachable(_)
            | DatasourceError::Redirected(_)),
        ) => return Err(e),
        Err(e) => return Ok(Err(e.to_string())),
    };
    loop {
        match stream.next().await {
            Ok(Some(_)) => {}
            Ok(None) => return Ok(Ok(())),
            Err(e) => return Ok(Err(e.to_string())),
        }
    }
}

/// Chooses the protocol for `choice`: probes remote read, then the export API, unless
/// the setting forces one; reads the server settings that shape the step grid of the
/// protocol chosen.
pub async fn choose(
    client: &Client,
    choice: ProtocolChoice,
    now_ms: i64,
) -> Result<Protocol, DatasourceError> {
    if choice == ProtocolChoice::QueryRange {
        return Ok(Protocol::QueryRange);
    }
    if choice != ProtocolChoice::VmExport {
        match probe(client, now_ms).await? {
            Ok(()) => return Ok(Protocol::RemoteRead(lookback(client).await)),
            Err(why) if choice == ProtocolChoice::RemoteRead => {
                return Err(DatasourceError::Query(format!(
                    "the datasource is set to remote read, but the server refused it: {why}"
                )))
            }
            Err(why) => tracing::debug!(reason = %why, "remote read not available"),
        }
    }
    match vm_export::probe(client, now_ms).await? {
        Ok(()) => Ok(Protocol::VmExport(vm_export::rollup_settings(client).await)),
        Err(why) if choice == ProtocolChoice::VmExport => Err(DatasourceError::Query(format!(
            "the datasource is set to the VictoriaMetrics export API, but the server refused it: {why}"
        ))),
        Err(why) => {
            tracing::debug!(reason = %why, "export API not available; using query_range");
            Ok(Protocol::QueryRange)
        }
    }
}

/// The server's `--query.lookback-delta` and whether it still counts a sample exactly
/// that old (Prometheus 2.x yes, 3.x no). Servers without these status pages (Mimir,
/// Cortex) get Prometheus's defaults.
async fn lookback(client: &Client) -> Lookback {
    let mut out = Lookback::default();
    if let Ok(flags) = client.status("flags").await {
        if let Some(ms) = flags["query.lookback-delta"]
            .as_str()
            .and_then(|d| humantime::parse_duration(d).ok())
            .map(|d| d.as_millis() as i64)
            .filter(|ms| *ms > 0)
        {
            out.ms = ms;
        }
    }
    if let Ok(info) = client.status("buildinfo").await {
        let major = info["version"]
            .as_str()
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.parse::<u32>().ok());
        out.inclusive = major.is_none_or(|m| m < 3);
    }
    out
}

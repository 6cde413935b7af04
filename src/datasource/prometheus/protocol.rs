//! How usage samples are read from one datasource, chosen once per source: streamed
//! remote read when the server answers it (Prometheus ≥ 2.13, Mimir, Cortex), else
//! VictoriaMetrics's export API when it answers that, else range selectors over the HTTP
//! query API (`selector[span]` evaluated at successive span ends). The datasource
//! setting `protocol` can force any of them. All three hand the engine the same raw
//! samples, as the TSDB stores them.

use super::client::Client;
use super::remote_read::{MatchType, Matcher, ReadQuery};
use super::vm_export;
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
    /// Always the HTTP query API (range selectors; the spelling `queryRange` is kept
    /// so saved settings stay valid).
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
    RemoteRead,
    VmExport,
    /// Range selectors in instant queries (servers with neither remote read nor export).
    RangeSelector,
}

impl Protocol {
    /// As run records, metrics and the datasource test name it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::RemoteRead => "remote-read",
            Protocol::VmExport => "vm-export",
            Protocol::RangeSelector => "range-selector",
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
/// the setting forces one.
pub async fn choose(
    client: &Client,
    choice: ProtocolChoice,
    now_ms: i64,
) -> Result<Protocol, DatasourceError> {
    if choice == ProtocolChoice::QueryRange {
        return Ok(Protocol::RangeSelector);
    }
    if choice != ProtocolChoice::VmExport {
        match probe(client, now_ms).await? {
            Ok(()) => return Ok(Protocol::RemoteRead),
            Err(why) if choice == ProtocolChoice::RemoteRead => {
                return Err(DatasourceError::Query(format!(
                    "the datasource is set to remote read, but the server refused it: {why}"
                )))
            }
            Err(why) => tracing::debug!(reason = %why, "remote read not available"),
        }
    }
    match vm_export::probe(client, now_ms).await? {
        Ok(()) => Ok(Protocol::VmExport),
        Err(why) if choice == ProtocolChoice::VmExport => Err(DatasourceError::Query(format!(
            "the datasource is set to the VictoriaMetrics export API, but the server refused it: {why}"
        ))),
        Err(why) => {
            tracing::debug!(reason = %why, "export API not available; using range selectors");
            Ok(Protocol::RangeSelector)
        }
    }
}

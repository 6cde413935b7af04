//! VictoriaMetrics's export API (`POST api/v1/export`, JSON lines): raw samples of every
//! series matching one or more selectors, one series per line, gzip-compressed on the
//! wire. kerf reads the answer line by line as it arrives ([`ExportStream`] holds one
//! line and the compressed piece being inflated) and hands on the raw samples as
//! stored. VictoriaMetrics serves no remote read, so this is how kerf reads its raw
//! samples without JSON rendering of every one by the query API. The native export format is not used: it is the server's internal block
//! encoding, which may change between releases.

mod lines;

use std::io::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use flate2::write::GzDecoder;

use crate::datasource::prometheus::client::{redact, send, Client, Counters};
use crate::datasource::raw::RawSeries;
use crate::datasource::DatasourceError;
pub use lines::LineError;

/// The content type of an export answer (a probe answered with anything else is "no").
pub const EXPORT_CONTENT_TYPE: &str = "application/stream+json";

/// A line longer than this is refused (7 days of 1 s scrapes are ~20 MB; a longer line
/// is a broken or hostile server, not a reason to allocate).
pub const MAX_LINE_BYTES: usize = 256 << 20;

/// What a stream has read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportCounts {
    /// Bytes on the wire (compressed).
    pub bytes: u64,
    pub samples: u64,
    pub series: u64,
}

fn seconds(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

impl Client {
    /// Streams the raw samples of every series matching any of `selectors` in
    /// `[start_ms, end_ms]` (one request; the stream holds a concurrency permit until
    /// dropped). Transient failures before the answer starts are retried.
    pub async fn vm_export(
        &self,
        selectors: &[String],
        start_ms: i64,
        end_ms: i64,
    ) -> Result<ExportStream, DatasourceError> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| DatasourceError::Query("client closed".into()))?;
        let mut form: Vec<(&str, String)> =
            selectors.iter().map(|s| ("match[]", s.clone())).collect();
        form.push(("start", seconds(start_ms)));
        form.push(("end", seconds(end_ms)));
        let body = serde_urlencoded::to_string(&form)
            .map_err(|e| DatasourceError::Query(format!("cannot encode the export: {e}")))?;
        let url = self.url("api/v1/export");
        let resp = self
            .with_retries(|| async {
                let req = self
                    .authorized(self.http.post(&url))
                    .header(
                        reqwest::header::CONTENT_TYPE,
                        "application/x-www-form-urlencoded",
                    )
                    .header(reqwest::header::ACCEPT_ENCODING, "gzip")
                    .body(body.clone());
                let resp = send(req).await?;
                let status = resp.status().as_u16();
                if status >= 300 {
                    let transient = status == 429 || status >= 500;
                    let text = self.shown(&resp.text().await.unwrap_or_default());
                    let err =
                        DatasourceError::Query(crate::datasource::prometheus::status::status_text(
                            "export: ", status, &text,
                        ));
                    return Err((err, transient));
                }
                Ok(resp)
            })
            .await?;
        let header = |name| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase()
        };
        let gzip = header(reqwest::header::CONTENT_ENCODING) == "gzip";
        let content_type = header(reqwest::header::CONTENT_TYPE);
        Ok(ExportStream {
            resp,
            counters: self.counters.clone(),
            _permit: permit,
            inflate: gzip.then(|| GzDecoder::new(Vec::new())),
            plain: Vec::new(),
            scanned: 0,
            ended: false,
            content_type,
            counts: ExportCounts::default(),
        })
    }
}

/// An export answer being read, series by series.
pub struct ExportStream {
    resp: reqwest::Response,
    counters: Arc<Counters>,
    _permit: tokio::sync::OwnedSemaphorePermit,
    /// Inflates a gzip answer; its buffer holds the text not yet cut into lines.
    inflate: Option<GzDecoder<Vec<u8>>>,
    /// The text not yet cut into lines of an uncompressed answer.
    plain: Vec<u8>,
    /// Bytes of the buffer already searched for a line end.
    scanned: usize,
    ended: bool,
    /// The answer's content type (lower case), for the probe.
    pub content_type: String,
    pub counts: ExportCounts,
}

fn decode_err(e: impl std::fmt::Display) -> DatasourceError {
    DatasourceError::Decode(format!("export: {e}"))
}

impl ExportStream {
    fn text(&mut self) -> &mut Vec<u8> {
        match &mut self.inflate {
            Some(d) => d.get_mut(),
            None => &mut self.plain,
        }
    }

    /// The next series, or `None` at the end of the answer.
    pub async fn next(&mut self) -> Result<Option<RawSeries>, DatasourceError> {
        loop {
            let scanned = self.scanned;
            let text = self.text();
            if let Some(at) = text[scanned..].iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = text.drain(..=scanned + at).collect();
                self.scanned = 0;
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return self.series(&line[..line.len() - 1]).map(Some);
            }
            let held = text.len();
            self.scanned = held;
            if held > MAX_LINE_BYTES {
                return Err(decode_err(format!(
                    "a line is over the {MAX_LINE_BYTES}-byte limit"
                )));
            }
            if self.ended {
                let rest = std::mem::take(self.text());
                self.scanned = 0;
                if rest.iter().all(u8::is_ascii_whitespace) {
                    return Ok(None);
                }
                return self.series(&rest).map(Some);
            }
            self.fill().await?;
        }
    }

    /// Reads the next piece of the answer into the text buffer.
    async fn fill(&mut self) -> Result<(), DatasourceError> {
        let piece = self
            .resp
            .chunk()
            .await
            .map_err(|e| DatasourceError::Unreachable(redact(&e)))?;
        match piece {
            Some(bytes) => {
                self.counts.bytes += bytes.len() as u64;
                self.counters
                    .bytes
                    .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                match &mut self.inflate {
                    Some(d) => d.write_all(&bytes).map_err(decode_err)?,
                    None => self.plain.extend_from_slice(&bytes),
                }
            }
            None => {
                if let Some(d) = &mut self.inflate {
                    d.try_finish().map_err(decode_err)?;
                }
                self.ended = true;
            }
        }
        Ok(())
    }

    fn series(&mut self, line: &[u8]) -> Result<RawSeries, DatasourceError> {
        let series = lines::parse(line).map_err(decode_err)?;
        self.counts.series += 1;
        self.counts.samples += series.samples.len() as u64;
        Ok(series)
    }
}

/// Whether the server answers the export API: one export of a metric nobody has over
/// the last minute. Refused credentials and an unreachable server are errors; any
/// other answer is a plain "no".
pub async fn probe(client: &Client, now_ms: i64) -> Result<Result<(), String>, DatasourceError> {
    let selector = vec![r#"{__name__="kerf_export_probe"}"#.to_string()];
    let mut stream = match client.vm_export(&selector, now_ms - 60_000, now_ms).await {
        Ok(s) => s,
        Err(
            e @ (DatasourceError::Unauthorized(_)
            | DatasourceError::Unreachable(_)
            | DatasourceError::Redirected(_)),
        ) => return Err(e),
        Err(e) => return Ok(Err(e.to_string())),
    };
    if !stream.content_type.starts_with(EXPORT_CONTENT_TYPE) {
        return Ok(Err(format!(
            "the export API answered {:?}",
            stream.content_type
        )));
    }
    loop {
        match stream.next().await {
            Ok(Some(_)) => {}
            Ok(None) => return Ok(Ok(())),
            Err(e) => return Ok(Err(e.to_string())),
        }
    }
}

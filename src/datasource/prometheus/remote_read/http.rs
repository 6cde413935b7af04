//! Remote read over the client: one POST per batch of selectors, retried like every
//! request until the answer starts, then streamed piece by piece through the frame
//! reader while the request's concurrency permit is held.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{encode_request, Body, ReadQuery, ReadStream, STREAMED_CONTENT_TYPE};
use crate::datasource::prometheus::client::{redact, send, Client, Counters};
use crate::datasource::DatasourceError;

impl Client {
    /// Streams the answers to `queries` (one request; see [`super`]). The stream
    /// holds a concurrency permit until it is dropped. Transient failures before the
    /// answer starts are retried; a server that does not stream is a `Query` error.
    pub async fn remote_read(
        &self,
        queries: &[ReadQuery],
    ) -> Result<ReadStream<HttpBody>, DatasourceError> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| DatasourceError::Query("client closed".into()))?;
        let url = self.url("api/v1/read");
        let body = encode_request(queries)?;
        let resp = self
            .with_retries(|| async {
                let req = self
                    .authorized(self.http.post(&url))
                    .header(reqwest::header::CONTENT_TYPE, "application/x-protobuf")
                    .header(reqwest::header::CONTENT_ENCODING, "snappy")
                    .header("X-Prometheus-Remote-Read-Version", "0.1.0")
                    .body(body.clone());
                let resp = send(req).await?;
                let status = resp.status().as_u16();
                if status >= 300 {
                    let transient = status == 429 || status >= 500;
                    let text = self.shown(&resp.text().await.unwrap_or_default());
                    let err =
                        DatasourceError::Query(crate::datasource::prometheus::status::status_text(
                            "remote read: ",
                            status,
                            &text,
                        ));
                    return Err((err, transient));
                }
                let kind = resp
                    .headers()
                    .get(reqwest::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                if !kind.starts_with(STREAMED_CONTENT_TYPE) {
                    let err = DatasourceError::Query(format!(
                        "remote read answered {kind:?}, not streamed chunks"
                    ));
                    return Err((err, false));
                }
                Ok(resp)
            })
            .await?;
        let body = HttpBody {
            resp,
            counters: self.counters.clone(),
            _permit: permit,
        };
        Ok(ReadStream::new(body, queries))
    }
}

/// A remote-read answer body being streamed; holds the request's concurrency permit.
pub struct HttpBody {
    resp: reqwest::Response,
    counters: Arc<Counters>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Body for HttpBody {
    async fn piece(&mut self) -> Result<Option<bytes::Bytes>, DatasourceError> {
        let piece = self
            .resp
            .chunk()
            .await
            .map_err(|e| DatasourceError::Unreachable(redact(&e)))?;
        if let Some(p) = &piece {
            self.counters
                .bytes
                .fetch_add(p.len() as u64, Ordering::Relaxed);
        }
        Ok(piece)
    }
}

//! A loopback HTTP proxy in front of a real server that gets some answers wrong, so
//! kerf's handling of a faulty datasource is tested against real data: a range-selector
//! answer naming pod `bad-shape…` comes back as a vector; in one naming `bad-order…`
//! two samples of its usage series swap places; in one naming `bad-dup…` a sample
//! repeats the previous timestamp with another value; a remote-read answer naming
//! `bad-frame…` ends in the middle of that query's first frame (a truncated frame).
//! Everything else passes through.

#![allow(dead_code)]

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use prost::Message as _;

use kerf::datasource::prometheus::remote_read::proto::{ChunkedReadResponse, ReadRequest};

pub struct FaultProxy {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    pub async fn start(upstream: &str) -> FaultProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let app = axum::Router::new()
            .fallback(relay)
            .with_state(upstream.trim_end_matches('/').to_string());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FaultProxy { url, task }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(
    State(upstream): State<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let target = format!(
        "{upstream}{}",
        uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let mut req = super::client().request(method, target);
    for name in [
        "content-type",
        "content-encoding",
        "x-prometheus-remote-read-version",
    ] {
        if let Some(v) = headers.get(name) {
            req = req.header(name, v.as_bytes());
        }
    }
    let resp = req.body(body.clone()).send().await.expect("upstream");
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .map(|v| v.as_bytes().to_vec())
        .unwrap_or_default();
    let mut answer = resp.bytes().await.expect("upstream body").to_vec();
    if path.ends_with("/api/v1/query") {
        let form = String::from_utf8_lossy(&body).into_owned();
        let query: String = serde_urlencoded::from_str::<Vec<(String, String)>>(&form)
            .unwrap_or_default()
            .into_iter()
            .find(|(k, _)| k == "query")
            .map(|(_, v)| v)
            .unwrap_or_default();
        answer = rewrite(&query, answer);
    }
    if path.ends_with("/api/v1/read") {
        if let Some(query) = naming(&body, "bad-frame") {
            answer = truncated(answer, query);
        }
    }
    Response::builder()
        .status(StatusCode::from_u16(status).expect("status"))
        .header("content-type", content_type)
        .body(Body::from(answer))
        .expect("response")
}

/// The query of a remote-read request whose matchers name `what`.
fn naming(body: &[u8], what: &str) -> Option<i64> {
    let raw = snap::raw::Decoder::new().decompress_vec(body).ok()?;
    let request = ReadRequest::decode(raw.as_slice()).ok()?;
    let at = request
        .queries
        .iter()
        .position(|q| q.matchers.iter().any(|m| m.value.contains(what)))?;
    Some(at as i64)
}

/// The answer cut in the middle of the first frame of `query` (frames: uvarint
/// length, CRC-32C, message), so that frame is truncated and nothing follows it.
fn truncated(answer: Vec<u8>, query: i64) -> Vec<u8> {
    let mut at = 0;
    while at < answer.len() {
        let mut rest = &answer[at..];
        let len = prost::encoding::decode_varint(&mut rest).expect("frame length") as usize;
        let head = answer.len() - at - rest.len() + 4;
        let message = &answer[at + head..at + head + len];
        let frame = ChunkedReadResponse::decode(message).expect("frame");
        if frame.query_index == query {
            return answer[..at + head + len / 2].to_vec();
        }
        at += head + len;
    }
    answer
}

/// The faults of a range-selector answer, by the pods its query names.
fn rewrite(query: &str, answer: Vec<u8>) -> Vec<u8> {
    if !query.contains("container_") {
        return answer;
    }
    let Ok(mut body) = serde_json::from_slice::<serde_json::Value>(&answer) else {
        return answer;
    };
    if query.contains("bad-shape") {
        body["data"]["resultType"] = "vector".into();
    }
    if let Some(items) = body["data"]["result"].as_array_mut() {
        for item in items {
            let pod = item["metric"]["pod"].as_str().unwrap_or("").to_string();
            let Some(values) = item["values"].as_array_mut() else {
                continue;
            };
            if values.len() < 4 {
                continue;
            }
            if pod.starts_with("bad-order") {
                values.swap(2, 3);
            }
            if pod.starts_with("bad-dup") {
                values[3][0] = values[2][0].clone();
            }
        }
    }
    serde_json::to_vec(&body).expect("json")
}

//! Sends an OpenMetrics text file with sample timestamps (`name{labels} value seconds`
//! lines, as `promtool tsdb create-blocks-from openmetrics` reads them) to a kerf hub by
//! Prometheus remote write, as cluster CLUSTER with its agent token: the series grouped
//! and time-ordered, a few thousand samples per write, through the agent's own hub
//! client. The browser tests fill a cluster's embedded usage store with history this way
//! (tests/e2e/embedded.test.js).
//!
//! `cargo run --example remote_write_openmetrics -- HUB_URL CLUSTER FILE` with the token
//! in `KERF_CLUSTER_TOKEN`.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{bail, Context};
use bytes::Bytes;
use kerf::agent::http_hub::HttpHub;
use kerf::agent::hub::Hub;
use kerf::wire::remote_write::{encode, series, WriteRequest};

/// Samples per write: well under the hub's body limit.
const SAMPLES_PER_WRITE: usize = 20_000;

type Series = BTreeMap<BTreeMap<String, String>, Vec<(i64, f64)>>;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, cluster, file] = args.as_slice() else {
        bail!("usage: remote_write_openmetrics HUB_URL CLUSTER FILE (token in KERF_CLUSTER_TOKEN)");
    };
    let token = std::env::var("KERF_CLUSTER_TOKEN").context("KERF_CLUSTER_TOKEN is not set")?;
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
    let all = parse(&text)?;
    let hub = HttpHub::new(url, cluster, token, None, Duration::from_secs(30))
        .map_err(anyhow::Error::msg)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut writes, mut samples) = (0, 0);
    let mut request = WriteRequest::default();
    let mut send = |request: &mut WriteRequest| -> anyhow::Result<()> {
        let body = encode(request).context("encoding a write")?;
        runtime
            .block_on(hub.write(Bytes::from(body)))
            .map_err(|e| anyhow::anyhow!("the hub refused a write: {e}"))?;
        writes += 1;
        samples += request.sample_count();
        *request = WriteRequest::default();
        Ok(())
    };
    for (labels, mut points) in all {
        points.sort_by_key(|p| p.0);
        for part in points.chunks(SAMPLES_PER_WRITE) {
            request.timeseries.push(series(&labels, part));
            if request.sample_count() >= SAMPLES_PER_WRITE {
                send(&mut request)?;
            }
        }
    }
    if !request.timeseries.is_empty() {
        send(&mut request)?;
    }
    println!("sent {samples} samples in {writes} writes to cluster {cluster}");
    Ok(())
}

/// The samples of each series in `text` (comments and `# EOF` skipped).
fn parse(text: &str) -> anyhow::Result<Series> {
    let mut out = Series::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (labels, rest) = labels_of(line).with_context(|| format!("line {}", n + 1))?;
        let mut fields = rest.split_whitespace();
        let (Some(value), Some(seconds)) = (fields.next(), fields.next()) else {
            bail!("line {}: a sample needs a value and a timestamp", n + 1);
        };
        let value: f64 = value.parse().with_context(|| format!("line {}", n + 1))?;
        let seconds: f64 = seconds.parse().with_context(|| format!("line {}", n + 1))?;
        out.entry(labels)
            .or_default()
            .push(((seconds * 1000.0).round() as i64, value));
    }
    Ok(out)
}

/// `name{a="x",b="y"}` at the start of `line`: the label set with `__name__`, and the
/// rest of the line.
fn labels_of(line: &str) -> anyhow::Result<(BTreeMap<String, String>, &str)> {
    let name_end = line
        .find(['{', ' '])
        .context("a sample line has a name and a value")?;
    let mut labels = BTreeMap::from([("__name__".to_string(), line[..name_end].to_string())]);
    let mut rest = &line[name_end..];
    if let Some(inner) = rest.strip_prefix('{') {
        let mut chars = inner.char_indices();
        let (mut name, mut value, mut in_value, mut escaped) =
            (String::new(), String::new(), false, false);
        loop {
            let Some((i, c)) = chars.next() else {
                bail!("unterminated label set");
            };
            match (in_value, c) {
                (true, _) if escaped => {
                    value.push(if c == 'n' { '\n' } else { c });
                    escaped = false;
                }
                (true, '\\') => escaped = true,
                (true, '"') => {
                    labels.insert(std::mem::take(&mut name), std::mem::take(&mut value));
                    in_value = false;
                }
                (true, _) => value.push(c),
                (false, '}') => {
                    rest = &inner[i + 1..];
                    break;
                }
                (false, '"') => in_value = true,
                (false, '=' | ',' | ' ') => {}
                (false, _) => name.push(c),
            }
        }
    }
    Ok((labels, rest))
}

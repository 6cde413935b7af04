//! `kerf backtest`: asks a hub (`POST /v1/policies/backtest`) how a preset or a policy
//! would have done on the recorded usage of the selected workloads, and prints the
//! figures in and out of sample, in total and per workload. Exit 0 with results, 2 on
//! bad input (the hub's 400 included, with its message), 1 when the hub cannot be
//! asked.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde_json::{json, Value};

use super::Exit;

/// Flags of `kerf backtest`.
#[derive(Debug, Clone, Args)]
pub struct BacktestArgs {
    /// The hub's address.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    pub hub: String,
    /// An API token (viewer or above), read from this file (first line).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// A preset: cost-saving, balanced, conservative, engine-default.
    #[arg(long, value_name = "NAME", conflicts_with = "policy")]
    pub preset: Option<String>,
    /// A RightsizingPolicy document (its selector and analysis) or an engine analysis
    /// policy, as JSON. Without it or --preset: the hub's default analysis.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Only clusters matching this (`*` globs; repeat for more).
    #[arg(long, value_name = "GLOB")]
    pub cluster: Vec<String>,
    /// Only namespaces matching this (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub namespace: Vec<String>,
    /// Only workloads named like this (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub name: Vec<String>,
    /// Only these kinds (Deployment, StatefulSet, …; repeatable).
    #[arg(long, value_name = "KIND")]
    pub kind: Vec<String>,
    /// Only workloads with this label, `key=value` (repeatable; all must match).
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
    /// Fraction of the window the out-of-sample recommendation is made on.
    #[arg(long, default_value_t = 0.5)]
    pub split: f64,
    /// At most this many workloads.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Output: table (default) or json (the hub's answer).
    #[arg(long, default_value = "table")]
    pub format: String,
}

fn bad(flag: &str, message: impl std::fmt::Display) -> Exit {
    Exit::usage(format!("--{flag}: {message}"))
}

impl BacktestArgs {
    /// The request body.
    pub fn body(&self) -> Result<Value, Exit> {
        let mut body = json!({ "split": self.split });
        if let Some(p) = &self.preset {
            body["preset"] = json!(p);
        }
        let mut selector = json!({});
        if let Some(path) = &self.policy {
            let text = std::fs::read(path)
                .map_err(|e| bad("policy", format!("cannot read {}: {e}", path.display())))?;
            let doc: Value = serde_json::from_slice(&text)
                .map_err(|e| bad("policy", format!("{} is not JSON: {e}", path.display())))?;
            let is_document = ["name", "selector", "analysis", "mode"]
                .iter()
                .any(|k| doc.get(k).is_some());
            if is_document {
                body["policy"] = doc;
            } else {
                body["analysis"] = doc;
            }
        }
        for (key, values) in [
            ("clusters", &self.cluster),
            ("namespaces", &self.namespace),
            ("names", &self.name),
            ("kinds", &self.kind),
        ] {
            if !values.is_empty() {
                selector[key] = json!(values);
            }
        }
        if !self.label.is_empty() {
            let mut labels = BTreeMap::new();
            for l in &self.label {
                let (k, v) = l
                    .split_once('=')
                    .ok_or_else(|| bad("label", format!("{l:?} is not key=value")))?;
                labels.insert(k.trim().to_string(), v.trim().to_string());
            }
            selector["labels"] = json!(labels);
        }
        if selector.as_object().is_some_and(|o| !o.is_empty()) {
            body["selector"] = selector;
        }
        if let Some(n) = self.limit {
            body["limit"] = json!(n);
        }
        if !["table", "json"].contains(&self.format.as_str()) {
            return Err(bad("format", "must be table or json"));
        }
        Ok(body)
    }
}

/// `kerf backtest`.
pub fn backtest(args: &BacktestArgs) -> Result<(), Exit> {
    let body = args.body()?;
    let url = format!("{}/v1/policies/backtest", args.hub.trim_end_matches('/'));
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(bad("hub", format!("{:?} is not an http(s) URL", args.hub)));
    }
    let token = match &args.token_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| bad("token-file", format!("cannot read {}: {e}", path.display())))?;
            Some(text.lines().next().unwrap_or("").trim().to_string())
        }
        None => None,
    };
    let answer = super::block_on(async move {
        crate::tls::install_crypto_provider();
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(600))
            .build()
            .map_err(|e| Exit::runtime(format!("HTTP client: {e}")))?;
        let mut req = client.post(&url).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| Exit::runtime(format!("cannot reach the hub at {url}: {e}")))?;
        let status = resp.status();
        let value: Value = resp
            .json()
            .await
            .map_err(|e| Exit::runtime(format!("the hub's answer is not JSON: {e}")))?;
        if status.is_success() {
            return Ok(value);
        }
        let message = value["error"]["message"].as_str().unwrap_or("no message");
        let line = format!(
            "the hub refused the backtest (HTTP {}): {message}",
            status.as_u16()
        );
        Err(if status.as_u16() == 400 {
            Exit::usage(line)
        } else {
            Exit::runtime(line)
        })
    })??;
    let text = if args.format == "json" {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&answer).unwrap_or_default()
        )
    } else {
        table(&answer)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Exit::runtime(format!("cannot write output: {e}")))
}

fn pct(v: &Value) -> String {
    v.as_f64()
        .map_or("—".into(), |x| format!("{:.2} %", x * 100.0))
}

fn money(v: &Value) -> String {
    v.as_f64().map_or("—".into(), |x| format!("{x:+.2}"))
}

/// The hub's report as text.
pub fn table(r: &Value) -> String {
    let mut out = String::new();
    let span = &r["span"];
    let _ = writeln!(
        out,
        "Backtest of {} on {} workloads: recommended on {} – {} (in sample) or – {} (out of sample).\n",
        r["policyVersion"].as_str().unwrap_or("?"),
        r["workloads"].as_array().map_or(0, Vec::len),
        span["start"].as_str().unwrap_or("?"),
        span["end"].as_str().unwrap_or("?"),
        span["split"].as_str().unwrap_or("?"),
    );
    let (i, o) = (&r["inSample"], &r["outOfSample"]);
    let currency = r["currency"].as_str().unwrap_or("");
    let lines = [
        (
            format!("cost change per month ({currency})"),
            money(&i["costChange"]),
            money(&o["costChange"]),
        ),
        (
            "CPU above the request".into(),
            pct(&i["cpuAboveRequestShare"]),
            pct(&o["cpuAboveRequestShare"]),
        ),
        (
            "CPU throttled at the limit".into(),
            pct(&i["cpuThrottledShare"]),
            pct(&o["cpuThrottledShare"]),
        ),
        (
            "memory above the request".into(),
            pct(&i["memoryAboveRequestShare"]),
            pct(&o["memoryAboveRequestShare"]),
        ),
        (
            "would-be OOM kills".into(),
            i["wouldBeOomKills"].to_string(),
            o["wouldBeOomKills"].to_string(),
        ),
    ];
    let _ = writeln!(
        out,
        "{:<32} {:>14} {:>14}",
        "", "in sample", "out of sample"
    );
    for (name, a, b) in lines {
        let _ = writeln!(out, "{name:<32} {a:>14} {b:>14}");
    }
    let _ = writeln!(
        out,
        "\n{} workloads change, {} grow{}.\n",
        r["workloadsChanged"],
        r["workloadsGrown"],
        if r["truncated"] == true {
            " (more matched: raise --limit)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "{:<40} {:>10} {:>11} {:>11} {:>6}",
        "WORKLOAD", "COST/MO", "CPU>REQ OUT", "THROTTLED", "OOMS"
    );
    for w in r["workloads"].as_array().into_iter().flatten() {
        let name = format!(
            "{}/{}/{}",
            w["cluster"].as_str().unwrap_or(""),
            w["namespace"].as_str().unwrap_or(""),
            w["name"].as_str().unwrap_or("")
        );
        let o = &w["outOfSample"];
        let _ = writeln!(
            out,
            "{name:<40} {:>10} {:>11} {:>11} {:>6}{}",
            money(&w["inSample"]["costChange"]),
            pct(&o["cpuAboveRequestShare"]),
            pct(&o["cpuThrottledShare"]),
            o["wouldBeOomKills"],
            w["note"]
                .as_str()
                .map(|n| format!("  {n}"))
                .unwrap_or_default()
        );
    }
    for e in r["errors"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "cluster {}: {}",
            e["cluster"].as_str().unwrap_or("?"),
            e["message"].as_str().unwrap_or("?")
        );
    }
    out
}

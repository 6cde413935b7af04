//! `kerf scan`'s output formats: a table (one line per container, coloured by severity
//! on a terminal), JSON and YAML (the same document), and CSV (one row per container,
//! CPU in millicores, memory in MiB).

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::rows::{Row, Severity};
use super::{Found, Scan};
use crate::export::plan::{cpu_quantity, memory_quantity, SettingPlan};
use crate::export::render::csv_text;
use crate::timestamp::format_ms;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
    Yaml,
}

impl Format {
    pub fn parse(text: &str) -> Option<Format> {
        match text {
            "table" => Some(Format::Table),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "yaml" => Some(Format::Yaml),
            _ => None,
        }
    }
}

pub fn render(scan: &Scan, found: &Found) -> String {
    match scan.format {
        Format::Table => table(scan, found),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&document(scan, found)).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Yaml => {
            let mut out = String::new();
            yaml(&mut out, &document(scan, found), 0);
            out
        }
        Format::Csv => csv(found),
    }
}

/// Savings, extra spend and their net over every workload; and how many grow.
fn totals(rows: &[Row]) -> (f64, f64, usize) {
    let (mut save, mut spend, mut grow) = (0.0, 0.0, 0);
    for r in rows {
        match r.monthly_cost_delta {
            Some(d) if d < 0.0 => save -= d,
            Some(d) => spend += d,
            None => {}
        }
        grow += usize::from(r.containers.iter().any(|c| c.severity == Severity::Risk));
    }
    (save, spend, grow)
}

/// The JSON and YAML document.
pub fn document(scan: &Scan, found: &Found) -> Value {
    let (save, spend, grow) = totals(&found.rows);
    json!({
        "prometheus": scan.url,
        "policy": scan.policy_name,
        "policyVersion": crate::analysis::policy_version(&scan.policy).unwrap_or_default(),
        "window": {
            "start": format_ms(scan.window.start_ms),
            "end": format_ms(scan.window.end_ms),
            "stepSeconds": scan.window.step_seconds,
        },
        "excludedNamespaces": found.excluded.iter()
            .map(|(ns, n)| json!({ "namespace": ns, "workloads": n })).collect::<Vec<_>>(),
        "totals": {
            "workloads": found.rows.len(),
            "containers": found.rows.iter().map(|r| r.containers.len()).sum::<usize>(),
            "savings": save, "extraSpend": spend, "net": spend - save,
            "workloadsGrowing": grow,
        },
        "collect": {
            "queries": found.stats.queries, "series": found.stats.series,
            "samples": found.stats.samples, "bytes": found.stats.bytes,
            "protocol": found.stats.protocol, "seconds": found.seconds,
        },
        "workloads": found.rows,
    })
}

/// A YAML rendering of `v` (strings double-quoted, JSON's escapes being valid YAML).
fn yaml(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, x) in map {
                match x {
                    Value::Object(m) if !m.is_empty() => {
                        let _ = writeln!(out, "{pad}{k}:");
                        yaml(out, x, indent + 2);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let _ = writeln!(out, "{pad}{k}:");
                        yaml(out, x, indent);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{k}: {}", scalar(x));
                    }
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for x in items {
                let mut inner = String::new();
                yaml(&mut inner, x, indent + 2);
                let trimmed = inner.trim_start_matches(' ');
                match x {
                    Value::Object(m) if !m.is_empty() => {
                        let _ = write!(out, "{pad}- {trimmed}");
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}- {}", scalar(x));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", scalar(other));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

fn num(v: Option<f64>) -> String {
    v.map(|x| format!("{}", (x * 1000.0).round() / 1000.0))
        .unwrap_or_default()
}

fn mib(v: Option<f64>) -> Option<f64> {
    v.map(|b| b / 1_048_576.0)
}

fn csv(found: &Found) -> String {
    let mut out = String::from(
        "namespace,kind,name,container,cpu_request_m,cpu_request_recommended_m,cpu_limit_m,\
         cpu_limit_recommended_m,memory_request_mib,memory_request_recommended_mib,\
         memory_limit_mib,memory_limit_recommended_mib,confidence,data_quality,\
         workload_monthly_cost_delta,hpa_cpu_target,hpa_coordinated_cpu_target,reason\n",
    );
    for r in &found.rows {
        let hpa = r.hpa.as_ref();
        for (i, c) in r.containers.iter().enumerate() {
            let (cpu, mem) = (&c.plan.cpu, &c.plan.memory);
            let cells = [
                csv_text(&r.namespace),
                csv_text(&r.kind),
                csv_text(&r.name),
                csv_text(&c.plan.name),
                num(cpu.request.current),
                num(cpu.request.recommended),
                num(cpu.limit.current),
                num(cpu.limit.recommended),
                num(mib(mem.request.current)),
                num(mib(mem.request.recommended)),
                num(mib(mem.limit.current)),
                num(mib(mem.limit.recommended)),
                c.confidence.map(|x| x.to_string()).unwrap_or_default(),
                c.data_quality.clone(),
                // The workload's money, on its first row only: the column sums to the net.
                num(r.monthly_cost_delta.filter(|_| i == 0)),
                num(hpa.and_then(|h| h.cpu_target_utilization)),
                num(hpa.and_then(|h| h.coordinated_cpu_target)),
                csv_text(&c.reason),
            ];
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        if let Some(e) = &r.error {
            let _ = writeln!(
                out,
                "{},{},{},,,,,,,,,,,unavailable,,,,{}",
                csv_text(&r.namespace),
                csv_text(&r.kind),
                csv_text(&r.name),
                csv_text(&format!("not analyzed: {e}"))
            );
        }
    }
    out
}

/// `current → recommended` of one setting as Kubernetes quantities.
fn cell(cpu: bool, p: &SettingPlan) -> String {
    let q = |v: f64, recommended: bool| {
        if cpu {
            cpu_quantity(v)
        } else {
            memory_quantity(v, recommended)
        }
    };
    let now = match (p.current, p.known) {
        (Some(v), _) => q(v, false),
        (None, true) => "-".into(),
        (None, false) => "?".into(),
    };
    match p.recommended {
        Some(v) => format!("{now} → {}", q(v, true)),
        None => now,
    }
}

fn money(v: f64) -> String {
    let sign = if v < 0.0 { "-" } else { "+" };
    format!("{sign}{:.2}", v.abs())
}

fn table(scan: &Scan, found: &Found) -> String {
    let head = [
        "NAMESPACE",
        "WORKLOAD",
        "CONTAINER",
        "CPU REQUEST",
        "CPU LIMIT",
        "MEMORY REQUEST",
        "MEMORY LIMIT",
        "CONF",
        "$/MONTH",
        "REASON",
    ];
    let mut lines: Vec<(Vec<String>, Severity)> = Vec::new();
    for r in &found.rows {
        let workload = format!("{}/{}", r.kind, r.name);
        if let Some(e) = &r.error {
            let mut cells = vec![r.namespace.clone(), workload.clone(), "-".into()];
            cells.extend(std::iter::repeat_n(String::new(), 6));
            cells.push(format!("not analyzed: {e}"));
            lines.push((cells, Severity::Attention));
        }
        for (i, c) in r.containers.iter().enumerate() {
            let mut reason = c.reason.clone();
            if let (0, Some(h)) = (i, &r.hpa) {
                match (h.cpu_target_utilization, h.coordinated_cpu_target) {
                    (Some(t), Some(n)) if t != n => {
                        let _ = write!(reason, "; HPA {} CPU target {t}% → {n}%", h.name);
                    }
                    (Some(t), _) => {
                        let _ = write!(reason, "; HPA {} on CPU {t}%", h.name);
                    }
                    _ => {
                        let _ = write!(reason, "; HPA {}", h.name);
                    }
                }
            }
            if c.data_quality == "partial" {
                reason.push_str(" (partial data)");
            }
            let cost = match (i, r.monthly_cost_delta) {
                (0, Some(d)) => money(d),
                _ => String::new(),
            };
            let cells = vec![
                r.namespace.clone(),
                workload.clone(),
                c.plan.name.clone(),
                cell(true, &c.plan.cpu.request),
                cell(true, &c.plan.cpu.limit),
                cell(false, &c.plan.memory.request),
                cell(false, &c.plan.memory.limit),
                c.confidence
                    .map(|x| x.to_string())
                    .unwrap_or_else(|| "-".into()),
                cost,
                reason,
            ];
            lines.push((cells, c.severity));
        }
    }
    let width = |i: usize| {
        lines
            .iter()
            .map(|(c, _)| c[i].chars().count())
            .chain(std::iter::once(head[i].len()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..head.len()).map(width).collect();
    let row = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                let _ = write!(s, "{c:<w$}  ", w = widths[i]);
            }
        }
        s.trim_end().to_string()
    };
    let mut out = String::new();
    let heads: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    let _ = writeln!(out, "{}", row(&heads));
    for (cells, severity) in &lines {
        let text = row(cells);
        let colour = match severity {
            Severity::Risk => Some("31"),
            Severity::Saving => Some("32"),
            Severity::Attention => Some("33"),
            Severity::None => None,
        };
        match colour.filter(|_| scan.color) {
            Some(code) => {
                let _ = writeln!(out, "\x1b[{code}m{text}\x1b[0m");
            }
            None => {
                let _ = writeln!(out, "{text}");
            }
        }
    }
    let (save, spend, grow) = totals(&found.rows);
    let containers: usize = found.rows.iter().map(|r| r.containers.len()).sum();
    let _ = writeln!(
        out,
        "\n{} workloads, {containers} containers ({}, {} ending {} at {} s): saves {:.2}/month, adds {:.2}/month, net {}/month; {grow} grow.",
        found.rows.len(),
        scan.policy_name,
        human(scan.window.end_ms - scan.window.start_ms),
        format_ms(scan.window.end_ms),
        scan.window.step_seconds,
        save,
        spend,
        money(spend - save),
    );
    if !found.excluded.is_empty() {
        let list: Vec<String> = found
            .excluded
            .iter()
            .map(|(ns, n)| format!("{ns} ({n} workloads)"))
            .collect();
        let _ = writeln!(
            out,
            "Left out: {} (--include-system or --namespace to scan them).",
            list.join(", ")
        );
    }
    out
}

fn human(ms: i64) -> String {
    let h = ms / 3_600_000;
    if h % 24 == 0 {
        format!("{}d", h / 24)
    } else {
        format!("{h}h")
    }
}

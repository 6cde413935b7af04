//! The export formats of current recommendations: CSV (one row per container, numbers
//! in millicores and MiB, text cells a spreadsheet would run as a formula neutralized),
//! JSON (Kubernetes quantities) and YAML (server-side apply configurations, one document
//! per workload that changes).

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::plan::{cpu_millis, cpu_quantity, memory_mib, memory_quantity, ContainerPlan};
use super::plan::{ResourcePlan, SettingPlan};
use crate::store::WorkloadRow;

/// The field manager of the apply command kerf prints (not the agent's, `kerf`).
pub const FIELD_MANAGER: &str = "kerf-manual";

/// One exported workload.
pub struct Exported<'a> {
    pub w: &'a WorkloadRow,
    pub recommendation_id: Option<&'a str>,
    /// RFC 3339.
    pub created_at: Option<String>,
    pub containers: Vec<ContainerPlan>,
}

/// Where the pod template sits in each kind kerf rightsizes: (apiVersion, path).
fn template_path(kind: &str) -> Option<(&'static str, &'static [&'static str])> {
    const POD: &[&str] = &["spec", "template", "spec"];
    match kind {
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => Some(("apps/v1", POD)),
        // A Job's template is immutable: there is nothing true to apply.
        "CronJob" => Some((
            "batch/v1",
            &["spec", "jobTemplate", "spec", "template", "spec"],
        )),
        "Rollout" => Some(("argoproj.io/v1alpha1", POD)),
        _ => None,
    }
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
fn q(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn quantity(cpu: bool, p: &SettingPlan) -> Option<String> {
    let v = p.target()?;
    Some(if cpu {
        cpu_quantity(v)
    } else {
        memory_quantity(v, p.recommended.is_some())
    })
}

/// `requests:`/`limits:` lines of one container at `indent`.
fn resources_yaml(out: &mut String, c: &ContainerPlan, indent: &str) {
    for (group, pick) in [
        (
            "requests",
            (|r: &ResourcePlan| r.request) as fn(&ResourcePlan) -> SettingPlan,
        ),
        ("limits", |r: &ResourcePlan| r.limit),
    ] {
        let lines: Vec<String> = [("cpu", true, &c.cpu), ("memory", false, &c.memory)]
            .iter()
            .filter_map(|(name, cpu, r)| {
                let v = quantity(*cpu, &pick(r))?;
                Some(format!("{indent}  {name}: {}\n", q(&v)))
            })
            .collect();
        if !lines.is_empty() {
            let _ = writeln!(out, "{indent}{group}:");
            out.push_str(&lines.concat());
        }
    }
}

/// The server-side apply configuration of one workload: only the containers that
/// change, each with its whole resources block (recommended values, else the ones in
/// force). `None` when nothing changes or the kind is not one kerf knows how to patch.
pub fn apply_yaml(e: &Exported<'_>) -> Option<String> {
    let (api_version, path) = template_path(&e.w.seen.kind)?;
    let changing: Vec<&ContainerPlan> = e.containers.iter().filter(|c| c.changes()).collect();
    if changing.is_empty() {
        return None;
    }
    let s = &e.w.seen;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# kerf recommendation {} for {}/{}/{}/{}",
        e.recommendation_id.unwrap_or("-"),
        s.cluster,
        s.namespace,
        s.kind,
        s.name
    );
    let _ = writeln!(out, "apiVersion: {api_version}\nkind: {}", s.kind);
    let _ = writeln!(
        out,
        "metadata:\n  name: {}\n  namespace: {}",
        q(&s.name),
        q(&s.namespace)
    );
    let mut indent = String::new();
    for key in path {
        let _ = writeln!(out, "{indent}{key}:");
        indent.push_str("  ");
    }
    // Sidecars and init containers live in `initContainers`, app containers in
    // `containers`: each list only when something in it changes.
    for (list, init) in [("initContainers", true), ("containers", false)] {
        let these: Vec<&&ContainerPlan> = changing
            .iter()
            .filter(|c| c.role.in_init_list() == init)
            .collect();
        if these.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{indent}{list}:");
        for c in these {
            let _ = writeln!(out, "{indent}- name: {}", q(&c.name));
            let _ = writeln!(out, "{indent}  resources:");
            resources_yaml(&mut out, c, &format!("{indent}    "));
        }
    }
    Some(out)
}

/// The `kubectl` command that applies `yaml` with server-side apply.
pub fn apply_command(yaml: &str) -> String {
    format!(
        "kubectl apply --server-side --field-manager={FIELD_MANAGER} --force-conflicts -f - <<'EOF'\n{yaml}EOF\n"
    )
}

/// Every apply configuration, as one multi-document YAML stream.
pub fn yaml(items: &[Exported<'_>]) -> String {
    let docs: Vec<String> = items.iter().filter_map(apply_yaml).collect();
    if docs.is_empty() {
        return "# kerf: no recommendation in this export changes anything\n".into();
    }
    docs.join("---\n")
}

/// A setting of the JSON export, as Kubernetes quantities.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuantityPair {
    pub current: Option<String>,
    pub recommended: Option<String>,
}

fn quantities(cpu: bool, p: &SettingPlan) -> QuantityPair {
    let as_quantity = |v: f64, recommended: bool| match cpu {
        true => cpu_quantity(v),
        false => memory_quantity(v, recommended),
    };
    QuantityPair {
        current: p.current.map(|v| as_quantity(v, false)),
        recommended: p.recommended.map(|v| as_quantity(v, true)),
    }
}

/// CPU and memory of one group (requests or limits).
#[derive(Debug, Serialize, ToSchema)]
pub struct QuantityGroup {
    pub cpu: QuantityPair,
    pub memory: QuantityPair,
}

/// One container of the JSON export.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExportedContainer {
    pub name: String,
    /// `sidecar` or `init` for an entry of `spec.initContainers`; absent for an app
    /// container.
    #[serde(skip_serializing_if = "crate::workload::ContainerRole::is_app")]
    pub role: crate::workload::ContainerRole,
    pub requests: QuantityGroup,
    pub limits: QuantityGroup,
}

/// One workload of the JSON export.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportedWorkload {
    pub workload_id: String,
    pub cluster: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub replicas: Option<i64>,
    pub recommendation_id: Option<String>,
    pub created_at: Option<String>,
    pub has_recommendation: bool,
    pub data_quality: Option<String>,
    pub confidence: Option<i64>,
    pub notices: Vec<String>,
    pub estimated_monthly_cost_delta: Option<f64>,
    pub containers: Vec<ExportedContainer>,
}

/// The JSON export: each workload with its settings as Kubernetes quantities.
pub fn json_items(items: &[Exported<'_>]) -> Vec<ExportedWorkload> {
    items
        .iter()
        .map(|e| {
            let s = &e.w.seen;
            let containers = e
                .containers
                .iter()
                .map(|c| ExportedContainer {
                    name: c.name.clone(),
                    role: c.role,
                    requests: QuantityGroup {
                        cpu: quantities(true, &c.cpu.request),
                        memory: quantities(false, &c.memory.request),
                    },
                    limits: QuantityGroup {
                        cpu: quantities(true, &c.cpu.limit),
                        memory: quantities(false, &c.memory.limit),
                    },
                })
                .collect();
            ExportedWorkload {
                workload_id: s.id.clone(),
                cluster: s.cluster.clone(),
                namespace: s.namespace.clone(),
                kind: s.kind.clone(),
                name: s.name.clone(),
                replicas: s.replicas,
                recommendation_id: e.recommendation_id.map(str::to_string),
                created_at: e.created_at.clone(),
                has_recommendation: e.w.has_changes,
                data_quality: e.w.data_quality.clone(),
                confidence: (e.w.confidence >= 0).then_some(e.w.confidence),
                notices: e
                    .w
                    .notices
                    .split(',')
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect(),
                estimated_monthly_cost_delta: e.w.cost_delta,
                containers,
            }
        })
        .collect()
}

const CSV_COLUMNS: &str = "cluster,namespace,kind,name,container,\
cpu_request_current_m,cpu_request_recommended_m,cpu_limit_current_m,cpu_limit_recommended_m,\
memory_request_current_mib,memory_request_recommended_mib,memory_limit_current_mib,memory_limit_recommended_mib,\
workload_monthly_cost_delta,confidence,data_quality,notices,recommendation_id,created_at,container_role";

/// A CSV text cell: RFC 4180 quoting, and a leading `=`, `+`, `-`, `@`, tab or CR
/// prefixed with `'` so a spreadsheet shows it as text (OWASP "CSV injection").
pub fn csv_text(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

fn num(v: Option<f64>) -> String {
    match v {
        None => String::new(),
        Some(v) => {
            let t = format!("{v:.3}");
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

/// The CSV export: one row per container (one row without a container for a workload
/// kerf has no settings of). Memory values in force are exact MiB; recommended ones
/// are what would be applied. The money is the workload's, on its first row only, so
/// the column sums to the fleet's net (`workload_monthly_cost_delta`).
pub fn csv(items: &[Exported<'_>]) -> String {
    let mut out = format!("{CSV_COLUMNS}\r\n");
    let mib = |v: Option<f64>| v.map(|b| b / 1_048_576.0);
    for e in items {
        let s = &e.w.seen;
        let head = [&s.cluster, &s.namespace, &s.kind, &s.name]
            .map(|t| csv_text(t))
            .join(",");
        let money = num(e.w.cost_delta.map(|d| (d * 100.0).round() / 100.0));
        let tail = |first: bool| {
            [
                if first { money.clone() } else { String::new() },
                if e.w.confidence >= 0 {
                    e.w.confidence.to_string()
                } else {
                    String::new()
                },
                csv_text(e.w.data_quality.as_deref().unwrap_or("")),
                csv_text(e.w.notices.trim_matches(',').replace(',', " ").as_str()),
                csv_text(e.recommendation_id.unwrap_or("")),
                csv_text(e.created_at.as_deref().unwrap_or("")),
            ]
            .join(",")
        };
        let empty = ContainerPlan::default();
        let rows: Vec<&ContainerPlan> = if e.containers.is_empty() {
            vec![&empty]
        } else {
            e.containers.iter().collect()
        };
        for (i, c) in rows.into_iter().enumerate() {
            let cpu = |p: &SettingPlan, rec: bool| match rec {
                true => num(p.recommended.map(|v| cpu_millis(v) as f64)),
                false => num(p.current),
            };
            let values = [
                cpu(&c.cpu.request, false),
                cpu(&c.cpu.request, true),
                cpu(&c.cpu.limit, false),
                cpu(&c.cpu.limit, true),
                num(mib(c.memory.request.current)),
                num(c.memory.request.recommended.map(|v| memory_mib(v) as f64)),
                num(mib(c.memory.limit.current)),
                num(c.memory.limit.recommended.map(|v| memory_mib(v) as f64)),
            ]
            .join(",");
            let tail = tail(i == 0);
            let role = if c.name.is_empty() {
                ""
            } else {
                c.role.as_str()
            };
            let _ = write!(
                out,
                "{head},{},{values},{tail},{role}\r\n",
                csv_text(&c.name)
            );
        }
    }
    out
}

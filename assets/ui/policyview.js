// A policy document (or an effective policy) as readable rows: one line per setting,
// with a label people understand, instead of raw JSON.
import { html } from "./lib.js";
import { joinPath } from "./jsontext.js";

export const LABELS = {
  name: "Name",
  description: "Description",
  priority: "Priority",
  "selector.clusters": "Clusters",
  "selector.namespaces": "Namespaces",
  "selector.labels": "Labels",
  "selector.kinds": "Kinds",
  "selector.names": "Names",
  "mode.cpu": "CPU mode",
  "mode.memory": "Memory mode",
  "guardrails.learningPeriod": "Learning period",
  "guardrails.minConfidence": "Minimum confidence",
  "guardrails.cooldown": "Cooldown",
  "guardrails.changeTolerance": "Change tolerance",
  "guardrails.rollback.oomKills": "Roll back after OOM kills",
  "guardrails.rollback.restarts": "Roll back after restarts",
  "guardrails.rollback.throttlingRatio": "Roll back at CPU throttling ratio",
  "guardrails.rollback.watchDuration": "Health watch after a change",
  "apply.strategy": "Apply strategy",
  "apply.fallbackAfter": "Fall back to a rollout after",
  "apply.maintenanceWindows": "Maintenance windows",
  "apply.freezeWindows": "Freeze windows",
  hpaCoordination: "HPA coordination",
  excludedContainers: "Excluded containers",
  analysis: "Analysis",
};

export const SECTIONS = [
  ["name", "Policy"], ["description", "Policy"], ["priority", "Policy"], ["selector", "Selects"], ["mode", "Mode"],
  ["excludedContainers", "Mode"], ["guardrails", "Guardrails"], ["apply", "Applying changes"], ["hpaCoordination", "Applying changes"],
  ["analysis", "Analysis"],
];

const words = (k) => k.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/^./, (c) => c.toUpperCase());

/** The label of a path: the known one, or its last words ("Cpu › Headroom coefficient"). */
export function label(path) {
  if (LABELS[path]) return LABELS[path];
  const segs = path.split(".");
  return segs.slice(segs[0] === "analysis" ? 1 : 0).map(words).join(" › ");
}

/** A window (maintenance or freeze) in one line. */
function windowText(w) {
  if (w.start || w.end) return `${w.start ?? "…"} → ${w.end ?? "…"}`;
  return `${w.cron ?? "?"} for ${w.duration ?? "?"}${w.timezone ? ` (${w.timezone})` : ""}`;
}

export function valueText(path, v) {
  if (v === undefined) return "not set";
  if (v === null) return "none";
  if (Array.isArray(v)) {
    if (v.length === 0) return "none";
    return v.map((x) => (x && typeof x === "object" ? windowText(x) : String(x))).join(", ");
  }
  if (typeof v === "object") return Object.entries(v).map(([k, x]) => `${k}=${x}`).join(", ") || "none";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (path === "guardrails.changeTolerance" || path === "guardrails.rollback.throttlingRatio") return `${v} (${Math.round(v * 1000) / 10} %)`;
  return String(v);
}

/** Leaf rows of a document: objects are walked, except labels and arrays (one row each). */
export function flatten(doc, prefix = []) {
  const rows = [];
  for (const [k, v] of Object.entries(doc ?? {})) {
    const path = [...prefix, k];
    const p = joinPath(path);
    if (v && typeof v === "object" && !Array.isArray(v) && p !== "selector.labels" && Object.keys(v).length > 0) rows.push(...flatten(v, path));
    else rows.push({ path: p, value: v });
  }
  return rows;
}

/** Rows grouped by section, in the documented order. */
export function grouped(rows) {
  const groups = new Map();
  const order = (p) => { const i = SECTIONS.findIndex(([k]) => p === k || p.startsWith(`${k}.`)); return i < 0 ? SECTIONS.length : i; };
  for (const r of [...rows].sort((a, b) => order(a.path) - order(b.path))) {
    const sec = SECTIONS[order(r.path)]?.[1] ?? "Other";
    if (!groups.has(sec)) groups.set(sec, []);
    groups.get(sec).push(r);
  }
  return groups;
}

/** A policy document as a table of what it sets. */
export function PolicyDoc({ spec }) {
  const rows = flatten(spec).filter((r) => r.path !== "name");
  if (rows.length === 0) return html`<p class="muted">This policy sets nothing besides its name: every field takes the defaults.</p>`;
  return html`<table class="compact settings-table"><tbody>
    ${[...grouped(rows)].map(([sec, rs]) => html`<tr class="group"><th colspan="2" scope="rowgroup">${sec}</th></tr>
      ${rs.map((r) => html`<tr key=${r.path}><th scope="row">${label(r.path)}</th><td><code>${valueText(r.path, r.value)}</code></td></tr>`)}`)}
  </tbody></table>`;
}

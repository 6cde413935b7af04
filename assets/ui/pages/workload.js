// Workload detail, answer first: what to change and why (the from → to table, the
// reason in one sentence, the YAML and kubectl command to copy), then the evidence: usage
// charts, the recommendation per container with its trace, the effective policy,
// actions, and history.
import { html, useEffect, useMemo, useState } from "../lib.js";
import { get } from "../api.js";
import { useApi, Async, Badge, QualityBadge, ErrorBox, Loading, Empty, useTitle, useCurrency } from "../components.js";
import { setQuery } from "../router.js";
import { UsageChart } from "../chart.js";
import { ResourceResult } from "../recommendation.js";
import { Answer } from "../answer.js";
import { WorkloadHistory } from "./history.js";
import { ApproveAction, OverrideCard } from "./actions.js";
import { EffectivePolicy } from "./effective.js";
import { HpaNote } from "../hpa.js";
import { Guardrails, useWorkloadEvents } from "../guardrails.js";
import { UsageSourceLine } from "./clusters.js";
import * as fmt from "../format.js";

export function WorkloadPage({ params, query, session }) {
  const id = params.id;
  const res = useApi((signal) => get(`/v1/workloads/${encodeURIComponent(id)}`, {}, { signal }), [id]);
  useTitle(res.data && `${res.data.namespace}/${res.data.name}`, "Workloads");
  return html`<${Async} res=${res} what="this workload">${(w) => html`<${Detail} key=${w.id} w=${w} query=${query} session=${session} reload=${res.reload} />`}</${Async}>`;
}

/** How often a page with a pending approval looks for the agent's answer. */
const PENDING_POLL_MS = 5000;

/** How many pods it runs: batch work runs as Jobs, not replicas. */
function pods(w) {
  if (w.kind === "CronJob") return "runs as Jobs";
  if (w.kind === "Job") return "runs to completion";
  return `${w.replicas ?? "unknown"} replicas`;
}

function Detail({ w, query, session, reload }) {
  // An approval is pending: the agent applies it at its next pass, and the page shows
  // the change as soon as the agent reports it.
  const pending = w.approval?.state === "pending";
  useEffect(() => {
    if (!pending) return undefined;
    const t = setInterval(() => reload(), PENDING_POLL_MS);
    return () => clearInterval(t);
  }, [pending]);
  const rec = w.recommendation;
  const results = rec?.analysis?.results ?? [];
  const names = [...new Set([...(w.current ?? []).map((c) => c.name), ...results.map((r) => r.target?.container)])].filter(Boolean);
  const container = query.get("container") || names[0];
  const eff = useApi((signal) => get(`/v1/workloads/${encodeURIComponent(w.id)}/policy`, {}, { signal }), [w.id]);
  const currency = useCurrency();
  // Bumped after an action, so the history shows it.
  const [tick, setTick] = useState(0);
  const changed = () => { eff.reload(); reload(); setTick((t) => t + 1); };
  const events = useWorkloadEvents(w, tick);
  return html`<article class="workload">
    <nav class="crumbs" aria-label="Breadcrumb"><a href="/workloads">Workloads</a> › ${w.cluster} › ${w.namespace}</nav>
    <div class="page-head">
      <h1>${w.name} <span class="muted small">${w.kind}</span></h1>
      <div class="head-badges">
        <${QualityBadge} status=${w.dataQuality} />
        ${w.stale && html`<${Badge} kind="warn" title=${w.staleReason ?? ""}>stale since ${fmt.time(w.staleSince)}</${Badge}>`}
      </div>
    </div>
    <p class="muted small">${w.cluster} · ${w.namespace} · ${pods(w)} · first seen ${fmt.time(w.firstSeenAt)} · last seen ${fmt.ago(w.lastSeenAt)}</p>
    ${!rec
      ? html`<${Empty}><p><strong>No recommendation yet.</strong></p><p class="muted">The workload was seen, but no run has analysed it yet${w.staleReason ? `: ${w.staleReason}` : ""}.</p></${Empty}>`
      : html`<${Answer} w=${w} currency=${currency} events=${events}>
          <${HpaNote} hpa=${rec.summary?.hpa} />
          ${eff.error ? html`<${ErrorBox} error=${eff.error} retry=${eff.reload} what="the effective policy" />`
            : html`<${ApproveAction} w=${w} rec=${rec} eff=${eff.data} session=${session} onDone=${changed} />`}
        </${Answer}>`}
    ${/* The guardrails panel renders here, between the answer and the evidence. */ null}
    ${names.length > 1 && html`<label class="filter inline"><span>Container</span>
      <select value=${container} onChange=${(e) => setQuery({ container: e.target.value }, { replace: true })}>
        ${names.map((n) => {
          const role = (w.resources ?? []).find((c) => c.name === n)?.role;
          return html`<option value=${n}>${n}${role ? ` (${role === "init" ? "init container" : "sidecar"})` : ""}</option>`;
        })}
      </select></label>`}
    ${container && html`<${Charts} w=${w} container=${container} results=${results} />`}
    ${container && rec && html`<section class="card" aria-labelledby="evidence-h">
      <h2 id="evidence-h">Evidence for <code>${container}</code></h2>
      ${results.filter((r) => r.target?.container === container).length === 0
        ? html`<p class="muted">The stored recommendation has no engine output for this container.</p>`
        : html`<div class="results">${results.filter((r) => r.target?.container === container).map((r) => html`<${ResourceResult} r=${r} />`)}</div>`}
    </section>`}
    <${Guardrails} res=${events} />
    <${EffectivePolicy} res=${eff} rec=${rec} />
    <${OverrideCard} w=${w} eff=${eff.data} session=${session} names=${names} onDone=${changed} />
    <${WorkloadHistory} w=${w} tick=${tick} />
  </article>`;
}

const NO_OOMS = [];

function lineValues(w, results, container, resource) {
  const cur = (w.current ?? []).find((c) => c.name === container)?.[resource];
  const r = results.find((x) => x.target?.container === container && x.resource === resource);
  const sugg = (setting) => r?.recommendations?.find((x) => x.setting === setting)?.suggestedValue ?? null;
  const known = (s) => (s?.known && !s.unset ? s.value : null);
  return {
    lines: [
      { label: "current request", kind: "current-request", value: known(cur?.request) },
      { label: "current limit", kind: "current-limit", value: known(cur?.limit) },
      { label: "recommended request", kind: "recommended-request", value: sugg("requests") },
      { label: "recommended limit", kind: "recommended-limit", value: sugg("limits") },
    ],
    ooms: (results.find((x) => x.target?.container === container && x.resource === "memory")?.evidence?.oomKills ?? []).map((k) => k.timestamp),
  };
}

function Charts({ w, container, results }) {
  // Where the charts and the recommendation read usage (a Prometheus, kerf's own
  // collection, the demo fleet); nothing is said when the cluster cannot be read.
  const cluster = useApi((signal) => get(`/v1/clusters/${encodeURIComponent(w.cluster)}`, {}, { signal }), [w.cluster]);
  return html`<section class="card charts" aria-labelledby="usage-h">
    <h2 id="usage-h">Usage</h2>
    ${cluster.data && html`<${UsageSourceLine} c=${cluster.data} />`}
    <div class="chart-grid">
      ${["cpu", "memory"].map((resource) => html`<${ResourceChart} key=${resource} w=${w} container=${container} results=${results} resource=${resource} />`)}
    </div>
    <p class="small muted legend"><span class="key usage"></span> usage <span class="key current"></span> current (limit dashed) <span class="key recommended"></span> recommended (limit dashed) <span class="key oom"></span> OOM kill</p>
  </section>`;
}

function ResourceChart({ w, container, results, resource }) {
  const res = useApi((signal) => get(`/v1/workloads/${encodeURIComponent(w.id)}/usage`, { resource }, { signal }), [w.id, resource]);
  const { lines, ooms } = useMemo(() => lineValues(w, results, container, resource), [w, results, container, resource]);
  const label = resource === "cpu" ? "CPU" : "Memory";
  if (res.error) return html`<${ErrorBox} error=${res.error} retry=${res.reload} what=${`${label} usage`} />`;
  if (!res.data) return html`<${Loading} what=${`Loading ${label} usage`} />`;
  const c = res.data.containers.find((x) => x.name === container);
  if (!c || c.points.length === 0) {
    return html`<${Empty}><p><strong>${label}: no usage data</strong> for <code>${container}</code> between ${fmt.time(res.data.from)} and ${fmt.time(res.data.to)}.</p></${Empty}>`;
  }
  // OOM kills are memory events: they are marked on the memory chart only.
  return html`<${UsageChart} resource=${resource} points=${c.points} lines=${lines} ooms=${resource === "memory" ? ooms : NO_OOMS} label=${`${label} of ${container} (${fmt.count(c.seriesCount, "series", "series")})`} />`;
}

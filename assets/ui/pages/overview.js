// Overview: one card per cluster (last run and progress, workload counts, savings),
// fleet totals, and actions over time from the audit trail.
import { html, useEffect, useState } from "../lib.js";
import { get, post, getAll } from "../api.js";
import { useApi, Async, Empty, Badge, ErrorBox, Unavailable } from "../components.js";
import { ActionsChart } from "./actions-chart.js";
import { hasRole } from "../session.js";
import { usePauses, PauseBadge, READINESS_KIND } from "./clusters.js";
import * as fmt from "../format.js";

export function OverviewPage({ session }) {
  const savings = useApi((signal) => get("/v1/savings", {}, { signal }), []);
  const runs = useApi((signal) => get("/v1/runs", { limit: 100 }, { signal }), []);
  const fleet = useApi((signal) => get("/v1/clusters", {}, { signal }), []);
  const pauses = usePauses();
  const fleetPause = pauses.data?.get("*");
  const running = (runs.data?.items ?? []).some((r) => r.status === "running");
  useEffect(() => {
    if (!running) return undefined;
    const t = setInterval(runs.reload, 2000);
    return () => clearInterval(t);
  }, [running]);

  return html`<section>
    <div class="page-head"><h1>Overview</h1></div>
    ${fleetPause && html`<p class="notice" role="status"><${PauseBadge} pause=${fleetPause} /> Automation is paused for the whole fleet: ${fleetPause.reason}</p>`}
    <${Async} res=${savings} what="savings">${(s) => html`
      <div class="card fleet-totals">
        <div><span class="muted small">Estimated monthly savings</span><strong class="big ok">${fmt.money(s.fleet.monthlySavings, s.currency)}</strong></div>
        <div><span class="muted small">Extra spend (under-provisioned)</span><strong class="big bad">${fmt.money(s.fleet.monthlyExtraSpend, s.currency)}</strong></div>
        <div><span class="muted small">Workloads</span><strong class="big">${s.fleet.workloads}</strong>
          ${s.fleet.workloadsWithoutEstimate > 0 && html`<span class="small muted">${s.fleet.workloadsWithoutEstimate} without an estimate</span>`}</div>
        <p class="small muted span">If every recommendation were applied. Based on ${s.basis} at ${s.hoursPerMonth} h/month.</p>
      </div>
      ${s.clusters.length === 0
        ? html`<${Empty}><p><strong>No clusters have recommendations yet.</strong></p><p class="muted">Register a cluster and point it at a datasource; the first run fills this page.</p></${Empty}>`
        : html`<div class="cluster-grid">${s.clusters.map((c) => html`<${ClusterCard} key=${c.cluster} c=${c} currency=${s.currency}
            runs=${(runs.data?.items ?? []).filter((r) => r.cluster === c.cluster)} runsError=${runs.error} reloadRuns=${runs.reload} session=${session} fleetError=${fleet.error}
            info=${(fleet.data?.items ?? []).find((x) => x.name === c.cluster)} pause=${pauses.data?.get(c.cluster)} />`)}</div>`}
    `}</${Async}>
    <section class="card">
      <h2>Actions over time</h2>
      <${ActionsChart} />
    </section>
  </section>`;
}

function Count({ cluster, filter, label }) {
  const res = useApi((signal) => get("/v1/workloads", { cluster, ...filter, limit: 100 }, { signal }), [cluster, JSON.stringify(filter)]);
  const n = res.data ? `${res.data.items.length}${res.data.next ? "+" : ""}` : res.error ? "?" : "…";
  const q = new URLSearchParams({ cluster, ...filter });
  return html`<li><a href=${`/workloads?${q}`}>${label}</a> <strong>${n}</strong></li>`;
}

function ClusterCard({ c, currency, runs, runsError, reloadRuns, session, fleetError, info, pause }) {
  const last = runs[0];
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState(null);
  const runNow = async () => {
    setBusy(true); setErr(null);
    try { await post(`/v1/clusters/${encodeURIComponent(c.cluster)}/runs`); reloadRuns(); } catch (e) { setErr(e); } finally { setBusy(false); }
  };
  return html`<article class="card cluster" aria-label=${`Cluster ${c.cluster}`}>
    <h2>${c.cluster}</h2>
    <div class="small readiness">${fleetError && fleetError.missingRoute
      ? html`<span class="muted">Readiness and pause state: not available yet on this hub.</span>`
      : fleetError ? html`<span class="bad">Readiness: ${fleetError.message}</span>`
      : info?.readiness ? html`<${Badge} kind=${READINESS_KIND[info.readiness.state] ?? ""}>${info.readiness.state}</${Badge}> <${PauseBadge} pause=${pause} />
          ${info.freeze?.enabled && html`<${Badge} kind="warn" title=${info.freeze.reason}>frozen</${Badge}>`}
          ${(info.readiness.reasons ?? []).length > 0 && html`<ul class="reasons">${info.readiness.reasons.map((r) => html`<li>${r}</li>`)}</ul>`}`
      : null}</div>
    <h3>Last run</h3>
    ${runsError ? html`<${ErrorBox} error=${runsError} what="runs" />`
      : !last ? html`<p class="muted">No run yet.</p>`
      : html`<${RunLine} run=${last} />`}
    ${hasRole(session, "editor") && html`<p><button type="button" class="small" disabled=${busy || last?.status === "running"} onClick=${runNow}>${last?.status === "running" ? "Running…" : "Run now"}</button></p>`}
    ${err && html`<${ErrorBox} error=${err} />`}
    <h3>Workloads (${c.workloads})</h3>
    <ul class="counts">
      <${Count} cluster=${c.cluster} filter=${{ hasRecommendation: "true" }} label="suggest a change" />
      <${Count} cluster=${c.cluster} filter=${{ dataQuality: "available" }} label="data available" />
      <${Count} cluster=${c.cluster} filter=${{ dataQuality: "partial" }} label="data partial" />
      <${Count} cluster=${c.cluster} filter=${{ dataQuality: "unavailable" }} label="data unavailable" />
      <${Count} cluster=${c.cluster} filter=${{ notice: "oom-kill-detected" }} label="OOM-killed" />
      <${Count} cluster=${c.cluster} filter=${{ notice: "potential-memory-leak" }} label="potential leak" />
    </ul>
    <h3>Estimated monthly</h3>
    <p><span class="ok">saves ${fmt.money(c.monthlySavings, currency)}</span> · <span class="bad">costs ${fmt.money(c.monthlyExtraSpend, currency)} more</span>
      ${c.workloadsWithoutEstimate > 0 && html`<br /><span class="small muted">${c.workloadsWithoutEstimate} workloads without an estimate (replicas unknown)</span>`}</p>
  </article>`;
}

function RunLine({ run }) {
  const kind = { succeeded: "ok", partial: "warn", failed: "bad", running: "" }[run.status] ?? "";
  const w = run.workloads ?? {};
  return html`<div class="run">
    <p><${Badge} kind=${kind}>${run.status}</${Badge}> ${run.trigger}, started ${fmt.ago(run.startedAt)}${run.finishedAt ? `, took ${fmt.duration((new Date(run.finishedAt) - new Date(run.startedAt)) / 1000)}` : ""}</p>
    ${run.status === "running"
      ? html`<label class="small">Phase ${run.phase}: ${w.done ?? 0} of ${w.total ?? "?"} workloads
          <progress max=${w.total || 1} value=${w.done ?? 0}></progress></label>`
      : html`<p class="small muted">${w.total ?? 0} workloads, ${run.recommendations} recommendations, ${w.failed ?? 0} failed, ${w.stale ?? 0} stale</p>`}
    ${(run.errors ?? []).length > 0 && html`<details><summary class="bad">${run.errors.length} error(s)</summary><ul class="small">${run.errors.slice(0, 20).map((e) => html`<li>${e.workload ? html`<code>${e.workload}</code>: ` : ""}${e.message}</li>`)}</ul></details>`}
  </div>`;
}

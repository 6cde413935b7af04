// Overview: the fleet's net monthly figure with savings and extra spend (and what they
// are estimated from), the top opportunities (the changes worth the most, savings and
// risk reductions), one card per registered cluster (counts from one summary call; a
// cluster without data yet says its next step), and actions over time.
import { html, useEffect, useState } from "../lib.js";
import { get, post } from "../api.js";
import { useApi, Async, Empty, Badge, ErrorBox, useCurrency } from "../components.js";
import { hasRole } from "../session.js";
import { usePauses, PauseBadge, READINESS_KIND, linkOf } from "./clusters.js";
import * as fmt from "../format.js";

const TOP = 5;

export function OverviewPage({ session }) {
  const summary = useApi((signal) => get("/v1/workloads/summary", { by: "cluster" }, { signal }), []);
  const runs = useApi((signal) => get("/v1/runs", { limit: 100 }, { signal }), []);
  const fleet = useApi((signal) => get("/v1/clusters", {}, { signal }), []);
  const admin = hasRole(session, "admin") && session.me?.role === "admin";
  const sources = useApi((signal) => (admin ? get("/v1/datasources", {}, { signal }) : Promise.resolve(null)), [admin]);
  const pauses = usePauses();
  const currency = useCurrency();
  const fleetPause = pauses.data?.get("*");
  const running = (runs.data?.items ?? []).some((r) => r.status === "running");
  useEffect(() => {
    if (!running) return undefined;
    const t = setInterval(() => { runs.reload(); summary.reload(); }, 2000);
    return () => clearInterval(t);
  }, [running]);

  return html`<section>
    <div class="page-head"><h1>Overview</h1></div>
    ${fleetPause && html`<p class="notice" role="status"><${PauseBadge} pause=${fleetPause} /> Automation is paused for the whole fleet: ${fleetPause.reason}</p>`}
    <${Async} res=${summary} what="the fleet's totals">${(s) => html`<${FleetTotals} s=${s} currency=${currency} />`}</${Async}>
    <${TopOpportunities} currency=${currency} />
    <${Clusters} summary=${summary} fleet=${fleet} runs=${runs} sources=${sources.data} pauses=${pauses.data} session=${session} currency=${currency} />
    <section class="card" aria-labelledby="actions-h">
      <h2 id="actions-h">Actions over time</h2>
      <${LazyActionsChart} />
    </section>
  </section>`;
}

/** The chart code loads only once the overview has drawn its figures. */
function LazyActionsChart() {
  const [C, setC] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { import("./actions-chart.js").then((m) => setC(() => m.ActionsChart), setError); }, []);
  if (error) return html`<${ErrorBox} error=${error} what="the chart" />`;
  return C ? html`<${C} />` : html`<p class="state loading" role="status">Loading the chart…</p>`;
}

function FleetTotals({ s, currency }) {
  const t = s.total;
  const net = t.monthlyNet;
  return html`<div class="card fleet-totals">
    <div><span class="muted small">Net a month, if every recommendation were applied</span>
      <strong class=${`big ${Math.abs(net) < 0.005 ? "" : net < 0 ? "ok" : "bad"}`} data-net=${net}>${t.workloads === 0 ? "no recommendations yet"
        : Math.abs(net) < 0.005 ? "no change" : net < 0 ? `saves ${fmt.money(Math.abs(net), currency)}` : `costs ${fmt.money(net, currency)} more`}</strong></div>
    <div><span class="muted small">Savings still available (over-provisioned)</span><strong class="big ok" data-available=${t.monthlySavings}>${fmt.money(t.monthlySavings, currency)}</strong></div>
    <${Realized} r=${t.realized} currency=${currency} />
    <div><span class="muted small">Extra spend (under-provisioned)</span><strong class="big bad">${fmt.money(t.monthlyExtraSpend, currency)}</strong></div>
    <div><span class="muted small">Workloads</span><strong class="big">${t.workloads}</strong>
      <span class="small muted">${t.withChanges} suggest a change${t.workloadsWithoutEstimate > 0 ? `, ${t.workloadsWithoutEstimate} without an estimate` : ""}</span></div>
    <p class="small muted span basis">Estimated from the ${s.basis} (what the cluster reserves and bills), at ${s.hoursPerMonth} h a month and the prices in Settings → Pricing. Net = extra spend − savings still available; what kerf already applied is realized, and no longer available.</p>
  </div>`;
}

/** What kerf's live changes save a month (rolled-back ones taken back), by when they were applied. */
function Realized({ r, currency }) {
  if (!r) return null;
  return html`<div class="realized"><span class="muted small">Realized by kerf's changes, a month</span>
    <strong class=${`big ${r.sinceInstall > 0 ? "ok" : ""}`} data-realized=${r.sinceInstall}>${r.workloads === 0 ? "nothing applied yet" : fmt.money(r.sinceInstall, currency)}</strong>
    ${r.workloads > 0 && html`<span class="small muted">${fmt.money(r.thisWeek, currency)} from changes this week, ${fmt.money(r.thisMonth, currency)} this month; ${r.workloads} workload${r.workloads === 1 ? "" : "s"} changed</span>`}</div>`;
}

/** One workload's change in a few words: "CPU 2 cores → 250m, memory 1 GiB → 512 MiB". */
function changeText(w) {
  const parts = [];
  for (const c of w.resources ?? []) {
    for (const r of ["cpu", "memory"]) {
      const s = c[r]?.request;
      if (s?.recommended != null) parts.push(`${r === "cpu" ? "CPU" : "memory"} ${s.current == null ? "not set" : fmt.quantity(r, s.current)} → ${fmt.quantity(r, s.recommended)}`);
      else if (c[r]?.limit?.recommended != null) parts.push(`${r === "cpu" ? "CPU" : "memory"} limit ${c[r].limit.current == null ? "not set" : fmt.quantity(r, c[r].limit.current)} → ${fmt.quantity(r, c[r].limit.recommended)}`);
    }
  }
  return parts.slice(0, 2).join(", ") + (parts.length > 2 ? ", …" : "");
}

const RISKS = { "oom-kill": "OOM kills", "memory-leak": "memory leak", "under-provisioned": "under-provisioned" };

function TopOpportunities({ currency }) {
  const savings = useApi((signal) => get("/v1/workloads", { sort: "savings", hasRecommendation: "true", limit: TOP }, { signal }), []);
  const risks = useApi((signal) => get("/v1/workloads", { sort: "risk", risk: "true", limit: TOP }, { signal }), []);
  const list = (res, what, empty) => html`<${Async} res=${res} what=${what}>${(page) => {
    const items = page.items.filter((w) => what !== "savings" || w.estimatedMonthlyCostDelta < 0);
    return items.length === 0 ? html`<p class="muted small">${empty}</p>` : html`<ol class="top">${items.map((w) => html`<li>
      <a href=${`/workloads/${encodeURIComponent(w.id)}`}>${w.namespace}/${w.name}</a> <span class="muted small">${w.cluster}</span>
      ${w.risk && what !== "savings" && html` <${Badge} kind="bad">${RISKS[w.risk] ?? w.risk}</${Badge}>`}
      <span class=${`num ${w.estimatedMonthlyCostDelta < 0 ? "ok" : "bad"}`}>${fmt.signedMoney(w.estimatedMonthlyCostDelta, currency)}</span>
      <div class="small muted">${changeText(w)}</div></li>`)}</ol>`;
  }}</${Async}>`;
  return html`<section class="card top-opportunities" aria-labelledby="top-h">
    <h2 id="top-h">Top opportunities</h2>
    <div class="top-grid">
      <div><h3>Biggest savings</h3>${list(savings, "savings", "No recommendation saves money yet.")}
        <p class="small"><a href="/workloads?sort=savings&hasRecommendation=true">All by saving →</a></p></div>
      <div><h3>Risks to fix</h3>${list(risks, "risks", "No recommendation reduces a risk.")}
        <p class="small"><a href="/workloads?sort=risk&risk=true">All by risk →</a></p></div>
    </div>
  </section>`;
}

function Clusters({ summary, fleet, runs, sources, pauses, session, currency }) {
  if (fleet.error && !fleet.error.missingRoute) return html`<${ErrorBox} error=${fleet.error} retry=${fleet.reload} what="the clusters" />`;
  if (!summary.data || (!fleet.data && !fleet.error)) return null;
  const groups = new Map(summary.data.groups.map((g) => [g.cluster, g]));
  // Every registered cluster, the new ones too; a hub without the fleet API lists those with data.
  const names = fleet.data ? fleet.data.items.filter((c) => c.state !== "retired").map((c) => c.name) : [...groups.keys()];
  if (names.length === 0) {
    return html`<${Empty}><p><strong>No clusters yet.</strong></p><p class="muted">Add a datasource (Settings → Datasources), then register a cluster on it (Clusters); its first run fills this page.</p></${Empty}>`;
  }
  return html`<div class="cluster-grid">${names.map((name) => html`<${ClusterCard} key=${name} name=${name} g=${groups.get(name)} currency=${currency}
    runs=${(runs.data?.items ?? []).filter((r) => r.cluster === name)} runsError=${runs.error} reloadRuns=${runs.reload} session=${session}
    info=${fleet.data?.items.find((x) => x.name === name)} pause=${pauses?.get(name)}
    link=${linkOf(fleet.data?.items.find((x) => x.name === name) ?? { name }, sources).state} />`)}</div>`;
}

function Count({ cluster, filter, label, n }) {
  const q = new URLSearchParams({ cluster, ...filter });
  return html`<li><a href=${`/workloads?${q}`}>${label}</a> <strong>${n}</strong></li>`;
}

function RunNow({ name, last, reload, session }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState(null);
  if (!hasRole(session, "editor")) return null;
  const runNow = async () => {
    setBusy(true); setErr(null);
    try { await post(`/v1/clusters/${encodeURIComponent(name)}/runs`); reload(); }
    // A run already in progress (a scheduled one, or another tab's) is not an error:
    // follow it.
    catch (e) { if (e.code === "run_in_progress") reload(); else setErr(e); }
    finally { setBusy(false); }
  };
  return html`<p><button type="button" class="small" disabled=${busy || last?.status === "running"} onClick=${runNow}>${last?.status === "running" ? "Running…" : "Run now"}</button>
      ${last?.status === "running" && html` <span class="small muted" role="status">a run is in progress, started ${fmt.ago(last.startedAt)}</span>`}</p>
    ${err && html`<${ErrorBox} error=${err} />`}`;
}

/** What a cluster without recommendations needs next. */
function nextStep({ link, last }) {
  if (link === "none") return { kind: "link", text: "No data yet: link a datasource to this cluster." };
  if (link === "collecting") return { kind: "collect", text: "No data yet: this cluster's agent collects usage itself once it runs (no Prometheus needed); recommendations follow once enough history has arrived." };
  if (last?.status === "running") return { kind: "run", text: "The first run is in progress." };
  if (!last) return { kind: "wait", text: "Waiting for the first run (it starts on the schedule, or now with Run now)." };
  if (last.status === "failed") return { kind: "failed", text: `The last run failed: ${last.errors?.[0]?.message ?? "no error recorded"}. Check the datasource.` };
  return { kind: "empty", text: "The last run found no workloads: check that the datasource exports this cluster's kube-state-metrics and cAdvisor series." };
}

function ClusterCard({ name, g, currency, runs, runsError, reloadRuns, session, info, pause, link }) {
  const last = runs[0];
  const step = !g ? nextStep({ link, last }) : null;
  return html`<article class="card cluster" aria-label=${`Cluster ${name}`} data-cluster=${name}>
    <h2>${info?.displayName || name}</h2>
    <div class="small readiness">${info?.readiness && html`<${Badge} kind=${READINESS_KIND[info.readiness.state] ?? ""}>${info.readiness.state}</${Badge}> `}<${PauseBadge} pause=${pause} />
      ${info?.freeze?.enabled && html`<${Badge} kind="warn" title=${info.freeze.reason}>frozen</${Badge}>`}
      ${(info?.readiness?.reasons ?? []).length > 0 && html`<ul class="reasons">${info.readiness.reasons.map((r) => html`<li>${r}</li>`)}</ul>`}</div>
    ${step && html`<div class="next-step" data-step=${step.kind} role="status"><h3>Next step</h3><p>${step.text}</p>
      ${step.kind === "link" && hasRole(session, "admin") && html`<p><a class="button" href="/clusters">Link a datasource</a> <a class="button" href="/settings?tab=datasources">Add a datasource</a></p>`}
      ${step.kind === "collect" && html`<p class="small"><a href="/clusters">Where its usage comes from →</a></p>`}
      ${step.kind === "failed" && hasRole(session, "admin") && html`<p><a href="/settings?tab=datasources">Test the datasource →</a></p>`}</div>`}
    <h3>Last run</h3>
    ${runsError ? html`<${ErrorBox} error=${runsError} what="runs" />`
      : !last ? html`<p class="muted">No run yet.</p>`
      : html`<${RunLine} run=${last} />`}
    ${step?.kind !== "link" && step?.kind !== "collect" && html`<${RunNow} name=${name} last=${last} reload=${reloadRuns} session=${session} />`}
    ${g && html`<h3>Workloads (${g.workloads})</h3>
    <ul class="counts">
      <${Count} cluster=${name} filter=${{ hasRecommendation: "true" }} label="suggest a change" n=${g.withChanges} />
      <${Count} cluster=${name} filter=${{ risk: "true" }} label="reduce a risk" n=${g.riskReductions} />
      <${Count} cluster=${name} filter=${{ dataQuality: "available" }} label="data available" n=${g.dataQuality.available} />
      <${Count} cluster=${name} filter=${{ dataQuality: "partial" }} label="data partial" n=${g.dataQuality.partial} />
      <${Count} cluster=${name} filter=${{ dataQuality: "unavailable" }} label="data unavailable" n=${g.dataQuality.unavailable} />
      <${Count} cluster=${name} filter=${{ notice: "oom-kill-detected" }} label="OOM-killed" n=${g.notices["oom-kill-detected"] ?? 0} />
      <${Count} cluster=${name} filter=${{ notice: "potential-memory-leak" }} label="potential leak" n=${g.notices["potential-memory-leak"] ?? 0} />
    </ul>
    <h3>Estimated monthly</h3>
    <p><span class="ok">saves ${fmt.money(g.monthlySavings, currency)}</span> · <span class="bad">costs ${fmt.money(g.monthlyExtraSpend, currency)} more</span> ·
      net <strong class=${g.monthlyNet <= 0 ? "ok" : "bad"}>${fmt.signedMoney(g.monthlyNet, currency)}</strong>
      ${g.workloadsWithoutEstimate > 0 && html`<br /><span class="small muted">${g.workloadsWithoutEstimate} workloads without an estimate (replicas unknown)</span>`}</p>`}
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
      : html`<p class="small muted">${fmt.count(w.total ?? 0, "workload")}, ${fmt.count(run.recommendations ?? 0, "recommendation")}, ${w.failed ?? 0} failed, ${w.stale ?? 0} stale</p>`}
    ${(run.errors ?? []).length > 0 && html`<details><summary class="bad">${fmt.count(run.errors.length, "error")}</summary><ul class="small">${run.errors.slice(0, 20).map((e) => html`<li>${e.workload ? html`<code>${e.workload}</code>: ` : ""}${e.message}</li>`)}</ul></details>`}
  </div>`;
}

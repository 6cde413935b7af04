// The policy editor's presets and backtest: pick a preset as the policy's `analysis`,
// and see what the policy being edited would change (per workload, current →
// recommended) and how it would have done on the recorded usage (POST
// /v1/policies/backtest): cost change, CPU above the request, throttling, would-be OOM
// kills, in sample and out of sample (recommended on the first half, scored on the rest).
import { html, useState } from "./lib.js";
import { get, post } from "./api.js";
import { useApi, ErrorBox, Loading, Badge } from "./components.js";
import * as fmt from "./format.js";

/** A select of the presets; picking one sets the document's `analysis`. */
export function PresetPicker({ doc, onPick }) {
  const res = useApi((signal) => get("/v1/policies/presets", {}, { signal }), []);
  const presets = res.data?.items ?? [];
  const current = presets.find((p) => JSON.stringify(p.analysis) === JSON.stringify(doc?.analysis))?.name ?? "";
  const pick = (name) => {
    const p = presets.find((x) => x.name === name);
    onPick(p ? p.analysis : undefined);
  };
  const chosen = presets.find((p) => p.name === current);
  return html`<div class="field preset-picker">
    <label for="pol-preset">Analysis preset</label>
    <select id="pol-preset" value=${current} onChange=${(e) => pick(e.target.value)} aria-describedby="pol-preset-hint">
      <option value="">${doc?.analysis ? "custom (from the JSON below)" : "not set: the hub's default analysis"}</option>
      ${presets.map((p) => html`<option value=${p.name}>${p.name}${p.fleetDefault ? " (fleet default)" : ""}</option>`)}
    </select>
    <span class="hint" id="pol-preset-hint">${chosen ? chosen.description : "Sets the policy's analysis to a named starting point; edit it further in the JSON."}</span>
  </div>`;
}

const pct = (v) => (v === null || v === undefined ? "—" : `${(v * 100).toFixed(2)} %`);

function Figures({ r }) {
  const rows = [
    ["Cost change per month", (s) => fmt.signedMoney(s.costChange, r.currency || "USD")],
    ["CPU above the request", (s) => pct(s.cpuAboveRequestShare)],
    ["CPU throttled at the limit", (s) => pct(s.cpuThrottledShare)],
    ["Memory above the request", (s) => pct(s.memoryAboveRequestShare)],
    ["Would-be OOM kills", (s) => String(s.wouldBeOomKills)],
  ];
  return html`<table class="compact backtest-figures">
    <thead><tr><th scope="col"></th><th scope="col" class="num">In sample</th><th scope="col" class="num">Out of sample</th></tr></thead>
    <tbody>${rows.map(([label, f]) => html`<tr><th scope="row">${label}</th><td class="num">${f(r.inSample)}</td><td class="num">${f(r.outOfSample)}</td></tr>`)}</tbody>
  </table>`;
}

/** One setting: "a → b" when it changes, else its value (`—` when not set). */
function setting(resource, now, next) {
  const q = (v) => (v === null || v === undefined ? "not set" : fmt.quantity(resource, v));
  if (next === null || next === undefined || next === now) return q(now);
  return html`${q(now)} → <strong>${fmt.quantity(resource, next)}</strong>`;
}

/** A resource's request, and its limit when that changes too (a limit-only change shows). */
function change(resource, c) {
  const request = setting(resource, c?.current?.request, c?.recommended?.request);
  const limitNow = c?.current?.limit;
  const limitNext = c?.recommended?.limit;
  const limitChanges = limitNext !== null && limitNext !== undefined && limitNext !== limitNow;
  return limitChanges ? html`${request}<div class="small">limit ${setting(resource, limitNow, limitNext)}</div>` : request;
}

function Changes({ r }) {
  const rows = [...r.workloads].sort((a, b) => Math.abs(b.inSample.costChange ?? 0) - Math.abs(a.inSample.costChange ?? 0)).slice(0, 25);
  if (rows.length === 0) return html`<p class="muted">The policy selects no workload with recorded usage.</p>`;
  return html`<div class="table-wrap"><table class="compact backtest-changes">
    <caption class="small">What changes: the ${rows.length} largest of ${r.workloads.length} (requests, and limits where they change; current → recommended now)</caption>
    <thead><tr><th scope="col">Workload</th><th scope="col">Container</th><th scope="col">CPU request</th><th scope="col">Memory request</th>
      <th scope="col" class="num">Cost / month</th><th scope="col" class="num">CPU above request (out)</th><th scope="col" class="num">OOM kills (out)</th></tr></thead>
    <tbody>${rows.flatMap((w) => (w.containers.length ? w.containers : [null]).map((c, i) => html`<tr>
      ${i === 0 && html`<td rowspan=${Math.max(1, w.containers.length)}><a href=${`/workloads/${w.id}`}>${w.name}</a><div class="small muted">${w.cluster} · ${w.namespace}</div>
        ${w.note && html`<div class="small muted">${w.note}</div>`}</td>`}
      <td>${c ? c.name : "—"}</td>
      <td>${c ? change("cpu", c.cpu) : "—"}</td>
      <td>${c ? change("memory", c.memory) : "—"}</td>
      ${i === 0 && html`<td class="num" rowspan=${Math.max(1, w.containers.length)}>${fmt.signedMoney(w.inSample.costChange, r.currency || "USD")}</td>
        <td class="num" rowspan=${Math.max(1, w.containers.length)}>${pct(w.outOfSample.cpuAboveRequestShare)}</td>
        <td class="num" rowspan=${Math.max(1, w.containers.length)}>${w.outOfSample.wouldBeOomKills}</td>`}
    </tr>`))}</tbody>
  </table></div>`;
}

/** The backtest of `doc` (the policy being edited), run on demand. */
export function BacktestPanel({ doc }) {
  const [state, setState] = useState({ busy: false, error: null, report: null, ranFor: null });
  const text = JSON.stringify(doc ?? {});
  const run = async () => {
    setState({ ...state, busy: true, error: null });
    try {
      const report = await post("/v1/policies/backtest", { policy: doc });
      setState({ busy: false, error: null, report, ranFor: text });
    } catch (e) { setState({ busy: false, error: e, report: null, ranFor: null }); }
  };
  const r = state.report;
  return html`<section class="card backtest" aria-label="Backtest">
    <div class="page-head"><h2>Preview and backtest</h2>
      <div class="actions"><button type="button" onClick=${run} disabled=${state.busy}>${state.busy ? "Backtesting…" : r ? "Backtest again" : "Backtest this policy"}</button></div></div>
    <p class="small muted">What this policy would recommend for the workloads it selects, and how that would have fared on their recorded usage:
      in sample (recommended on the whole window, scored on it) and out of sample (recommended on the first half, scored on the second, as if applied then).</p>
    ${state.busy && html`<${Loading} what="Replaying the recorded usage" />`}
    ${state.error && html`<${ErrorBox} error=${state.error} what="the backtest" />`}
    ${r && html`<div class="backtest-result">
      ${state.ranFor !== text && html`<p class="small"><${Badge} kind="warn">outdated</${Badge}> The policy changed since this backtest.</p>`}
      <p><strong>${r.workloads.length}</strong> workloads · <strong>${r.workloadsChanged}</strong> change · <strong>${r.workloadsGrown}</strong> grow
        <span class="small muted"> · ${fmt.time(r.span.start)} – ${fmt.time(r.span.end)}, split ${fmt.time(r.span.split)} · analysis <code title=${r.policyVersion}>${r.policyVersion.slice(0, 14)}…</code></span></p>
      ${r.truncated && html`<p class="small muted">More workloads matched than were backtested.</p>`}
      ${(r.errors ?? []).map((e) => html`<p class="small field-error">${e.cluster}: ${e.message}</p>`)}
      <${Figures} r=${r} />
      <${Changes} r=${r} />
    </div>`}
  </section>`;
}

// One container's recommendation per resource: from → to with confidence, data quality
// and its reasons, notices, OOM floor, potential-leak evidence, rollout fallback, trace.
import { html } from "./lib.js";
import { Badge } from "./components.js";
import { DecisionTrace } from "./trace.js";
import { explain } from "./explain.js";
import { QualityReasons, ResultQualityBadge } from "./quality.js";
import * as fmt from "./format.js";

function signalText(resource, s) {
  if (!s || s.available === false || s.known === false) return "unknown";
  if (s.unset) return "not set";
  return fmt.quantity(resource, s.value);
}

function Settings({ r }) {
  const rows = ["requests", "limits"].map((setting) => {
    const rec = (r.recommendations ?? []).find((x) => x.setting === setting);
    const trace = r.decisionTrace?.settings?.find((s) => s.setting === setting);
    const current = setting === "requests" ? r.evidence?.currentRequest : r.evidence?.currentLimit;
    return { setting, rec, trace, current };
  });
  return html`<table class="compact">
    <thead><tr><th scope="col"></th><th scope="col">Current</th><th scope="col">Recommended</th><th scope="col" class="num">Confidence</th></tr></thead>
    <tbody>${rows.map(({ setting, rec, trace, current }) => html`<tr>
      <th scope="row">${setting === "requests" ? "Request" : "Limit"}</th>
      <td>${rec ? (rec.currentUnset ? "not set" : fmt.quantity(r.resource, rec.currentValue)) : signalText(r.resource, current)}</td>
      <td>${rec
        ? html`<strong class="to">→ ${fmt.quantity(r.resource, rec.suggestedValue)}</strong>`
        : html`<span class="muted">keep (${trace?.disposition ?? "no change"})</span>`}</td>
      <td class="num">${rec ? rec.confidence : "—"}</td>
    </tr>`)}</tbody>
  </table>`;
}

function Quality({ dq }) {
  if (!dq) return null;
  return html`<div class="quality">
    <p><${ResultQualityBadge} dq=${dq} />
      <span class="small muted"> coverage ${fmt.percent(dq.coverage, 1)} · ${dq.observationCount ?? 0} observations · ${dq.seriesCount ?? 0} series ·
      ${fmt.duration((dq.observedIntervalHours ?? 0) * 3600)} observed${dq.cadenceSeconds ? ` every ${fmt.duration(dq.cadenceSeconds)}` : ""}</span></p>
    <${QualityReasons} dq=${dq} />
  </div>`;
}

function Leak({ leak }) {
  if (!leak) return null;
  const kind = leak.status === "potential-leak" ? "bad" : leak.status === "no-leak-pattern" ? "ok" : "muted";
  const eps = (leak.episodes ?? []).filter((e) => e.status === "potential-leak");
  return html`<div class="leak">
    <p>Memory leak check: <${Badge} kind=${kind}>${fmt.words(leak.status)}</${Badge}>
      <span class="small muted"> ${leak.evaluatedEpisodes} evaluated, ${leak.suspectedEpisodes} suspected, ${leak.skippedEpisodes} skipped</span></p>
    ${eps.length > 0 && html`<table class="compact">
      <caption class="small">Evidence (advisory: a potential leak is not a diagnosis)</caption>
      <thead><tr><th scope="col">Pod / series</th><th scope="col">Baseline</th><th scope="col" class="num">Growth</th><th scope="col" class="num">Slope</th><th scope="col" class="num">Consistency</th></tr></thead>
      <tbody>${eps.map((e) => html`<tr>
        <td><code>${e.podUID || e.seriesID}</code><div class="small muted">${fmt.time(e.observedStart)} – ${fmt.time(e.observedEnd)}</div></td>
        <td>${fmt.bytes(e.baselineStartBytes)} → ${fmt.bytes(e.baselineEndBytes)}</td>
        <td class="num">${fmt.bytes(e.growthBytes)}${e.relativeGrowth != null ? ` (${fmt.percent(e.relativeGrowth)})` : ""}</td>
        <td class="num">${fmt.bytes(e.slopeBytesPerHour)}/h</td>
        <td class="num">${fmt.percent(e.trendConsistency)}</td>
      </tr>`)}</tbody></table>`}
  </div>`;
}

function Fallback({ fb }) {
  if (!fb) return null;
  return html`<div class="fallback">
    <p><${Badge} kind="warn">rollout fallback</${Badge}> Usage from the previous release <code>${fb.release}</code>
      (started ${fmt.time(fb.releaseStartedAt)}${fb.releaseStartInferred ? ", inferred" : ""}), evaluated at ${fmt.time(fb.evaluationTime)}.</p>
    <p class="small">The current rollout was not usable: ${(fb.currentDataQuality?.reasons ?? []).map(fmt.words).join(", ") || "no reasons recorded"}.</p>
  </div>`;
}

/** An OOM kill kerf inferred from a restart (no termination timestamp exported). */
const inferred = (k) => /\/inferred(-\d+)?$/.test(k.id ?? "");

function Oom({ r }) {
  const kills = r.evidence?.oomKills ?? [];
  if (!r.oomAdjustment && kills.length === 0) return null;
  return html`<div class="oom">
    <p><${Badge} kind="bad">OOM</${Badge}> ${fmt.count(kills.length, "OOM kill")} counted.</p>
    ${kills.length > 0 && html`<details class="oom-times"><summary class="small">When (${fmt.count(kills.length, "time")})</summary>
      <ul class="small">${kills.map((k) => html`<li>${fmt.time(k.timestamp)}${k.memoryLimitBytes ? ` at a ${fmt.bytes(k.memoryLimitBytes)} limit` : ""}${inferred(k) ? " (inferred)" : ""}</li>`)}</ul></details>`}
    ${kills.some(inferred) && html`<p class="small muted">Inferred kills: kube-state-metrics exports no termination time here, so a restart seen while the last termination reason was OOMKilled dates the kill, within one scrape interval.</p>`}
    ${r.oomAdjustment && html`<p class="small">Memory request floor ${fmt.bytes(r.oomAdjustment.oomRequestFloorBytes)} (baseline ${fmt.bytes(r.oomAdjustment.baselineRequestBytes)})
      ${r.oomAdjustment.usedCurrentFallback ? "; the limit at the kill was unknown, today's setting was used" : ""}
      ${r.oomAdjustment.usedUsageFallback ? "; usage × headroom was used as the base" : ""}.</p>`}
  </div>`;
}

export function ResourceResult({ r }) {
  const label = r.resource === "cpu" ? "CPU" : "Memory";
  return html`<section class="result" aria-label=${`${label} of ${r.target?.container}`}>
    <h4>${label}</h4>
    <${Settings} r=${r} />
    ${r.noActionReason && html`<p class="small">No change: <strong>${fmt.words(r.noActionReason)}</strong>. ${explain(r.noActionReason)}</p>`}
    <${Quality} dq=${r.dataQuality} />
    ${(r.notices ?? []).length > 0 && html`<p>Notices: ${r.notices.map((n) => html`<${Badge} kind="warn" title=${explain(n)}>${fmt.words(n)}</${Badge}> `)}</p>`}
    <${Oom} r=${r} />
    <${Leak} leak=${r.memoryLeak} />
    <${Fallback} fb=${r.rolloutFallback} />
    <details class="trace-box" open>
      <summary>Why: decision trace</summary>
      <${DecisionTrace} trace=${r.decisionTrace} resource=${r.resource} />
    </details>
  </section>`;
}

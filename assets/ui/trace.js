// The engine's DecisionTrace as readable steps: where the usage came from, which earlier
// releases were tried, and every calculation and guard for the request and the limit.
import { html } from "./lib.js";
import * as fmt from "./format.js";
import { explain } from "./explain.js";

const UNITLESS = new Set(["coefficient", "ratio", "relativeChange", "minimumRelativeChange"]);

function val(resource, key, v) {
  if (typeof v !== "number") return String(v);
  if (key === "relativeChange" || key === "minimumRelativeChange") return fmt.percent(v, 1);
  if (UNITLESS.has(key)) return `×${v}`;
  return fmt.quantity(resource, v);
}

/** One step as a sentence; unknown rules fall back to their values. */
function sentence(resource, step) {
  const v = step.values ?? {};
  const q = (k) => val(resource, k, v[k]);
  switch (step.rule) {
    case "usage × headroom": return `usage ${q("usage")} × headroom ${v.coefficient} = ${q("candidate")}`;
    case "OOM sizing without usage history": return "sized from the OOM kill alone (no usable usage history)";
    case "OOM floor": return `OOM floor ${q("floor")} (limit at the kill × ${v.coefficient}) against baseline ${q("baseline")} → ${q("candidate")}`;
    case "request bounds":
    case "limit bounds": return `keep ${q("before")} within ${q("minimum")} – ${q("maximum")} → ${q("candidate")}`;
    case "request × limit ratio": return `request ${q("request")} × ratio ${v.ratio} = ${q("candidate")}`;
    case "initialize unset setting": return `not set today; start at ${q("candidate")}`;
    case "limit covers retained request": return `${q("candidate")} must cover the retained request ${q("retainedRequest")}`;
    case "request fits retained or changing limit": return v.candidate > v.currentLimit
      ? `${q("candidate")} is above the current limit ${q("currentLimit")}, which changes with it`
      : `${q("candidate")} must fit under the current limit ${q("currentLimit")}`;
    case "safe reduction or introduction of limit": return "reductions and new limits need complete, trustworthy evidence";
    case "material change": return `change ${q("absoluteChange")}${"relativeChange" in v ? ` (${q("relativeChange")})` : ""} from ${q("current")} to ${q("candidate")}; needs at least ${q("minimumAbsoluteChange")} and ${q("minimumRelativeChange")}`;
    default: return Object.entries(v).map(([k, x]) => `${k} ${val(resource, k, x)}`).join(", ");
  }
}

function Source({ source, resource }) {
  if (!source) return null;
  const method = source.method + (source.percentile ? ` (p${source.percentile})` : "");
  return html`<p>Sized from the <strong>${method}</strong> of release <code>${source.release || "unknown"}</code>
    ${source.podUID && html`, pod <code>${source.podUID}</code>`}
    ${source.seriesID && html`, series <code>${source.seriesID}</code>`}
    ${source.timestamp ? html`, sample at ${fmt.time(source.timestamp)}` : ""}.</p>`;
}

export function DecisionTrace({ trace, resource }) {
  if (!trace) return html`<p class="muted">No decision trace was stored for this result.</p>`;
  return html`<div class="trace">
    <${Source} source=${trace.source} resource=${resource} />
    ${(trace.fallbacks ?? []).length > 0 && html`<p>Earlier releases tried, in order:</p>
      <ul>${trace.fallbacks.map((f) => html`<li><code>${f.release}</code>: ${f.selected ? html`<strong>used</strong>` : "not used"}
        ${(f.reasons ?? []).length > 0 && html` (${f.reasons.map(fmt.words).join(", ")})`}</li>`)}</ul>`}
    ${(trace.settings ?? []).map((s) => html`<div class="trace-setting">
      <h5>${s.setting === "requests" ? "Request" : "Limit"}: <span class=${`disp ${s.disposition}`}>${s.disposition}</span></h5>
      ${(s.reasons ?? []).length > 0 && html`<p class="small">Because: ${s.reasons.map((r) => html`<span title=${explain(r)}>${fmt.words(r)}</span>`).reduce((a, b) => [a, ", ", b])}</p>`}
      ${(s.steps ?? []).length > 0
        ? html`<ol class="steps">${s.steps.map((st) => html`<li class=${st.passed === false ? "failed" : ""}>
            <span class="rule">${st.rule}</span>
            ${"passed" in st && html`<span class=${`guard ${st.passed ? "ok" : "bad"}`}>${st.passed ? "✓ passed" : "✗ failed"}</span>`}
            <span class="step-text">${sentence(resource, st)}</span>
          </li>`)}</ol>`
        : html`<p class="muted small">No calculation steps.</p>`}
    </div>`)}
  </div>`;
}

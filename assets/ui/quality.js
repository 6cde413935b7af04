// Data quality as kerf reads it: the engine counts every reason towards `partial`; kerf
// splits them into those that lower quality (the evidence is worse) and those that only
// inform (a release start inferred from a boundary it saw, a change too small to make,
// limits the policy leaves alone). `runs::summary::INFORMING_REASONS` holds the same
// list; a test keeps the two equal.
import { html } from "./lib.js";
import { QualityBadge } from "./components.js";
import { explain } from "./explain.js";

export const INFORMING_REASONS = [
  "inferred-release-start",
  "no-material-change",
  "bound-applied",
  "limit-changes-disabled",
  "previous-release-usage",
  "oom-kill-detected",
  "potential-memory-leak",
];

export const informs = (reason) => INFORMING_REASONS.includes(reason);

/** kerf's status of one engine result: `partial` only with a reason that lowers quality. */
export function status(dq) {
  if (!dq) return null;
  if (dq.status === "partial" && (dq.reasons ?? []).every(informs)) return "available";
  return dq.status;
}

/** The reasons of one result, split into "lowers quality" and "only informs". */
export function QualityReasons({ dq }) {
  const reasons = dq?.reasons ?? [];
  if (reasons.length === 0) return null;
  const lowering = reasons.filter((x) => !informs(x));
  const notes = reasons.filter(informs);
  const list = (items) => html`<ul class="reasons">${items.map((x) => html`<li><code>${x}</code> ${explain(x)}</li>`)}</ul>`;
  return html`<div class="quality-reasons">
    ${lowering.length > 0 && html`<p class="small"><strong>Lowers quality</strong></p>${list(lowering)}`}
    ${notes.length > 0 && html`<p class="small"><strong>Only informs</strong> <span class="muted">(does not lower quality)</span></p>${list(notes)}`}
  </div>`;
}

/** The status badge of one result, saying when the engine's `partial` only informs. */
export function ResultQualityBadge({ dq }) {
  const s = status(dq);
  return html`<${QualityBadge} status=${s} />${s !== dq?.status ? html` <span class="small muted">(the engine says ${dq.status}: its reasons only inform)</span>` : ""}`;
}

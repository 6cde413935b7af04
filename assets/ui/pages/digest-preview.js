// A channel's weekly digest as it would go out now (`GET /v1/notifications/channels/{id}/digest`,
// the week up to now): what kerf's live changes realized and what is still available
// (one computation with the overview), the week's changes with their top reasons, and
// what needs someone. Loaded when opened.
import { html, useState } from "../lib.js";
import { get } from "../api.js";
import { useApi, Async } from "../components.js";
import * as fmt from "../format.js";
import { reasonWords } from "../words.js";

function Body({ id }) {
  const res = useApi((signal) => get(`/v1/notifications/channels/${encodeURIComponent(id)}/digest`, {}, { signal }), [id]);
  return html`<${Async} res=${res} what="the digest preview">${(d) => {
    const p = d.preview;
    const money = (v) => fmt.money(v, p.currency);
    const reasons = (list) => list.map((r) => `${reasonWords(r.reason)} ×${r.count}`).join(", ");
    const attention = [["OOM-killed", p.attention.oomKilled], ["leaking memory", p.attention.leaking],
      ["CPU-throttled", p.attention.throttled], ["stale data", p.attention.stale]].filter(([, l]) => l.count > 0);
    return html`<div class="digest-body">
      <p class="small muted">${p.scope === "fleet" ? "The whole fleet" : `Team ${p.scope}`}, ${fmt.time(p.periodStart)} to now.</p>
      <p data-realized=${p.savings.realizedMonthly} data-available=${p.savings.availableMonthly}>Realized <strong class="ok">${money(p.savings.realizedMonthly)}</strong> a month from changes applied this week; <strong>${money(p.savings.availableMonthly)}</strong> a month still available.</p>
      <p>${fmt.count(p.changes.applied, "change")} applied, ${p.changes.rolledBack} rolled back${p.changes.topRollbackReasons.length ? ` (${reasons(p.changes.topRollbackReasons)})` : ""}, ${p.changes.blocked} blocked${p.changes.topBlockedReasons.length ? ` (${reasons(p.changes.topBlockedReasons)})` : ""}.</p>
      ${attention.length > 0 && html`<p>Needs someone: ${attention.map(([what, l]) => `${fmt.count(l.count, "workload")} ${what}`).join(", ")}.</p>`}
      ${p.clustersNotReady.length > 0 && html`<p>Not ready: ${p.clustersNotReady.map((c) => c.cluster).join(", ")}.</p>`}
    </div>`;
  }}</${Async}>`;
}

/** "Preview this week's digest", loaded when opened. */
export function DigestPreview({ id }) {
  const [open, setOpen] = useState(false);
  return html`<details class="digest-preview" onToggle=${(e) => setOpen(e.target.open)}>
    <summary class="small">Preview this week's digest</summary>
    ${open && html`<${Body} id=${id} />`}
  </details>`;
}

// Actions on a recommendation, offered only when the hub serves their route (read from
// its OpenAPI document) and the user's role allows them.
import { html, useState, useEffect } from "../lib.js";
import { hasRoute, post } from "../api.js";
import { Confirm, Field } from "../components.js";
import { hasRole } from "../session.js";
import * as fmt from "../format.js";

export function WorkloadActions({ w, rec, session }) {
  const [canApprove, setCanApprove] = useState(null);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [done, setDone] = useState(null);
  const [reason, setReason] = useState("");
  useEffect(() => { hasRoute("POST", "/v1/workloads/{id}/approve").then(setCanApprove); }, []);
  if (canApprove === null) return null;
  if (!canApprove) {
    return html`<p class="small muted" role="note">Approve once and overrides: not available on this hub yet (the API has no approval route).</p>`;
  }
  if (!hasRole(session, "editor")) return html`<p class="small muted">Approving needs the editor role.</p>`;
  const changes = (rec.summary?.containers ?? []).flatMap((c) => ["cpu", "memory"].flatMap((res) =>
    ["requests", "limits"].map((s) => ({ c: c.name, res, s, v: c[res]?.[s] })).filter((x) => x.v)));
  const approve = async () => {
    setBusy(true); setError(null);
    try {
      setDone(await post(`/v1/workloads/${encodeURIComponent(w.id)}/approve`, { recommendationId: rec.id, reason: reason || undefined }));
      setOpen(false);
    } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return html`<div class="actions">
    <button type="button" class="primary" disabled=${!w.hasRecommendation} onClick=${() => setOpen(true)}>Approve once…</button>
    ${done && html`<span class="ok" role="status">Approved. The agent will apply it once.</span>`}
    <${Confirm} open=${open} title="Approve this recommendation once?" confirmLabel="Approve once" busy=${busy} error=${error}
      onConfirm=${approve} onCancel=${() => { setOpen(false); setError(null); }}>
      <p>The agent will apply exactly these changes to <strong>${w.namespace}/${w.name}</strong> in <strong>${w.cluster}</strong>, once:</p>
      <table class="compact"><thead><tr><th scope="col">Container</th><th scope="col">Setting</th><th scope="col">From</th><th scope="col">To</th></tr></thead>
        <tbody>${changes.map((x) => html`<tr><td>${x.c}</td><td>${x.res} ${x.s}</td><td>${x.v.current == null ? "not set" : fmt.quantity(x.res, x.v.current)}</td><td>${fmt.quantity(x.res, x.v.suggested)}</td></tr>`)}</tbody></table>
      <${Field} id="approve-reason" label="Reason (recorded in the audit)"><input id="approve-reason" value=${reason} onInput=${(e) => setReason(e.target.value)} /></${Field}>
    </${Confirm}>
  </div>`;
}

// Actions on a workload: approve its latest recommendation once, and set or clear its
// override. Offered when the user's role allows them; what the API refuses is shown as
// its message.
import { html, useState } from "../lib.js";
import { post, put, del } from "../api.js";
import { Confirm, Field, ErrorBox, Badge } from "../components.js";
import * as fmt from "../format.js";
import { HeldNow, ApprovalState } from "./approval-state.js";

const MODES = ["off", "audit", "auto-patch"];

/** Fleet editor/admin, or team-editor/team-admin of a team whose namespaces cover the workload. */
export function canChange(session, w) {
  const me = session.me;
  if (!me) return true;
  if (me.role === "editor" || me.role === "admin") return true;
  return (me.teams ?? []).some((t) => (t.role === "team-editor" || t.role === "team-admin")
    && (t.namespaces ?? []).some((n) => (n.cluster === "*" || n.cluster === w.cluster) && (n.namespace === "*" || n.namespace === w.namespace)));
}

/** The changes an approval lets the agent make: resources in audit mode, containers not excluded. */
export function approvalChanges(rec, effective) {
  const mode = effective?.mode ?? {};
  const excluded = new Set(effective?.excludedContainers ?? []);
  return (rec.summary?.containers ?? []).filter((c) => !excluded.has(c.name)).flatMap((c) => ["cpu", "memory"].filter((r) => mode[r] === "audit")
    .flatMap((res) => ["requests", "limits"].map((s) => ({ c: c.name, res, s, v: c[res]?.[s] }))
      .filter((x) => x.v && x.v.suggested != null && x.v.current !== x.v.suggested)));
}

export function ApproveAction({ w, rec, eff, session, onDone }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [done, setDone] = useState(null);
  const [reason, setReason] = useState("");
  if (!eff) return null;
  if (!canChange(session, w)) return html`<p class="small muted" role="note">Approving needs the editor role.</p>`;
  const mode = eff.effective?.mode ?? {};
  const audited = ["cpu", "memory"].filter((r) => mode[r] === "audit");
  if (audited.length === 0) {
    return html`<p class="small muted" role="note">Approve once is for audit mode; here CPU is <strong>${mode.cpu}</strong> and memory <strong>${mode.memory}</strong>.</p>`;
  }
  const stale = eff.recommendationStale;
  const changes = approvalChanges(rec, eff.effective);
  const approve = async () => {
    setBusy(true); setError(null);
    try {
      setDone(await post(`/v1/workloads/${encodeURIComponent(w.id)}/approve`, { recommendationId: rec.id, reason: reason || undefined }));
      setOpen(false);
      onDone?.();
    } catch (e) { setError(e); } finally { setBusy(false); }
  };
  // The server's word once the page has reloaded it; the answer to the click until then.
  const approval = done && w.approval?.id !== done.id ? done : w.approval;
  const pending = approval?.state === "pending" && approval.recommendationId === rec.id;
  return html`<div class="actions">
    <${ApprovalState} a=${approval} />
    <button type="button" class="primary" disabled=${!w.hasRecommendation || changes.length === 0 || stale || pending} onClick=${() => setOpen(true)}>Approve once…</button>
    ${stale && html`<span class="small muted">Made under another effective policy: wait for the next run.</span>`}
    ${!stale && changes.length === 0 && html`<span class="small muted">Nothing to approve in audit mode.</span>`}
    ${error && !open && html`<${ErrorBox} error=${error} />`}
    <${Confirm} open=${open} title="Approve this recommendation once?" confirmLabel="Approve once" busy=${busy} error=${error}
      onConfirm=${approve} onCancel=${() => { setOpen(false); setError(null); }}>
      <p>The agent will apply exactly these changes to <strong>${w.namespace}/${w.name}</strong> (${w.kind}) in <strong>${w.cluster}</strong>, once, for the resource${audited.length > 1 ? "s" : ""} in audit mode (${audited.join(", ")}):</p>
      <table class="compact approve-changes"><thead><tr><th scope="col">Container</th><th scope="col">Resource</th><th scope="col">Setting</th><th scope="col">From</th><th scope="col">To</th></tr></thead>
        <tbody>${changes.map((x) => html`<tr><td>${x.c}</td><td>${x.res === "cpu" ? "CPU" : "memory"}</td><td>${x.s === "requests" ? "request" : "limit"}</td>
          <td>${x.v.current == null ? "not set" : fmt.quantity(x.res, x.v.current)}</td><td><strong class="to">${fmt.quantity(x.res, fmt.asApplied(x.res, x.v.suggested))}</strong></td></tr>`)}</tbody></table>
      ${audited.length < 2 && html`<p class="small muted">${["cpu", "memory"].filter((r) => mode[r] !== "audit").map((r) => `${r} is ${mode[r]}: not part of this approval.`).join(" ")}</p>`}
      ${open && html`<${HeldNow} w=${w} rec=${rec} effective=${eff.effective} />`}
      <${Field} id="approve-reason" label="Reason (recorded in the audit)"><input id="approve-reason" value=${reason} onInput=${(e) => setReason(e.target.value)} /></${Field}>
    </${Confirm}>
  </div>`;
}

const toLocal = (iso) => { if (!iso) return ""; const d = new Date(iso); return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16); };

export function OverrideCard({ w, eff, session, names, onDone }) {
  const [dialog, setDialog] = useState(null);
  const o = eff?.override;
  const editor = canChange(session, w);
  return html`<section class="card override" aria-labelledby="override-h">
    <h2 id="override-h">Override</h2>
    ${!o ? html`<p class="muted">No override: the policies (or the defaults) decide.</p>`
      : html`<p>${o.active ? html`<${Badge} kind="warn">in force</${Badge}>` : html`<${Badge} kind="muted">expired, ignored</${Badge}>`}
          Mode ${Object.entries(o.spec?.mode ?? {}).map(([k, v]) => `${k} ${v}`).join(", ") || "unchanged"}
          ${(o.spec?.excludedContainers ?? []).length > 0 && html` · excluded ${o.spec.excludedContainers.join(", ")}`}
          ${o.expiresAt && html` · until ${fmt.time(o.expiresAt)}`}</p>
        <p class="small muted">Set by ${o.setBy?.name ?? "?"} ${fmt.ago(o.setAt)}${o.spec?.reason ? html` — “${o.spec.reason}”` : ""}</p>`}
    ${!editor && html`<p class="small muted" role="note">Setting an override needs the editor role.</p>`}
    ${editor && html`<div class="actions">
      <button type="button" onClick=${() => setDialog("set")}>${o ? "Change override…" : "Set override…"}</button>
      ${o && html`<button type="button" class="danger" onClick=${() => setDialog("clear")}>Clear override…</button>`}
    </div>`}
    ${dialog === "set" && html`<${SetOverride} w=${w} o=${o} origins=${eff?.origins} names=${names} onClose=${() => setDialog(null)} onDone=${onDone} />`}
    ${dialog === "clear" && html`<${ClearOverride} w=${w} onClose=${() => setDialog(null)} onDone=${onDone} />`}
  </section>`;
}

function SetOverride({ w, o, origins, names, onClose, onDone }) {
  const s = o?.spec ?? {};
  const [f, setF] = useState({ cpu: s.mode?.cpu ?? "", memory: s.mode?.memory ?? "", excluded: new Set(s.excludedContainers ?? []), until: toLocal(s.expiresAt), reason: "" });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const save = async () => {
    setBusy(true); setError(null);
    const mode = {};
    if (f.cpu) mode.cpu = f.cpu;
    if (f.memory) mode.memory = f.memory;
    try {
      await put(`/v1/workloads/${encodeURIComponent(w.id)}/override`, { mode, excludedContainers: [...f.excluded], expiresAt: f.until ? new Date(f.until).toISOString() : undefined, reason: f.reason || undefined });
      onClose(); onDone?.();
    } catch (e) { setError(e); } finally { setBusy(false); }
  };
  const toggle = (n) => { const x = new Set(f.excluded); if (x.has(n)) x.delete(n); else x.add(n); setF({ ...f, excluded: x }); };
  return html`<${Confirm} open=${true} title=${`Override for ${w.namespace}/${w.name}`} confirmLabel="Set override" busy=${busy} error=${error} onConfirm=${save} onCancel=${onClose}>
    <p class="small muted">An override beats the hub's policies for the fields it sets, until it expires. The cluster's own policies (from Git) beat it.</p>
    <div class="form-grid">
      ${["cpu", "memory"].map((r) => {
        const git = origins?.[`mode.${r}`]?.source === "cluster-policy" ? origins[`mode.${r}`] : null;
        return html`<${Field} id=${`ov-${r}`} label=${`${r === "cpu" ? "CPU" : "Memory"} mode`}
          hint=${git ? `Set by the cluster's policy ${git.name} (from Git): an override of it has no effect while that policy sets it.` : undefined}>
        <select id=${`ov-${r}`} value=${f[r]} onChange=${(e) => setF({ ...f, [r]: e.target.value })}><option value="">as the policy says</option>${MODES.map((m) => html`<option value=${m}>${m}</option>`)}</select></${Field}>`;
      })}
      <${Field} id="ov-until" label="Expires (optional)"><input id="ov-until" type="datetime-local" value=${f.until} onInput=${(e) => setF({ ...f, until: e.target.value })} /></${Field}>
    </div>
    ${names.length > 0 && html`<fieldset><legend>Excluded containers (never changed)</legend>
      ${names.map((n) => html`<label class="check"><input type="checkbox" checked=${f.excluded.has(n)} onChange=${() => toggle(n)} /> ${n}</label> `)}</fieldset>`}
    <${Field} id="ov-reason" label="Reason (recorded in the audit)"><input id="ov-reason" value=${f.reason} onInput=${(e) => setF({ ...f, reason: e.target.value })} /></${Field}>
  </${Confirm}>`;
}

function ClearOverride({ w, onClose, onDone }) {
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const clear = async () => {
    setBusy(true); setError(null);
    try { await del(`/v1/workloads/${encodeURIComponent(w.id)}/override`, { reason }); onClose(); onDone?.(); }
    catch (e) { setError(e); } finally { setBusy(false); }
  };
  return html`<${Confirm} open=${true} title="Clear the override?" confirmLabel="Clear override" busy=${busy} error=${error} onConfirm=${clear} onCancel=${onClose}>
    <p>The policies (or the defaults) decide again for <strong>${w.namespace}/${w.name}</strong>.</p>
    <${Field} id="ov-clear-reason" label="Reason (recorded in the audit)"><input id="ov-clear-reason" value=${reason} onInput=${(e) => setReason(e.target.value)} /></${Field}>
  </${Confirm}>`;
}

// Clusters: register (the agent token shown once, and the datasource its runs read),
// link a datasource, rotate the token, retire, pause and resume automation (with reason
// and resume time), freeze, and the fleet-wide pause. Built on /v1/clusters,
// /v1/datasources and /v1/fleet/*; on a hub without them the page says so.
import { html, useState } from "../lib.js";
import { get, post, put, del } from "../api.js";
import { useApi, Async, Empty, ErrorBox, Field, fieldError, CopyButton, Badge, Confirm } from "../components.js";
import { hasRole } from "../session.js";
import * as fmt from "../format.js";

export const READINESS_KIND = { ready: "ok", degraded: "warn", "not-ready": "bad" };

/** The pauses in force, by scope id (`*` is the fleet). */
export function usePauses() {
  return useApi((signal) => get("/v1/fleet/automation", {}, { signal }).then((r) => new Map(r.items.map((p) => [p.id, p]))), []);
}

export function PauseBadge({ pause }) {
  if (!pause) return null;
  return html`<${Badge} kind="warn" title=${`${pause.reason}${pause.pausedBy?.name ? ` (by ${pause.pausedBy.name})` : ""}`}>
    ${pause.scope === "fleet" ? "fleet paused" : "paused"}${pause.resumeAt ? ` until ${fmt.time(pause.resumeAt)}` : ""}</${Badge}>`;
}

const isoOrNull = (local) => (local ? new Date(local).toISOString() : undefined);

export function ClustersPage({ session }) {
  const res = useApi((signal) => get("/v1/clusters", {}, { signal }), []);
  const pauses = usePauses();
  const reload = () => { res.reload(); pauses.reload(); };
  const [secret, setSecret] = useState(null);
  const editor = hasRole(session, "editor");
  const admin = hasRole(session, "admin");
  const sources = useApi((signal) => (admin ? get("/v1/datasources", {}, { signal }) : Promise.resolve(null)), [admin]);
  const reloadAll = () => { reload(); sources.reload(); };
  return html`<section>
    <div class="page-head"><h1>Clusters</h1></div>
    ${pauses.data && html`<${FleetPause} pause=${pauses.data.get("*")} editor=${editor} reload=${reload} />`}
    ${secret && html`<${TokenOnce} secret=${secret} onDone=${() => setSecret(null)} />`}
    <${Async} res=${res} what="clusters">${(page) => page.items.length === 0
      ? html`<${Empty}><p><strong>No clusters registered.</strong> Register one below; its agent reports with the token shown once.</p></${Empty}>`
      : html`<div class="cluster-list">${page.items.map((c) => html`<${ClusterRow} key=${c.name} c=${c} pause=${pauses.data?.get(c.name)}
          editor=${editor} admin=${admin} reload=${reloadAll} onToken=${setSecret} sources=${sources} />`)}</div>`}
    </${Async}>
    ${admin && html`<${Register} reload=${reloadAll} onToken=${setSecret} sources=${sources} />`}
  </section>`;
}

function TokenOnce({ secret, onDone }) {
  const url = location.origin;
  const cmd = `kubectl -n kerf create secret generic kerf-agent --from-literal=hub=${url} --from-literal=token=${secret.token}`;
  return html`<div class="card secret" role="status">
    <p><strong>Agent token of ${secret.cluster}${secret.rotated ? " (rotated; the old token no longer works)" : ""}.</strong> It is shown only this once.</p>
    <p><code class="secret-value">${secret.token}</code> <${CopyButton} text=${secret.token} /></p>
    <p class="small">Store it in the cluster for its agent:</p>
    <pre class="json">${cmd}</pre><${CopyButton} text=${cmd} label="Copy command" />
    <p><button type="button" class="small" onClick=${onDone}>I have stored it</button></p>
  </div>`;
}

function useAct(reload) {
  const [st, setSt] = useState({ busy: false, error: null });
  const run = async (fn) => {
    setSt({ busy: true, error: null });
    try { const r = await fn(); setSt({ busy: false, error: null }); reload(); return r ?? true; }
    catch (e) { setSt({ busy: false, error: e }); return null; }
  };
  return [st, run, () => setSt({ busy: false, error: null })];
}

function FleetPause({ pause, editor, reload }) {
  const [open, setOpen] = useState(false);
  return html`<div class=${`card fleet-pause${pause ? " paused" : ""}`}>
    <p>${pause
      ? html`<${PauseBadge} pause=${pause} /> Automation is paused for the whole fleet: ${pause.reason}`
      : html`Automation runs across the fleet where policies allow it.`}</p>
    ${editor && html`<button type="button" class=${pause ? "" : "danger"} onClick=${() => setOpen(true)}>${pause ? "Resume the fleet…" : "Pause the whole fleet…"}</button>`}
    ${open && html`<${PauseDialog} title=${pause ? "Resume automation for the fleet" : "Pause automation for the whole fleet"} resume=${Boolean(pause)}
      path=${pause ? "/v1/fleet/resume" : "/v1/fleet/pause"} reload=${reload} onClose=${() => setOpen(false)} />`}
  </div>`;
}

/** Pause (reason required, optional resume time) or resume (optional reason). */
function PauseDialog({ title, path, resume, reload, onClose }) {
  const [st, run] = useAct(reload);
  const [reason, setReason] = useState("");
  const [until, setUntil] = useState("");
  const submit = async () => {
    const body = resume ? { reason: reason || undefined } : { reason, resumeAt: isoOrNull(until) };
    if (await run(() => post(path, body))) onClose();
  };
  const general = st.error && !fieldError(st.error, "reason") && !fieldError(st.error, "resumeAt") ? st.error : null;
  return html`<${Confirm} open=${true} title=${title} confirmLabel=${resume ? "Resume" : "Pause"} busy=${st.busy} error=${general} onConfirm=${submit} onCancel=${onClose}>
    <p>${resume ? "Agents may change workloads again where policies allow." : "Agents stop changing workloads; recommendation runs continue."}</p>
    <${Field} id="pause-reason" label=${resume ? "Reason (optional, recorded in the audit)" : "Reason (recorded in the audit)"} error=${fieldError(st.error, "reason")}>
      <input id="pause-reason" value=${reason} onInput=${(e) => setReason(e.target.value)} /></${Field}>
    ${!resume && html`<${Field} id="pause-until" label="Resume automatically at (optional)" error=${fieldError(st.error, "resumeAt")}>
      <input id="pause-until" type="datetime-local" value=${until} onInput=${(e) => setUntil(e.target.value)} /></${Field}>`}
  </${Confirm}>`;
}

/**
 * Where cluster `c` reads its usage: `c.usage` as the hub tells it (a linked datasource,
 * the embedded store its agent or a remote writer fills, the demo fleet, or none). A hub
 * that does not tell falls back on the datasource row that lists the cluster, and on
 * readiness reasons that name a missing datasource.
 */
export function linkOf(c, sources) {
  const row = sources?.items?.find((d) => (d.clusters ?? []).includes(c.name));
  const kind = c.usage?.kind;
  if (kind === "datasource") return { state: "linked", row: row ?? { name: c.usage.datasource } };
  if (kind === "embedded") return { state: c.usage.embedded?.series > 0 ? "embedded" : "collecting", embedded: c.usage.embedded };
  if (kind === "demo") return { state: "built-in" };
  if (kind === "none") return { state: "none" };
  if (row) return { state: "linked", row };
  if (sources) return { state: c.readiness?.state === "ready" ? "built-in" : "none" };
  const reasons = c.readiness?.reasons ?? [];
  return { state: reasons.some((r) => /has no datasource/.test(r)) ? "none" : "unknown" };
}

/** Where a cluster's usage comes from, in one line everyone sees. */
export function UsageSourceLine({ c }) {
  const link = linkOf(c, null);
  const e = link.embedded;
  const write = `/v1/clusters/${encodeURIComponent(c.name)}/write`;
  const text = {
    linked: () => html`Usage is read from the datasource <strong>${link.row.name}</strong>.`,
    embedded: () => html`Usage is collected by kerf itself (the hub's embedded store): <strong>${fmt.duration(e.historySeconds)} of history</strong>, ${fmt.count(e.series, "series", "series")} of at most ${e.seriesLimit.toLocaleString()},
      newest sample ${fmt.ago(e.newestSampleAt)}${e.refusedSeries > 0 ? html` · <span class="warn">${fmt.count(e.refusedSeries, "series", "series")} refused (see the reasons above)</span>` : ""}.`,
    collecting: () => html`Usage will be collected by kerf itself: nothing has arrived yet. This cluster's agent sends what it collects from each node's kubelet
      once it runs; a Prometheus you already run can instead remote-write to <code>${write}</code>.`,
    "built-in": () => html`Usage comes from the demo fleet built into this hub.`,
    none: () => html`<span class="warn">No datasource linked: runs of this cluster have no data.</span>`,
  }[link.state];
  if (!text) return null;
  return html`<p class="small usage-source" data-source=${link.state}>${text()}</p>`;
}

/** The datasource a cluster reads from, and (admin) a select to point it at another. */
function LinkDatasource({ c, sources, reload }) {
  const [st, run] = useAct(reload);
  const items = sources.data?.items ?? [];
  const link = sources.data ? linkOf(c, sources.data) : null;
  const current = link?.row;
  const [choice, setChoice] = useState("");
  if (sources.error) return html`<${ErrorBox} error=${sources.error} what="the datasources" />`;
  if (!sources.data) return null;
  const id = `link-${c.name}`;
  const save = () => run(() => put(`/v1/clusters/${encodeURIComponent(c.name)}/datasource`, { datasourceId: Number(choice) }));
  return html`<div class="link-ds" data-link=${link.state}>
    <p class="small">${current
      ? html`Reads usage from <strong>${current.name}</strong> <code>${current.url}</code>.`
      : link.state === "built-in" ? html`Reads usage from the hub's built-in source (the demo fleet).`
      : link.state === "embedded" || link.state === "collecting" ? html`No datasource linked: usage comes from kerf's own collection. Link a Prometheus to read its history instead.`
      : html`<span class="warn">No datasource linked: runs of this cluster have no data.</span>`}</p>
    ${items.length === 0
      ? link.state === "built-in" || link.state === "embedded" || link.state === "collecting"
        ? html`<p class="small muted">To read a Prometheus instead, <a href="/settings?tab=datasources">add it as a datasource</a>, then link it here.</p>`
        : html`<p class="small"><a href="/settings?tab=datasources">Add a datasource</a> first.</p>`
      : html`<div class="inline-add">
        <label for=${id} class="small">${current ? "Switch to" : "Link"}</label>
        <select id=${id} value=${choice} onChange=${(e) => setChoice(e.target.value)}>
          <option value="">choose a datasource…</option>
          ${items.filter((d) => d.id !== current?.id).map((d) => html`<option value=${d.id}>${d.name} (${d.url})</option>`)}
        </select>
        <button type="button" class="small" disabled=${!choice || st.busy} onClick=${save}>${st.busy ? "Linking…" : "Link"}</button>
      </div>`}
    ${st.error && html`<${ErrorBox} error=${st.error} />`}
  </div>`;
}

function ClusterRow({ c, pause, editor, admin, reload, onToken, sources }) {
  const [dialog, setDialog] = useState(null);
  const [st, run] = useAct(reload);
  const retired = c.state === "retired";
  const name = encodeURIComponent(c.name);
  const rotate = async () => {
    if (!confirm(`Rotate the agent token of ${c.name}? The current token stops working at once.`)) return;
    const r = await run(() => post(`/v1/clusters/${name}/token`, {}));
    if (r?.token) onToken({ cluster: c.name, token: r.token, rotated: true });
  };
  const retire = async () => {
    const reason = prompt(`Retire ${c.name}? Its agent token stops working; its data stays for the audit. Reason:`);
    if (reason !== null) await run(() => del(`/v1/clusters/${name}`, { reason: reason || undefined }));
  };
  return html`<article class="card cluster-row" aria-label=${`Cluster ${c.name}`}>
    <div class="page-head">
      <h2>${c.displayName || c.name} ${c.displayName && html`<span class="muted small">${c.name}</span>`}</h2>
      <div class="head-badges">
        ${retired ? html`<${Badge} kind="muted">retired ${fmt.time(c.retiredAt)}</${Badge}>`
          : c.readiness && html`<${Badge} kind=${READINESS_KIND[c.readiness.state] ?? ""}>${c.readiness.state}</${Badge}>`}
        <${PauseBadge} pause=${pause} />
        ${c.freeze?.enabled && html`<${Badge} kind="warn" title=${c.freeze.reason}>frozen${c.freeze.until ? ` until ${fmt.time(c.freeze.until)}` : ""}</${Badge}>`}
      </div>
    </div>
    ${c.description && html`<p>${c.description}</p>`}
    ${!retired && (c.readiness?.reasons ?? []).length > 0 && html`<ul class="small reasons">${c.readiness.reasons.map((r) => html`<li>${r}</li>`)}</ul>`}
    ${pause && html`<p class="small">Paused ${fmt.ago(pause.pausedAt)}${pause.pausedBy?.name ? ` by ${pause.pausedBy.name}` : ""}: ${pause.reason}</p>`}
    ${!retired && html`<${UsageSourceLine} c=${c} />`}
    <p class="small muted">Registered ${fmt.time(c.createdAt)}${c.tokenRotatedAt ? ` · token rotated ${fmt.time(c.tokenRotatedAt)}` : ""}</p>
    ${admin && !retired && html`<${LinkDatasource} c=${c} sources=${sources} reload=${reload} />`}
    ${!retired && html`<div class="actions">
      ${editor && html`<button type="button" onClick=${() => setDialog(pause ? "resume" : "pause")}>${pause ? "Resume…" : "Pause…"}</button>`}
      ${admin && html`<button type="button" onClick=${rotate} disabled=${st.busy}>Rotate token</button>
        <button type="button" class="danger" onClick=${retire} disabled=${st.busy}>Retire…</button>`}
    </div>`}
    ${st.error && html`<${ErrorBox} error=${st.error} />`}
    ${dialog && html`<${PauseDialog} title=${`${dialog === "pause" ? "Pause" : "Resume"} automation of ${c.name}`} resume=${dialog === "resume"}
      path=${`/v1/clusters/${name}/${dialog}`} reload=${reload} onClose=${() => setDialog(null)} />`}
  </article>`;
}

function Register({ reload, onToken, sources }) {
  const [st, run] = useAct(reload);
  const empty = { name: "", displayName: "", description: "", datasourceId: "" };
  const [form, setForm] = useState(empty);
  const items = sources.data?.items ?? [];
  const submit = async (e) => {
    e.preventDefault();
    const r = await run(async () => {
      const made = await post("/v1/clusters", { name: form.name, displayName: form.displayName || undefined, description: form.description || undefined });
      // The token is shown even when linking fails: the cluster exists from here on.
      onToken({ cluster: made.name, token: made.token });
      if (form.datasourceId) await put(`/v1/clusters/${encodeURIComponent(made.name)}/datasource`, { datasourceId: Number(form.datasourceId) });
      return made;
    });
    if (r?.token) setForm(empty);
  };
  const fields = ["name", "displayName", "description"];
  const general = st.error && !fields.some((f) => fieldError(st.error, f)) ? st.error : null;
  return html`<form class="card" onSubmit=${submit} aria-label="Register a cluster"><h2>Register a cluster</h2>
    <div class="form-grid">
      <${Field} id="cl-name" label="Name (a DNS label)" error=${fieldError(st.error, "name")}><input id="cl-name" required value=${form.name} onInput=${(e) => setForm({ ...form, name: e.target.value })} /></${Field}>
      <${Field} id="cl-display" label="Display name" error=${fieldError(st.error, "displayName")}><input id="cl-display" value=${form.displayName} onInput=${(e) => setForm({ ...form, displayName: e.target.value })} /></${Field}>
      <${Field} id="cl-desc" label="Description" error=${fieldError(st.error, "description")}><input id="cl-desc" value=${form.description} onInput=${(e) => setForm({ ...form, description: e.target.value })} /></${Field}>
      <${Field} id="cl-datasource" label="Datasource (where its usage is read)" hint=${items.length ? "Runs read this Prometheus-compatible server; without one, the cluster's agent collects usage itself." : "None needed: the cluster's agent collects usage itself. To read a Prometheus instead, add it in Settings → Datasources."}>
        <select id="cl-datasource" value=${form.datasourceId} onChange=${(e) => setForm({ ...form, datasourceId: e.target.value })}>
          <option value="">none: kerf collects usage itself</option>
          ${items.map((d) => html`<option value=${d.id}>${d.name} (${d.url})</option>`)}
        </select></${Field}>
    </div>
    ${general && html`<${ErrorBox} error=${general} />`}
    <button type="submit" class="primary" disabled=${st.busy}>Register</button>
  </form>`;
}

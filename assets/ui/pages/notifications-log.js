// Notification rules (which events go to which channel) and the delivery log: every
// message with its status, attempts and the receiver's last answer — failures first to
// the eye, filterable by status and channel.
import { html, useState, useEffect } from "../lib.js";
import { get, post, put, del } from "../api.js";
import { useApi, Async, Empty, ErrorBox, Badge, Field, fieldError, Pager, useDebounced } from "../components.js";
import * as fmt from "../format.js";
import { canEdit } from "./notifications-forms.js";

const CHANGES = ["applied", "rolled_back", "failed", "blocked", "fallback", "skipped", "released"];
const NOTICES = ["readiness_degraded", "readiness_recovered", "automation_paused", "automation_resumed", "run_failed"];
const STATUS_KIND = { delivered: "ok", pending: "warn", failed: "bad" };
const list = (s) => s.split(",").map((x) => x.trim()).filter(Boolean);

export function RulesSection({ session, channels, tick, changed }) {
  const res = useApi((signal) => get("/v1/notifications/rules", {}, { signal }), [tick]);
  const editable = channels.filter((c) => canEdit(session, c));
  const [act, setAct] = useState(null);
  const run = async (fn) => {
    setAct(null);
    try { await fn(); changed(); } catch (e) { setAct(e); }
  };
  return html`<h2>Rules</h2>
    <${Async} res=${res} what="notification rules">${(page) => page.items.length === 0
      ? html`<${Empty}><p>${channels.length === 0 ? "No rules yet: each rule belongs to a channel." : "No rules: no event reaches any channel (their weekly digests still go out)."}</p></${Empty}>`
      : html`<div class="table-wrap"><table>
        <thead><tr><th>Channel</th><th>Rule</th><th>Events</th><th>Only</th><th></th></tr></thead>
        <tbody>${page.items.map((r) => {
          const ch = channels.find((c) => c.id === r.channelId);
          const mine = ch && canEdit(session, ch);
          const only = [...r.reasons, ...r.clusters.map((c) => `cluster ${c}`), ...r.namespaces.map((n) => `namespace ${n}`), r.team ? `team ${r.team.name}` : null].filter(Boolean);
          return html`<tr key=${r.id}>
            <td>${r.channelName}</td>
            <td>${r.name} ${!r.enabled && html`<${Badge} kind="warn">disabled</${Badge}>`}</td>
            <td>${r.events.map((e) => html`<${Badge} kind=${NOTICES.includes(e) ? "accent" : ""}>${e}</${Badge}> `)}</td>
            <td class="small">${only.length ? only.join(", ") : html`<span class="muted">everything</span>`}</td>
            <td class="row-actions">${mine && html`
              <button type="button" class="small" onClick=${() => run(() => put(`/v1/notifications/rules/${r.id}`, {
                channelId: r.channelId, name: r.name, enabled: !r.enabled, events: r.events, reasons: r.reasons,
                clusters: r.clusters, namespaces: r.namespaces, teamId: r.team ? Number(r.team.id) : undefined }))}>${r.enabled ? "Disable" : "Enable"}</button>
              <button type="button" class="small danger" onClick=${() => confirm(`Delete the rule ${r.name}?`) && run(() => del(`/v1/notifications/rules/${r.id}`))}>Delete</button>`}</td>
          </tr>`;
        })}</tbody></table></div>`}
    </${Async}>
    ${act && html`<${ErrorBox} error=${act} />`}
    ${editable.length > 0 && html`<${RuleForm} channels=${editable} onSaved=${changed} />`}`;
}

function RuleForm({ channels, onSaved }) {
  const [f, setF] = useState({ channelId: channels[0].id, name: "", events: ["applied"], reasons: "", clusters: "", namespaces: "" });
  const [st, setSt] = useState({ busy: false, error: null });
  const [shown, setShown] = useState(false);
  const toggle = (e) => setF({ ...f, events: f.events.includes(e) ? f.events.filter((x) => x !== e) : [...f.events, e] });
  const err = (name) => fieldError(st.error, name)
    ?? (st.error?.details?.errors ?? []).find((x) => x.field?.startsWith(`${name}[`))?.message;
  const submit = async (e) => {
    e.preventDefault();
    setSt({ busy: true, error: null });
    try {
      await post("/v1/notifications/rules", { channelId: Number(f.channelId), name: f.name, events: f.events,
        reasons: list(f.reasons), clusters: list(f.clusters), namespaces: list(f.namespaces) });
      setSt({ busy: false, error: null });
      setF({ ...f, name: "" });
      onSaved();
    } catch (error) { setSt({ busy: false, error }); }
  };
  const known = ["channelId", "name", "events", "reasons", "clusters", "namespaces"];
  const general = st.error && !known.some((k) => err(k)) ? st.error : null;
  const box = (e) => html`<label class="check"><input type="checkbox" checked=${f.events.includes(e)} onChange=${() => toggle(e)} /> ${e}</label>`;
  return html`<form class="card inner" onSubmit=${submit} aria-labelledby="add-rule"><details open=${shown} onToggle=${(e) => setShown(e.target.open)}>
    <summary><h3 id="add-rule" class="inline-heading">Add a rule</h3></summary>
    <div class="form-grid">
      <${Field} id="rule-channel" label="Channel" error=${err("channelId")}>
        <select id="rule-channel" value=${f.channelId} onChange=${(e) => setF({ ...f, channelId: e.target.value })}>
          ${channels.map((c) => html`<option value=${c.id}>${c.name}</option>`)}</select></${Field}>
      <${Field} id="rule-name" label="Name" error=${err("name")}>
        <input id="rule-name" value=${f.name} onInput=${(e) => setF({ ...f, name: e.target.value })} required /></${Field}>
    </div>
    <fieldset class=${err("events") ? "invalid" : ""}><legend>Events</legend>
      <p class="small">${CHANGES.map(box)}</p><p class="small">Hub notices: ${NOTICES.map(box)}</p>
      ${err("events") && html`<span class="field-error" role="alert">${err("events")}</span>`}</fieldset>
    <div class="form-grid">
      <${Field} id="rule-reasons" label="Only these reasons (optional)" error=${err("reasons")} hint="e.g. OOMKills, Cooldown">
        <input id="rule-reasons" value=${f.reasons} onInput=${(e) => setF({ ...f, reasons: e.target.value })} /></${Field}>
      <${Field} id="rule-clusters" label="Only clusters (optional)" error=${err("clusters")} hint="globs: prod-*">
        <input id="rule-clusters" value=${f.clusters} onInput=${(e) => setF({ ...f, clusters: e.target.value })} /></${Field}>
      <${Field} id="rule-namespaces" label="Only namespaces (optional)" error=${err("namespaces")} hint="globs: payments-*">
        <input id="rule-namespaces" value=${f.namespaces} onInput=${(e) => setF({ ...f, namespaces: e.target.value })} /></${Field}>
    </div>
    ${general && html`<${ErrorBox} error=${general} />`}
    <div class="actions"><button type="submit" class="primary" disabled=${st.busy}>${st.busy ? "Saving…" : "Add rule"}</button></div>
  </details></form>`;
}

export function DeliveryLog({ tick, channels }) {
  const [filter, setFilter] = useState({ status: "", channelId: "" });
  // Arrow keys on a select change it at each press: the log reloads once they stop.
  const applied = useDebounced(filter, 400);
  const [cursors, setCursors] = useState([]);
  const next = cursors[cursors.length - 1] ?? null;
  useEffect(() => setCursors([]), [tick, applied.status, applied.channelId]);
  const res = useApi((signal) => get("/v1/notifications/deliveries", { ...applied, limit: 50, next }, { signal }), [tick, applied.status, applied.channelId, next]);
  return html`<section aria-labelledby="log-head">
    <div class="page-head"><h2 id="log-head">Delivery log</h2><button type="button" class="small" onClick=${res.reload}>Refresh</button></div>
    <div class="filters">
      <label class="filter">Status<select value=${filter.status} onChange=${(e) => setFilter({ ...filter, status: e.target.value })}>
        <option value="">any</option><option value="failed">failed</option><option value="pending">pending</option><option value="delivered">delivered</option></select></label>
      <label class="filter">Channel<select value=${filter.channelId} onChange=${(e) => setFilter({ ...filter, channelId: e.target.value })}>
        <option value="">any</option>${channels.map((c) => html`<option value=${c.id}>${c.name}</option>`)}</select></label>
    </div>
    <${Async} res=${res} what="the delivery log">${(page) => page.items.length === 0
      ? html`<${Empty}><p>Nothing sent${filter.status || filter.channelId ? " that matches" : " yet"}.</p></${Empty}>`
      : html`<div class="table-wrap"><table class="delivery-log">
        <thead><tr><th>Created</th><th>Channel</th><th>Kind</th><th>Message</th><th>Status</th><th class="num">Attempts</th><th>Last answer</th></tr></thead>
        <tbody>${page.items.map((d) => html`<tr key=${d.id} class=${d.status === "failed" ? "failed" : ""}>
          <td class="small">${fmt.time(d.createdAt)}</td>
          <td>${d.channelName}</td>
          <td><${Badge}>${d.kind}</${Badge}></td>
          <td>${d.title}${d.eventIds.length > 0 && html` <span class="muted small">(${d.eventIds.length} event${d.eventIds.length === 1 ? "" : "s"})</span>`}</td>
          <td><${Badge} kind=${STATUS_KIND[d.status] ?? ""}>${d.status}</${Badge}>
            ${d.status === "pending" && d.nextAttemptAt && html`<div class="muted small">next try ${fmt.time(d.nextAttemptAt)}</div>`}</td>
          <td class="num">${d.attempts}</td>
          <td class="small">${d.lastStatus !== null && html`<code>${d.lastStatus}</code> `}${d.lastError && html`<span class="bad">${d.lastError}</span>`}
            ${d.deliveredAt && html`<span class="muted">delivered ${fmt.ago(d.deliveredAt)}</span>`}</td>
        </tr>`)}</tbody></table></div>
        <${Pager} hasPrev=${cursors.length > 0} next=${page.next} label="Delivery log pages"
          onPrev=${() => setCursors(cursors.slice(0, -1))} onNext=${() => setCursors([...cursors, page.next])} />`}
    </${Async}>
  </section>`;
}

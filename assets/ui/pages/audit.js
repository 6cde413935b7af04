// The audit: workload events from the agents and configuration changes made through the
// API, each filtered, paginated and exportable as CSV. The URL holds tab, filters, page.
import { html, useState, useEffect } from "../lib.js";
import { get, getAll } from "../api.js";
import { useApi, Async, Empty, Pager, Tabs, Badge, ErrorBox } from "../components.js";
import { setQuery } from "../router.js";
import { toCsv, download } from "../csv.js";
import * as fmt from "../format.js";
import { typeWords, Code, changedText, localTimes, reasonWords } from "../words.js";

const EVENT_TYPES = ["applied", "skipped", "blocked", "fallback", "rolled_back", "released", "failed"];
const TABS = {
  events: {
    label: "Workload events",
    path: "/v1/audit",
    filters: [["cluster", "Cluster"], ["namespace", "Namespace"], ["kind", "Kind"], ["name", "Name"], ["type", "Type", EVENT_TYPES], ["reason", "Reason"]],
    csv: [["time", (e) => e.time], ["cluster", (e) => e.cluster], ["namespace", (e) => e.workload.namespace], ["kind", (e) => e.workload.kind],
      ["name", (e) => e.workload.name], ["type", (e) => e.type], ["reason", (e) => e.reason], ["recommendationID", (e) => e.recommendationID],
      ["strategy", (e) => e.strategy], ["message", (e) => e.message], ["containers", (e) => e.containers], ["id", (e) => e.id]],
  },
  config: {
    label: "Configuration changes",
    path: "/v1/audit/config",
    filters: [["action", "Action"], ["targetType", "Target type"], ["targetId", "Target id"], ["actor", "Actor"], ["actorType", "Actor type", ["user", "token", "system"]]],
    csv: [["time", (c) => c.time], ["action", (c) => c.action], ["actor", (c) => c.actor?.name], ["actorType", (c) => c.actor?.type],
      ["teams", (c) => (c.actor?.teams ?? []).map((t) => t.name).join(" ")], ["targetType", (c) => c.target?.type], ["targetId", (c) => c.target?.id],
      ["targetName", (c) => c.target?.name], ["reason", (c) => c.reason], ["before", (c) => c.before], ["after", (c) => c.after], ["id", (c) => c.id]],
  },
};
const stacks = new Map();

function readFilters(tab, query) {
  const f = {};
  for (const [k] of [...TABS[tab].filters, ["since"], ["until"]]) f[k] = query.get(k) ?? "";
  return f;
}

export function AuditPage({ query }) {
  const tab = query.get("tab") === "config" ? "config" : "events";
  // Each trail is its own component, so one trail's rows never render as the other's.
  return html`<${AuditTrail} key=${tab} tab=${tab} query=${query} />`;
}

function AuditTrail({ tab, query }) {
  const def = TABS[tab];
  const filters = readFilters(tab, query);
  const cursor = query.get("cursor") ?? "";
  const key = `${tab}?${new URLSearchParams(filters)}`;
  const res = useApi((signal) => get(def.path, { ...filters, limit: 50, next: cursor }, { signal }), [key, cursor]);
  const stack = stacks.get(key) ?? [];
  const [exporting, setExporting] = useState(null);

  const exportCsv = async () => {
    setExporting({ busy: true });
    try {
      const { items, truncated } = await getAll(def.path, filters);
      download(`kerf-audit-${tab}-${new Date().toISOString().slice(0, 19).replace(/:/g, "")}.csv`, toCsv(def.csv, items));
      setExporting({ done: `${items.length} rows exported${truncated ? " (first 10,000 only; narrow the filters for more)" : ""}.` });
    } catch (e) {
      setExporting({ error: e });
    }
  };

  return html`<section>
    <div class="page-head"><h1>Audit</h1>
      <div class="actions"><button type="button" onClick=${exportCsv} disabled=${exporting?.busy}>${exporting?.busy ? "Exporting…" : "Export CSV"}</button>
      ${exporting?.done && html`<span class="small muted" role="status">${exporting.done}</span>`}</div>
    </div>
    ${exporting?.error && html`<${ErrorBox} error=${exporting.error} what="the export" />`}
    <${Tabs} label="Audit trails" current=${tab} tabs=${Object.entries(TABS).map(([id, t]) => ({ id, label: t.label }))}
      onSelect=${(id) => setQuery({ tab: id === "events" ? null : id, cursor: null, ...Object.fromEntries(Object.keys(filters).map((k) => [k, null])) })} />
    <${AuditFilters} key=${tab} def=${def} filters=${filters} />
    <div role="tabpanel" aria-labelledby=${`tab-${tab}`}>
      <${Async} res=${res} what=${def.label.toLowerCase()}>${(page) => page.items.length === 0
        ? html`<${Empty}><p><strong>No ${def.label.toLowerCase()} match.</strong></p><p class="muted">${Object.values(filters).some(Boolean) ? "Try wider filters." : tab === "events" ? "Agents have not reported any events yet." : "No configuration has been changed through the API yet."}</p></${Empty}>`
        : html`${tab === "events" ? html`<${EventsTable} items=${page.items} />` : html`<${ConfigTable} items=${page.items} />`}
          <${Pager} hasPrev=${Boolean(cursor)} next=${page.next} label="Audit pages"
            onPrev=${() => { const s = [...stack]; const p = s.pop(); stacks.set(key, s); setQuery({ cursor: p }); }}
            onNext=${() => { stacks.set(key, [...stack, cursor]); setQuery({ cursor: page.next }); }} />`}
      </${Async}>
    </div>
  </section>`;
}

const toLocalInput = (iso) => {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
};

function AuditFilters({ def, filters }) {
  const [f, setF] = useState(filters);
  useEffect(() => setF(filters), [JSON.stringify(filters)]);
  const submit = (e) => {
    e.preventDefault();
    const patch = { ...f, cursor: null };
    for (const k of ["since", "until"]) patch[k] = f[k] ? new Date(f[k]).toISOString() : null;
    setQuery(patch);
  };
  return html`<form class="filters" onSubmit=${submit} aria-label="Filter the audit">
    ${def.filters.map(([k, label, options]) => html`<label class="filter"><span>${label}</span>
      ${options
        ? html`<select value=${f[k]} onChange=${(e) => setF({ ...f, [k]: e.target.value })}><option value="">Any</option>${options.map((o) => html`<option value=${o}>${o}</option>`)}</select>`
        : html`<input value=${f[k]} onInput=${(e) => setF({ ...f, [k]: e.target.value })} />`}
    </label>`)}
    ${["since", "until"].map((k) => html`<label class="filter"><span>${k === "since" ? "From" : "Until"}</span>
      <input type="datetime-local" value=${toLocalInput(f[k])} onInput=${(e) => setF({ ...f, [k]: e.target.value })} /></label>`)}
    <div class="filter-actions"><button type="submit">Apply</button></div>
  </form>`;
}

function EventsTable({ items }) {
  return html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Time</th><th scope="col">Workload</th><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Message</th></tr></thead>
    <tbody>${items.map((e) => html`<tr key=${e.id}>
      <td><time datetime=${e.time}>${fmt.time(e.time)}</time></td>
      <td>${e.workload.name}<div class="small muted">${e.cluster} · ${e.workload.namespace} · ${e.workload.kind}</div></td>
      <td><${Badge} kind=${e.type === "applied" ? "ok" : e.type === "failed" || e.type === "rolled_back" ? "bad" : ""} title=${e.type}>${typeWords(e.type)}</${Badge}></td>
      <td><${Code} code=${e.reason} words=${reasonWords} /></td>
      <td class="small">${localTimes(e.message)}${(e.containers ?? []).length > 0 && html`<div>${changedText(e.containers)}</div>`}</td>
    </tr>`)}</tbody></table></div>`;
}

function ConfigTable({ items }) {
  return html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Time</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Target</th><th scope="col">Reason</th><th scope="col">Change</th></tr></thead>
    <tbody>${items.map((c, i) => html`<tr key=${c.id ?? i}>
      <td><time datetime=${c.time}>${fmt.time(c.time)}</time></td>
      <td><strong>${c.action}</strong></td>
      <td>${c.actor?.name} <span class="small muted">${c.actor?.type}</span>${(c.actor?.teams ?? []).map((t) => html` <${Badge}>team ${t.name}</${Badge}>`)}</td>
      <td>${c.target?.type} <code>${c.target?.name ?? c.target?.id}</code></td>
      <td class="small">${c.reason ?? html`<span class="muted">—</span>`}</td>
      <td><details><summary>before / after</summary><div class="diff">
        <pre class="json">${JSON.stringify(c.before ?? null, null, 2)}</pre><pre class="json">${JSON.stringify(c.after ?? null, null, 2)}</pre></div></details></td>
    </tr>`)}</tbody></table></div>`;
}

// Workloads: server-side filtered, sorted, cursor-paginated, each with its current →
// recommended requests (and limits where set) and the monthly cost change; totals of the
// filter, grouped by namespace or team on demand; the filter's recommendations exported
// as CSV, JSON or YAML. The URL holds the view; typing and selecting apply after a pause.
import { html, useState, useEffect } from "../lib.js";
import { get, fetchFile, saveBlob } from "../api.js";
import { useApi, Async, Empty, Pager, QualityBadge, Badge, ErrorBox, useDebounced, useCurrency } from "../components.js";
import { setQuery } from "../router.js";
import * as fmt from "../format.js";
import { appliedBy } from "../words.js";

const FILTERS = ["cluster", "namespace", "name", "kind", "q", "dataQuality", "notice", "hasRecommendation", "stale", "risk"];
const VIEW = [...FILTERS, "sort", "order"];
const NOTICES = ["oom-kill-detected", "potential-memory-leak", "previous-release-usage"];
const KINDS = ["Deployment", "StatefulSet", "DaemonSet", "Rollout", "CronJob", "Job", "ReplicaSet"];
const SORTS = [["", "name"], ["savings", "saving (biggest first)"], ["impact", "size of the change"], ["risk", "risk reduced"], ["confidence", "confidence"]];
const RISKS = { "oom-kill": "prevents OOM kills", "memory-leak": "memory leak", "under-provisioned": "under-provisioned" };
const PAGE = 50;
// Cursors of the pages before the current one, per filter set (for "Previous").
const stacks = new Map();

const pick = (query, keys) => Object.fromEntries(keys.map((k) => [k, query.get(k) ?? ""]));

export function WorkloadsPage({ query }) {
  const params = pick(query, VIEW);
  const filters = pick(query, FILTERS);
  const group = query.get("group") ?? "";
  const cursor = query.get("cursor") ?? "";
  const key = new URLSearchParams(params).toString();
  const fkey = new URLSearchParams(filters).toString();
  const res = useApi((signal) => get("/v1/workloads", { ...params, limit: PAGE, next: cursor }, { signal }), [key, cursor]);
  const totals = useApi((signal) => get("/v1/workloads/summary", { ...filters, by: group || undefined }, { signal }), [fkey, group]);
  const clusters = useApi((signal) => get("/v1/workloads/summary", { by: "cluster" }, { signal }).then((s) => s.groups.map((g) => g.cluster)).catch(() => []), []);
  const currency = useCurrency();

  const stack = stacks.get(key) ?? [];
  const onNext = () => { stacks.set(key, [...stack, cursor]); setQuery({ cursor: res.data.next }); };
  const onPrev = () => { const s = [...stack]; const prev = s.pop(); stacks.set(key, s); setQuery({ cursor: prev }); };

  return html`<section>
    <div class="page-head"><h1>Workloads</h1><${Export} filters=${filters} sort=${params} /></div>
    <${Filters} params=${{ ...params, group }} clusters=${clusters.data ?? []} />
    <${Totals} res=${totals} currency=${currency} />
    ${group
      ? html`<${Groups} res=${totals} group=${group} currency=${currency} filters=${filters} />`
      : html`<${Async} res=${res} what="workloads">${(page) => page.items.length === 0
        ? html`<${Empty}>
            <p><strong>No workloads match.</strong></p>
            <p class="muted">${Object.values(params).some(Boolean) ? "Loosen the filters, or " : "Workloads appear after the first recommendation run of a cluster. "}
            <a href="/workloads">clear all filters</a>.</p>
          </${Empty}>`
        : html`<${Table} items=${page.items} currency=${currency} loading=${res.loading} />
          <${Pager} hasPrev=${Boolean(cursor)} next=${page.next} onPrev=${onPrev} onNext=${onNext} label="Workload pages" />`}
      </${Async}>`}
  </section>`;
}

function Filters({ params, clusters }) {
  const [draft, setDraft] = useState(params);
  const external = JSON.stringify(params);
  useEffect(() => setDraft(params), [external]);
  const pending = useDebounced(draft, 400);
  useEffect(() => {
    const patch = Object.fromEntries(Object.entries(pending).filter(([k, v]) => (params[k] ?? "") !== v));
    if (Object.keys(patch).length) setQuery({ ...patch, cursor: null }, { replace: true });
  }, [pending]);
  const set = (name) => (e) => setDraft({ ...draft, [name]: e.target.value });
  const onSubmit = (e) => { e.preventDefault(); setQuery({ ...draft, cursor: null }); };
  const sel = (name, label, options) => html`<label class="filter">
      <span>${label}</span>
      <select name=${name} value=${draft[name]} onChange=${set(name)}>
        ${options.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
      </select>
    </label>`;
  const text = (name, label, hint, grow) => html`<label class=${`filter${grow ? " grow" : ""}`}><span>${label}</span>
      <input type="search" name=${name} value=${draft[name]} placeholder=${hint} onInput=${set(name)} />
    </label>`;
  return html`<form class="filters" onSubmit=${onSubmit} aria-label="Filter workloads">
    ${text("q", "Search name", "name contains…", true)}
    ${text("name", "Name", "prefix or glob: api-*")}
    ${text("namespace", "Namespace", "prefix or glob: shop*")}
    ${sel("cluster", "Cluster", [["", "All clusters"], ...clusters.map((c) => [c, c])])}
    ${sel("kind", "Kind", [["", "All kinds"], ...KINDS.map((k) => [k, k])])}
    ${sel("hasRecommendation", "Recommendation", [["", "Any"], ["true", "suggests a change"], ["false", "no change"]])}
    ${sel("risk", "Risk", [["", "Any"], ["true", "reduces a risk"], ["false", "no risk reduced"]])}
    ${sel("dataQuality", "Data quality", [["", "Any"], ["available", "available"], ["partial", "partial"], ["unavailable", "unavailable"]])}
    ${sel("notice", "Notice", [["", "Any"], ...NOTICES.map((n) => [n, fmt.words(n)])])}
    ${sel("stale", "Stale", [["", "Any"], ["true", "stale"], ["false", "fresh"]])}
    ${sel("sort", "Sort by", SORTS)}
    ${sel("order", "Order", [["", "default"], ["asc", "ascending"], ["desc", "descending"]])}
    ${sel("group", "Group by", [["", "nothing"], ["namespace", "namespace"], ["team", "team"]])}
    <div class="filter-actions">
      <button type="submit">Apply</button>
      <a class="button" href="/workloads">Clear</a>
    </div>
  </form>`;
}

/** Savings, extra spend and net of what the filter matches. */
function Totals({ res, currency }) {
  if (res.error) return html`<${ErrorBox} error=${res.error} retry=${res.reload} what="the totals" />`;
  const s = res.data;
  if (!s) return null;
  const t = s.total;
  return html`<p class="totals" role="status" aria-live="polite">
    <strong>${fmt.count(t.workloads, "workload")}</strong>, ${t.withChanges} suggest a change, ${fmt.count(t.riskReductions, "reduces a risk", "reduce a risk")} ·
    <span class="ok">saves ${fmt.money(t.monthlySavings, currency)}</span> · <span class="bad">costs ${fmt.money(t.monthlyExtraSpend, currency)} more</span> ·
    net <strong class=${t.monthlyNet <= 0 ? "ok" : "bad"}>${fmt.signedMoney(t.monthlyNet, currency)}</strong>
    ${t.workloadsWithoutEstimate > 0 && html` · <span class="muted" data-testid="no-estimate">${fmt.count(t.workloadsWithoutEstimate, "workload has", "workloads have")} no estimate</span>`}
    <span class="small muted"> (estimated from the ${s.basis} at ${s.hoursPerMonth} h a month)</span>
  </p>`;
}

function Groups({ res, group, currency, filters }) {
  return html`<${Async} res=${res} what="the totals">${(s) => s.groups.length === 0
    ? html`<${Empty}><p><strong>Nothing to group.</strong></p></${Empty}>`
    : html`<div class="table-wrap"><table class="groups">
      <caption class="small muted">${group === "team" ? "Per team (a workload in several teams' namespaces counts in each; \"no team\" holds the rest)" : "Per namespace"}</caption>
      <thead><tr><th scope="col">${group === "team" ? "Team" : "Namespace"}</th><th scope="col" class="num">Workloads</th><th scope="col" class="num">Suggest a change</th>
        <th scope="col" class="num">Saves</th><th scope="col" class="num">Costs more</th><th scope="col" class="num">Net / month</th></tr></thead>
      <tbody>${s.groups.map((g) => {
        const q = group === "namespace" ? new URLSearchParams({ ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v)), cluster: g.cluster, namespace: g.namespace }) : null;
        const label = group === "team" ? (g.team ?? "no team") : `${g.cluster} / ${g.namespace}`;
        return html`<tr>
          <th scope="row">${q ? html`<a href=${`/workloads?${q}`}>${label}</a>` : label}</th>
          <td class="num">${g.workloads}</td><td class="num">${g.withChanges}</td>
          <td class="num ok">${fmt.money(g.monthlySavings, currency)}</td><td class="num bad">${fmt.money(g.monthlyExtraSpend, currency)}</td>
          <td class=${`num ${g.monthlyNet <= 0 ? "ok" : "bad"}`}>${fmt.signedMoney(g.monthlyNet, currency)}</td></tr>`;
      })}</tbody>
    </table></div>`}</${Async}>`;
}

/** The filter's current recommendations as a file (the API's team scope applies). */
function Export({ filters, sort }) {
  const [st, setSt] = useState(null);
  const run = async (format) => {
    setSt({ busy: format });
    try {
      const q = Object.fromEntries(Object.entries({ ...filters, sort: sort.sort, order: sort.order }).filter(([, v]) => v));
      const { blob, name } = await fetchFile("/v1/recommendations", { ...q, format });
      saveBlob(blob, name);
      setSt({ done: `Saved ${name} (${fmt.bytes(blob.size)}).` });
    } catch (e) { setSt({ error: e }); }
  };
  return html`<div class="export">
    <div class="actions" role="group" aria-label="Export the recommendations of this filter">
      <span class="small muted">Export:</span>
      ${["csv", "json", "yaml"].map((f) => html`<button type="button" class="small" disabled=${Boolean(st?.busy)} onClick=${() => run(f)}>${st?.busy === f ? "Exporting…" : f.toUpperCase()}</button>`)}
      <span class="small muted" role="status">${st?.done ?? ""}</span>
    </div>
    ${st?.error && html`<${ErrorBox} error=${st.error} what="the export" />`}
  </div>`;
}

function FromTo({ s, resource }) {
  const q = (v) => fmt.quantity(resource, v);
  if (s.known === false) return html`<span class="muted">unknown</span>`;
  const now = s.current === null || s.current === undefined ? "not set" : q(s.current);
  if (s.recommended === null || s.recommended === undefined) return html`<span>${now}</span>`;
  return html`<span class="from">${now}</span> → <strong class="to">${q(s.recommended)}</strong>`;
}

/** One resource of every container: the request, and the limit when set or recommended. */
function Values({ resources, resource }) {
  if (!resources || resources.length === 0) return html`<span class="muted">—</span>`;
  return resources.map((c) => {
    const p = c[resource];
    const limit = p.limit.current != null || p.limit.recommended != null;
    return html`<div class="values">
      ${resources.length > 1 && html`<span class="muted small">${c.name}${c.role ? ` (${c.role === "init" ? "init" : "sidecar"})` : ""}: </span>`}<${FromTo} s=${p.request} resource=${resource} />
      ${limit && html`<div class="small muted">limit <${FromTo} s=${p.limit} resource=${resource} /></div>`}
    </div>`;
  });
}

/** Who applied a live change, and how, for a tooltip. */
function appliedTitle(a) {
  return `${fmt.time(a.at)}: ${appliedBy(a)}, ${a.strategy}${a.afterRecommendation ? "; the values shown are from before it, until the next run" : ""}`;
}

function Table({ items, currency, loading }) {
  return html`<div class=${`table-wrap${loading ? " busy" : ""}`}>
    <table class="workloads" aria-busy=${loading ? "true" : "false"}>
      <thead><tr>
        <th scope="col">Workload</th><th scope="col">CPU request</th><th scope="col">Memory request</th>
        <th scope="col" class="num" title="Estimated monthly cost change if applied; negative saves">Cost / month</th>
        <th scope="col" class="num">Confidence</th><th scope="col">Notices</th><th scope="col" class="opt">Data quality</th>
      </tr></thead>
      <tbody>${items.map((w) => html`<tr key=${w.id}>
        <td><a href=${`/workloads/${encodeURIComponent(w.id)}`}>${w.name}</a>
          <div class="muted small">${w.namespace} · ${w.kind} · ${w.cluster}${w.replicas != null ? ` · ${fmt.count(w.replicas, "replica")}` : ""}</div></td>
        <td class="vals"><${Values} resources=${w.resources} resource="cpu" /></td>
        <td class="vals"><${Values} resources=${w.resources} resource="memory" /></td>
        <td class=${`num cost ${w.estimatedMonthlyCostDelta < 0 ? "ok" : w.estimatedMonthlyCostDelta > 0 ? "bad" : ""}`}>
          ${w.hasRecommendation ? fmt.signedMoney(w.estimatedMonthlyCostDelta, currency) : html`<span class="muted">no change</span>`}
          ${w.applied && html`<div class="small applied" title=${appliedTitle(w.applied)}>applied ${fmt.ago(w.applied.at)}${w.applied.realizedMonthly > 0 ? `, saves ${fmt.money(w.applied.realizedMonthly, currency)}` : ""}</div>`}</td>
        <td class="num">${w.confidence ?? "—"}</td>
        <td>${w.risk && html`<${Badge} kind="bad">${RISKS[w.risk] ?? fmt.words(w.risk)}</${Badge}> `}${w.notices.filter((n) => !(w.risk === "memory-leak" && n === "potential-memory-leak") && !(w.risk === "oom-kill" && n === "oom-kill-detected")).map((n) => html`<${Badge} kind=${n === "oom-kill-detected" ? "bad" : "warn"}>${fmt.words(n)}</${Badge}> `)}${!w.risk && w.notices.length === 0 && html`<span class="muted">—</span>`}</td>
        <td class="opt"><${QualityBadge} status=${w.dataQuality} />${w.stale && html` <${Badge} kind="warn" title=${w.staleReason ?? ""}>stale</${Badge}>`}</td>
      </tr>`)}</tbody>
    </table>
  </div>`;
}

// Workloads: server-side filtered, sorted, cursor-paginated; the URL holds the view.
import { html, useState, useEffect } from "../lib.js";
import { get } from "../api.js";
import { useApi, Async, Empty, Pager, QualityBadge, Badge } from "../components.js";
import { setQuery } from "../router.js";
import * as fmt from "../format.js";

const FILTERS = ["cluster", "namespace", "kind", "q", "dataQuality", "notice", "hasRecommendation", "stale", "sort", "order"];
const NOTICES = ["oom-kill-detected", "potential-memory-leak", "previous-release-usage"];
const KINDS = ["Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job", "Rollout"];
const PAGE = 50;
// Cursors of the pages before the current one, per filter set (for "Previous").
const stacks = new Map();

function viewKey(query) {
  return FILTERS.map((k) => `${k}=${query.get(k) ?? ""}`).join("&");
}

export function WorkloadsPage({ query }) {
  const params = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ""]));
  const cursor = query.get("cursor") ?? "";
  const key = viewKey(query);
  const res = useApi((signal) => get("/v1/workloads", { ...params, limit: PAGE, next: cursor }, { signal }), [key, cursor]);
  const clusters = useApi((signal) => get("/v1/savings", {}, { signal }).then((s) => s.clusters.map((c) => c.cluster)).catch(() => []), []);
  const currency = useApi((signal) => get("/v1/savings", {}, { signal }).then((s) => s.currency).catch(() => "USD"), []);

  const stack = stacks.get(key) ?? [];
  const onNext = () => { stacks.set(key, [...stack, cursor]); setQuery({ cursor: res.data.next }); };
  const onPrev = () => { const s = [...stack]; const prev = s.pop(); stacks.set(key, s); setQuery({ cursor: prev }); };

  return html`<section>
    <div class="page-head"><h1>Workloads</h1></div>
    <${Filters} params=${params} clusters=${clusters.data ?? []} />
    <${Async} res=${res} what="workloads">${(page) => page.items.length === 0
      ? html`<${Empty}>
          <p><strong>No workloads match.</strong></p>
          <p class="muted">${Object.values(params).some(Boolean) ? "Loosen the filters, or " : "Workloads appear after the first recommendation run of a cluster. "}
          <a href="/workloads">clear all filters</a>.</p>
        </${Empty}>`
      : html`<${Table} items=${page.items} currency=${currency.data ?? "USD"} loading=${res.loading} />
        <${Pager} hasPrev=${Boolean(cursor)} next=${page.next} onPrev=${onPrev} onNext=${onNext} label="Workload pages" />`}
    </${Async}>
  </section>`;
}

function Filters({ params, clusters }) {
  const [text, setText] = useState({ q: params.q, namespace: params.namespace });
  useEffect(() => setText({ q: params.q, namespace: params.namespace }), [params.q, params.namespace]);
  const apply = (patch) => setQuery({ ...patch, cursor: null });
  const onSubmit = (e) => { e.preventDefault(); apply(text); };
  const sel = (name, label, options) => html`<label class="filter">
      <span>${label}</span>
      <select name=${name} value=${params[name]} onChange=${(e) => apply({ [name]: e.target.value })}>
        ${options.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
      </select>
    </label>`;
  return html`<form class="filters" onSubmit=${onSubmit} aria-label="Filter workloads">
    <label class="filter grow"><span>Search name</span>
      <input type="search" name="q" value=${text.q} placeholder="name contains…" onInput=${(e) => setText({ ...text, q: e.target.value })} />
    </label>
    ${sel("cluster", "Cluster", [["", "All clusters"], ...clusters.map((c) => [c, c])])}
    <label class="filter"><span>Namespace</span>
      <input name="namespace" value=${text.namespace} onInput=${(e) => setText({ ...text, namespace: e.target.value })} />
    </label>
    ${sel("kind", "Kind", [["", "All kinds"], ...KINDS.map((k) => [k, k])])}
    ${sel("dataQuality", "Data quality", [["", "Any"], ["available", "available"], ["partial", "partial"], ["unavailable", "unavailable"]])}
    ${sel("notice", "Notice", [["", "Any"], ...NOTICES.map((n) => [n, fmt.words(n)])])}
    ${sel("hasRecommendation", "Recommendation", [["", "Any"], ["true", "suggests a change"], ["false", "no change"]])}
    ${sel("stale", "Stale", [["", "Any"], ["true", "stale"], ["false", "fresh"]])}
    ${sel("sort", "Sort by", [["", "name"], ["savings", "savings"], ["confidence", "confidence"]])}
    ${sel("order", "Order", [["", "default"], ["asc", "ascending"], ["desc", "descending"]])}
    <div class="filter-actions">
      <button type="submit">Apply</button>
      <a class="button" href="/workloads">Clear</a>
    </div>
  </form>`;
}

function Table({ items, currency, loading }) {
  return html`<div class=${`table-wrap${loading ? " busy" : ""}`}>
    <table class="workloads" aria-busy=${loading ? "true" : "false"}>
      <thead><tr>
        <th scope="col">Workload</th><th scope="col" class="opt">Cluster</th><th scope="col" class="num opt">Replicas</th>
        <th scope="col">Data quality</th><th scope="col" class="num">Confidence</th><th scope="col">Notices</th>
        <th scope="col" class="num" title="Estimated monthly cost change if applied; negative saves">Cost / month</th>
      </tr></thead>
      <tbody>${items.map((w) => html`<tr key=${w.id}>
        <td><a href=${`/workloads/${encodeURIComponent(w.id)}`}>${w.name}</a>
          <div class="muted small">${w.namespace} · ${w.kind}<span class="narrow-only"> · ${w.cluster}</span></div></td>
        <td class="opt">${w.cluster}</td>
        <td class="num opt">${w.replicas ?? "—"}</td>
        <td><${QualityBadge} status=${w.dataQuality} />${w.stale && html` <${Badge} kind="warn" title=${w.staleReason ?? ""}>stale</${Badge}>`}</td>
        <td class="num">${w.confidence ?? "—"}</td>
        <td>${w.notices.length ? w.notices.map((n) => html`<${Badge} kind=${n === "potential-memory-leak" || n === "oom-kill-detected" ? "bad" : ""}>${fmt.words(n)}</${Badge}> `) : html`<span class="muted">—</span>`}</td>
        <td class=${`num ${w.estimatedMonthlyCostDelta < 0 ? "ok" : w.estimatedMonthlyCostDelta > 0 ? "bad" : ""}`}>
          ${w.hasRecommendation ? fmt.signedMoney(w.estimatedMonthlyCostDelta, currency) : html`<span class="muted">none</span>`}</td>
      </tr>`)}</tbody>
    </table>
  </div>`;
}

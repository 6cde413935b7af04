// A workload's history: its recommendations over time, its workload events from the
// audit trail, and (when the hub serves it) the merged timeline with config changes.
import { html } from "../lib.js";
import { get } from "../api.js";
import { useApi, Async, Empty, QualityBadge, Badge, ErrorBox } from "../components.js";
import * as fmt from "../format.js";

export function WorkloadHistory({ w }) {
  const recs = useApi((signal) => get(`/v1/workloads/${encodeURIComponent(w.id)}/recommendations`, { limit: 20 }, { signal }), [w.id]);
  const events = useApi((signal) => get("/v1/audit", { cluster: w.cluster, namespace: w.namespace, kind: w.kind, name: w.name, limit: 20 }, { signal }), [w.id]);
  const merged = useApi((signal) => get(`/v1/workloads/${encodeURIComponent(w.id)}/history`, {}, { signal }), [w.id]);
  return html`<section class="card history">
    <h2>History</h2>
    <h3>Recommendations</h3>
    <${Async} res=${recs} what="the recommendation history">${(page) => page.items.length === 0
      ? html`<${Empty}><p>No recommendations stored yet.</p></${Empty}>`
      : html`<table class="compact"><thead><tr><th scope="col">Made</th><th scope="col">Data quality</th><th scope="col" class="num">Confidence</th><th scope="col">Notices</th><th scope="col" class="num">Monthly cost change</th></tr></thead>
          <tbody>${page.items.map((r) => html`<tr key=${r.id}>
            <td>${fmt.time(r.createdAt)}</td>
            <td><${QualityBadge} status=${r.summary?.dataQuality} /></td>
            <td class="num">${r.summary?.confidence ?? "—"}</td>
            <td>${(r.summary?.notices ?? []).map((n) => html`<${Badge}>${fmt.words(n)}</${Badge}> `)}</td>
            <td class="num">${fmt.delta(r.estimatedMonthlyCostDelta)}</td>
          </tr>`)}</tbody></table>`}
    </${Async}>
    <h3>Events from the cluster</h3>
    <${Async} res=${events} what="workload events">${(page) => page.items.length === 0
      ? html`<${Empty}><p>No events yet: the agent has not applied, skipped or blocked anything for this workload.</p></${Empty}>`
      : html`<ol class="timeline">${page.items.map((e) => html`<li key=${e.id}>
          <time datetime=${e.time}>${fmt.time(e.time)}</time> <${Badge} kind=${e.type === "applied" ? "ok" : e.type === "failed" || e.type === "rolled_back" ? "bad" : ""}>${e.type}</${Badge}>
          <strong>${e.reason}</strong> ${e.message ?? ""}</li>`)}</ol>
          <p class="small"><a href=${`/audit?tab=events&cluster=${encodeURIComponent(w.cluster)}&namespace=${encodeURIComponent(w.namespace)}&kind=${encodeURIComponent(w.kind)}&name=${encodeURIComponent(w.name)}`}>All events in the audit</a></p>`}
    </${Async}>
    <h3>Timeline with configuration changes</h3>
    ${merged.error ? html`<${ErrorBox} error=${merged.error} retry=${merged.reload} what="the merged timeline" />`
      : merged.data ? html`<pre class="json">${JSON.stringify(merged.data, null, 2)}</pre>` : html`<p class="muted">Loading…</p>`}
  </section>`;
}

// The clusters' own RightsizingPolicy objects (policy as code), read-only: the list beside
// the hub's policies and one object's page. They are changed in Git (kubectl apply), and
// govern their cluster's workloads ahead of the hub's policies and overrides; an invalid
// generation changes nothing, and the page says which generation is in force and why.
import { html } from "../lib.js";
import { get } from "../api.js";
import { useApi, Async, Badge } from "../components.js";
import { PolicyDoc } from "../policyview.js";
import * as fmt from "../format.js";

/** Where one cluster policy's page is. */
export const clusterPolicyHref = (id) => `/policies/cluster-${id}`;

/** The state of an object: in force, invalid with an older generation in force, or never valid. */
export function StateBadge({ p }) {
  if (p.errors.length === 0) return html`<${Badge} kind="ok">in force</${Badge}>`;
  if (p.acceptedGeneration == null) return html`<${Badge} kind="bad" title="No generation of it was ever valid">invalid: not in force</${Badge}>`;
  return html`<${Badge} kind="warn" title=${`Generation ${p.generation} is invalid`}>invalid: generation ${p.acceptedGeneration} in force</${Badge}>`;
}

const READ_ONLY = html`Read-only here: these live in the clusters as <code>RightsizingPolicy</code> objects (from Git, <code>kubectl apply</code>). For their cluster's workloads they come before the hub's policies and overrides.`;

/** The section of the policies list: nothing when no cluster has any. */
export function ClusterPolicyList({ modeText, selectorText }) {
  const res = useApi((signal) => get("/v1/cluster-policies", {}, { signal }), []);
  if (res.data && (res.data.items ?? []).length === 0) return null;
  return html`<section class="cluster-policies" aria-labelledby="cluster-policies-h">
    <h2 id="cluster-policies-h">From the clusters</h2>
    <p class="small muted">${READ_ONLY}</p>
    <${Async} res=${res} what="the clusters' policies">${(page) => html`<div class="table-wrap"><table class="policies cluster"><thead><tr>
        <th scope="col">Name</th><th scope="col">Cluster</th><th scope="col" class="num">Priority</th><th scope="col">Mode</th><th scope="col">Selects</th><th scope="col">State</th><th scope="col">Updated</th></tr></thead>
      <tbody>${page.items.map((p) => html`<tr key=${p.id}>
        <td><a href=${clusterPolicyHref(p.id)}>${p.name}</a> <${Badge} kind="muted">from the cluster</${Badge}>
          ${p.spec?.description && html`<br /><span class="small muted">${p.spec.description}</span>`}</td>
        <td>${p.cluster}</td>
        <td class="num">${p.spec?.priority ?? 0}</td>
        <td>${p.spec ? modeText(p.spec.mode) : "—"}</td>
        <td class="small">${p.spec ? selectorText(p.spec.selector) : "—"}</td>
        <td><${StateBadge} p=${p} /></td>
        <td>${fmt.time(p.updatedAt)}</td>
      </tr>`)}</tbody></table></div>`}</${Async}>
  </section>`;
}

/** One object's page. */
export function ClusterPolicyDetail({ id }) {
  const res = useApi((signal) => get("/v1/cluster-policies", {}, { signal }), [id]);
  const found = res.data?.items?.find((p) => String(p.id) === id);
  return html`<section>
    <nav class="crumbs" aria-label="Breadcrumb"><a href="/policies">Policies</a> › ${found?.name ?? id}</nav>
    <${Async} res=${res} what="this cluster policy">${() => (found ? html`<${Body} p=${found} />`
      : html`<div class="state error" role="alert"><strong>No such cluster policy.</strong><p class="msg">It may have been deleted from its cluster.</p></div>`)}</${Async}>
  </section>`;
}

function Body({ p }) {
  return html`
    <div class="page-head"><h1>${p.name} <span class="muted small">from cluster ${p.cluster}</span></h1>
      <div class="head-badges"><${StateBadge} p=${p} /></div></div>
    <p class="small">${READ_ONLY}</p>
    ${p.errors.length > 0 && html`<div class="state error" role="alert">
      <strong>Generation ${p.generation} is invalid, so it changes nothing.</strong>
      <p class="msg">${p.acceptedGeneration == null ? "No generation of it was ever valid: it governs no workload until it is fixed." : `Generation ${p.acceptedGeneration} stays in force until it is fixed.`} The object's status and a Warning Event say the same (<code>kubectl describe rightsizingpolicy ${p.name}</code>).</p>
      <ul class="errors">${p.errors.map((e) => html`<li key=${e.path}><code>${e.path}</code>: ${e.message}</li>`)}</ul>
    </div>`}
    ${p.spec && html`<div class="card"><h2>In force: generation ${p.acceptedGeneration}</h2><${PolicyDoc} spec=${p.spec} /></div>`}
    <p class="small muted">uid ${p.uid} · first reported ${fmt.time(p.createdAt)} · updated ${fmt.time(p.updatedAt)}</p>`;
}

// Policies and Clusters. The fleet-configuration API is not built yet; these pages ask
// the hub and, on its 404, say so instead of showing made-up data.
import { html } from "../lib.js";
import { get } from "../api.js";
import { useApi, Async, Empty } from "../components.js";
import * as fmt from "../format.js";

export function PoliciesPage() {
  const res = useApi((signal) => get("/v1/policies", {}, { signal }), []);
  return html`<section>
    <div class="page-head"><h1>Policies</h1></div>
    <${Async} res=${res} what="policies">${(page) => (page.items ?? []).length === 0
      ? html`<${Empty}><p><strong>No policies yet.</strong> Every workload uses the default analysis policy from Settings.</p></${Empty}>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Name</th><th scope="col">Priority</th><th scope="col">Updated</th></tr></thead>
          <tbody>${page.items.map((p) => html`<tr key=${p.id}><td>${p.name ?? p.id}</td><td>${p.priority ?? "—"}</td><td>${fmt.time(p.updatedAt)}</td></tr>`)}</tbody></table></div>`}
    </${Async}>
  </section>`;
}

export function ClustersPage() {
  const res = useApi((signal) => get("/v1/clusters", {}, { signal }), []);
  return html`<section>
    <div class="page-head"><h1>Clusters</h1></div>
    <${Async} res=${res} what="cluster management">${(page) => (page.items ?? []).length === 0
      ? html`<${Empty}><p><strong>No clusters registered.</strong></p></${Empty}>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Cluster</th><th scope="col">Created</th></tr></thead>
          <tbody>${page.items.map((c) => html`<tr key=${c.name}><td>${c.name}</td><td>${fmt.time(c.createdAt)}</td></tr>`)}</tbody></table></div>`}
    </${Async}>
  </section>`;
}

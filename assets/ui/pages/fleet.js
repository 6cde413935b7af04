// Policies. The policies API is not on this hub yet; the page asks and, on its 404, says
// so instead of showing made-up data.
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

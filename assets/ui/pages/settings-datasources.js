// Datasources (admin): the list and a "test connection" per datasource that shows what
// the hub found missing. Secrets are write-only in the API and never shown here.
import { html, useState } from "../lib.js";
import { get, post } from "../api.js";
import { useApi, Async, Empty, ErrorBox, Badge } from "../components.js";

export function DatasourceSettings() {
  const res = useApi((signal) => get("/v1/datasources", {}, { signal }), []);
  return html`<h2>Datasources</h2>
    <${Async} res=${res} what="datasources">${(page) => (page.items ?? []).length === 0
      ? html`<${Empty}><p><strong>No datasources yet.</strong> A cluster needs one Prometheus-compatible datasource for its runs.</p></${Empty}>`
      : html`<ul class="plain">${page.items.map((d) => html`<li key=${d.id}><${Datasource} d=${d} /></li>`)}</ul>`}
    </${Async}>`;
}

function Datasource({ d }) {
  const [test, setTest] = useState(null);
  const run = async () => {
    setTest({ busy: true });
    try { setTest({ result: await post(`/v1/datasources/${encodeURIComponent(d.id)}/test`) }); }
    catch (e) { setTest({ error: e }); }
  };
  const r = test?.result;
  const missing = r?.missing ?? r?.missingMetrics ?? [];
  return html`<div class="card inner">
    <p><strong>${d.name ?? d.id}</strong> <span class="muted">${d.type}</span> <code>${d.url ?? d.settings?.url ?? ""}</code></p>
    <button type="button" class="small" onClick=${run} disabled=${test?.busy}>${test?.busy ? "Testing…" : "Test connection"}</button>
    ${test?.error && html`<${ErrorBox} error=${test.error} what="the connection test" />`}
    ${r && html`<div class="test-result" role="status">
      <${Badge} kind=${r.ok === false || missing.length ? "bad" : "ok"}>${r.ok === false || missing.length ? "problems found" : "connected"}</${Badge}>
      ${r.message && html` ${r.message}`}
      ${missing.length > 0 && html`<p>Missing: ${missing.map((m) => html`<code>${typeof m === "string" ? m : m.metric ?? JSON.stringify(m)}</code> `)}</p>`}
      <details><summary>Full result</summary><pre class="json">${JSON.stringify(r, null, 2)}</pre></details>
    </div>`}
  </div>`;
}

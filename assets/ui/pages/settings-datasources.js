// Datasources (admin): add one (tested at once, the result shown inline), the list with
// the clusters each serves, and a "test connection" per datasource that shows what the
// hub found missing. Secrets are write-only in the API and never shown here.
import { html, useState } from "../lib.js";
import { get, post } from "../api.js";
import { useApi, Async, Empty, ErrorBox, Badge, Field, fieldError } from "../components.js";

export function DatasourceSettings() {
  const res = useApi((signal) => get("/v1/datasources", {}, { signal }), []);
  const [added, setAdded] = useState(null);
  return html`<h2>Datasources</h2>
    <p class="small muted">A Prometheus-compatible server (Prometheus, Thanos, Mimir, VictoriaMetrics) with kube-state-metrics and cAdvisor series of your clusters. Each cluster reads one; link it on the Clusters page or when registering a cluster.</p>
    <${Async} res=${res} what="datasources">${(page) => (page.items ?? []).length === 0
      ? html`<${Empty}><p><strong>No datasources yet.</strong> Add the Prometheus your clusters report to below.</p></${Empty}>`
      : html`<ul class="plain">${page.items.map((d) => html`<li key=${d.id}><${Datasource} d=${d} report=${added?.id === d.id ? added.report : null} /></li>`)}</ul>`}
    </${Async}>
    <${AddDatasource} onAdded=${(d) => { setAdded(d); res.reload(); }} />`;
}

/** The connection test's answer, inline: what works, what is missing, how usage is read. */
export function TestResult({ r }) {
  const missing = r.missingMetrics ?? [];
  const ok = r.reachable && r.authenticated && missing.length === 0;
  const state = !r.reachable ? "unreachable" : !r.authenticated ? "credentials refused" : missing.length ? "metrics missing" : "connected";
  return html`<div class="test-result" role="status" data-ok=${ok ? "true" : "false"}>
    <p><${Badge} kind=${ok ? "ok" : "bad"}>${state}</${Badge}> ${r.message}</p>
    ${missing.length > 0 && html`<p class="small">Missing (no series for this scope): ${missing.map((m) => html`<code>${m}</code> `)}</p>
      <p class="small muted">kube-state-metrics must export the pod, owner and resource series, with the label allow-list for the labels policies select on; cAdvisor the container usage.</p>`}
    ${r.protocol && html`<p class="small muted">Usage will be read with ${r.protocol}${r.remoteRead === false ? " (the server does not stream remote read)" : ""}.</p>`}
  </div>`;
}

function Datasource({ d, report }) {
  const [test, setTest] = useState(null);
  const run = async () => {
    setTest({ busy: true });
    try { setTest({ result: await post(`/v1/datasources/${encodeURIComponent(d.id)}/test`) }); }
    catch (e) { setTest({ error: e }); }
  };
  const r = test?.result ?? report;
  return html`<div class="card inner datasource" data-name=${d.name}>
    <p><strong>${d.name}</strong> <span class="muted">${d.type}</span> <code>${d.url}</code></p>
    <p class="small muted">${(d.clusters ?? []).length ? `Serves ${d.clusters.join(", ")}` : "No cluster reads from it yet: link one on the Clusters page."}
      · auth ${d.auth?.type ?? "none"}${d.clusterLabel ? ` · cluster label ${d.clusterLabel}` : ""}</p>
    <button type="button" class="small" onClick=${run} disabled=${test?.busy}>${test?.busy ? "Testing…" : "Test connection"}</button>
    ${test?.error && html`<${ErrorBox} error=${test.error} what="the connection test" />`}
    ${r && html`<${TestResult} r=${r} />`}
  </div>`;
}

const EMPTY = { name: "", url: "", authType: "none", username: "", password: "", token: "", clusterLabel: "", clusterValue: "" };

function AddDatasource({ onAdded }) {
  const [f, setF] = useState(EMPTY);
  const [st, setSt] = useState({ busy: false, error: null, testError: null });
  const on = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const submit = async (e) => {
    e.preventDefault();
    setSt({ busy: true, error: null, testError: null });
    const auth = f.authType === "basic" ? { type: "basic", username: f.username, password: f.password }
      : f.authType === "bearer" ? { type: "bearer", token: f.token } : { type: "none" };
    const body = { name: f.name, type: "prometheus", url: f.url, auth };
    if (f.clusterLabel) body.clusterLabel = f.clusterLabel;
    if (f.clusterValue) body.clusterValue = f.clusterValue;
    let made;
    try { made = await post("/v1/datasources", body); }
    catch (err) { setSt({ busy: false, error: err, testError: null }); return; }
    // Tested at once: whether kerf can read it is the first thing to know.
    let report = null;
    let testError = null;
    try { report = await post(`/v1/datasources/${encodeURIComponent(made.id)}/test`); } catch (err) { testError = err; }
    setF(EMPTY);
    setSt({ busy: false, error: null, testError });
    onAdded({ id: made.id, report });
  };
  const err = (path) => fieldError(st.error, path);
  const paths = ["$.name", "$.url", "$.auth", "$.auth.type", "$.auth.username", "$.auth.password", "$.auth.token", "$.clusterLabel", "$.clusterValue"];
  const general = st.error && !paths.some((p) => err(p)) ? st.error : null;
  return html`<form class="card inner" onSubmit=${submit} aria-label="Add a datasource"><h3>Add a datasource</h3>
    <div class="form-grid">
      <${Field} id="ds-name" label="Name" error=${err("$.name")}><input id="ds-name" required value=${f.name} onInput=${on("name")} /></${Field}>
      <${Field} id="ds-url" label="URL" hint="e.g. http://prometheus.monitoring:9090" error=${err("$.url")}><input id="ds-url" required type="url" value=${f.url} onInput=${on("url")} /></${Field}>
      <${Field} id="ds-auth" label="Authentication" error=${err("$.auth.type") || err("$.auth")}>
        <select id="ds-auth" value=${f.authType} onChange=${on("authType")}>
          <option value="none">none</option><option value="basic">basic (username and password)</option><option value="bearer">bearer token</option>
        </select></${Field}>
      ${f.authType === "basic" && html`<${Field} id="ds-user" label="Username" error=${err("$.auth.username")}><input id="ds-user" autocomplete="off" value=${f.username} onInput=${on("username")} /></${Field}>
        <${Field} id="ds-pass" label="Password (write-only)" error=${err("$.auth.password")}><input id="ds-pass" type="password" autocomplete="new-password" value=${f.password} onInput=${on("password")} /></${Field}>`}
      ${f.authType === "bearer" && html`<${Field} id="ds-token" label="Token (write-only)" error=${err("$.auth.token")}><input id="ds-token" type="password" autocomplete="off" value=${f.token} onInput=${on("token")} /></${Field}>`}
      <${Field} id="ds-label" label="Cluster label (optional)" hint="When one server holds several clusters: the label that tells them apart, e.g. cluster." error=${err("$.clusterLabel")}>
        <input id="ds-label" value=${f.clusterLabel} onInput=${on("clusterLabel")} /></${Field}>
      ${f.clusterLabel && html`<${Field} id="ds-value" label="Cluster label value (optional)" hint="Defaults to the kerf cluster's name." error=${err("$.clusterValue")}>
        <input id="ds-value" value=${f.clusterValue} onInput=${on("clusterValue")} /></${Field}>`}
    </div>
    ${general && html`<${ErrorBox} error=${general} what=${null} />`}
    ${st.testError && html`<${ErrorBox} error=${st.testError} what="the connection test" />`}
    <button type="submit" class="primary" disabled=${st.busy}>${st.busy ? "Adding and testing…" : "Add and test"}</button>
  </form>`;
}

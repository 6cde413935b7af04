// Users, API tokens and teams (admin only). Secrets the API reveals once (a generated
// password, a token value) are shown once with a copy button and never again.
import { html, useState } from "../lib.js";
import { get, post, patch, del } from "../api.js";
import { useApi, Async, Empty, ErrorBox, Field, fieldError, CopyButton, Badge } from "../components.js";
import * as fmt from "../format.js";

function useAction(reload) {
  const [state, setState] = useState({ busy: false, error: null, result: null });
  const run = async (fn) => {
    setState({ busy: true, error: null, result: null });
    try { const result = await fn(); setState({ busy: false, error: null, result }); reload(); return result; }
    catch (e) { setState({ busy: false, error: e, result: null }); return null; }
  };
  return [state, run];
}

function Secret({ label, value }) {
  if (!value) return null;
  return html`<div class="secret" role="status"><p><strong>${label}</strong> It is shown only this once.</p>
    <code class="secret-value">${value}</code> <${CopyButton} text=${value} /></div>`;
}

export function UsersSettings() {
  const res = useApi((signal) => get("/v1/admin/users", {}, { signal }), []);
  const [act, run] = useAction(res.reload);
  const [form, setForm] = useState({ username: "", displayName: "", role: "viewer" });
  const create = (e) => { e.preventDefault(); run(() => post("/v1/admin/users", { ...form, role: form.role || null })); };
  return html`<h2>Users</h2>
    <${Async} res=${res} what="users">${(page) => page.items.length === 0 ? html`<${Empty}><p>No users.</p></${Empty}>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">User</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
        <tbody>${page.items.map((u) => html`<tr key=${u.id}><td>${u.username}<div class="small muted">${u.displayName}</div>${u.signsInWith === "sso" && html`<${Badge} title="Made by the identity provider; its groups set the roles at each sign-in">single sign-on</${Badge}>`}</td><td>${u.role ?? html`<span class="muted">team roles only</span>`}</td>
          <td>${u.disabled ? html`<${Badge} kind="bad">disabled</${Badge}>` : html`<${Badge} kind="ok">active</${Badge}>`}</td><td>${fmt.time(u.createdAt)}</td>
          <td class="row-actions">
            <button type="button" class="small" onClick=${() => run(() => patch(`/v1/admin/users/${u.id}`, { disabled: !u.disabled }))}>${u.disabled ? "Enable" : "Disable"}</button>
            ${u.signsInWith !== "sso" && html`<button type="button" class="small" onClick=${() => run(() => post(`/v1/admin/users/${u.id}/password-reset`, {}))}>Reset password</button>`}
            <button type="button" class="small danger" onClick=${() => confirm(`Delete user ${u.username}?`) && run(() => del(`/v1/admin/users/${u.id}`))}>Delete</button>
          </td></tr>`)}</tbody></table></div>`}</${Async}>
    ${act.error && !fieldError(act.error, "username") && html`<${ErrorBox} error=${act.error} />`}
    <${Secret} label="One-time password:" value=${act.result?.oneTimePassword} />
    <form class="card inner" onSubmit=${create} aria-label="Create a user"><h3>Create a user</h3>
      <div class="form-grid">
        <${Field} id="new-username" label="Username" error=${fieldError(act.error, "username")}><input id="new-username" required value=${form.username} onInput=${(e) => setForm({ ...form, username: e.target.value })} /></${Field}>
        <${Field} id="new-display" label="Display name" error=${fieldError(act.error, "displayName")}><input id="new-display" value=${form.displayName} onInput=${(e) => setForm({ ...form, displayName: e.target.value })} /></${Field}>
        <${Field} id="new-role" label="Fleet role"><select id="new-role" value=${form.role} onChange=${(e) => setForm({ ...form, role: e.target.value })}>
          <option value="viewer">viewer</option><option value="editor">editor</option><option value="admin">admin</option><option value="">none (team roles only)</option></select></${Field}>
      </div>
      <p class="small muted">A one-time password is generated and shown once.</p>
      <button type="submit" class="primary" disabled=${act.busy}>Create user</button></form>`;
}

export function TokensSettings() {
  const res = useApi((signal) => get("/v1/admin/tokens", {}, { signal }), []);
  const [act, run] = useAction(res.reload);
  const [form, setForm] = useState({ name: "", role: "viewer", expiresAt: "" });
  const create = (e) => {
    e.preventDefault();
    run(() => post("/v1/admin/tokens", { name: form.name, role: form.role, expiresAt: form.expiresAt ? new Date(form.expiresAt).toISOString() : undefined }));
  };
  return html`<h2>API tokens</h2>
    <${Async} res=${res} what="API tokens">${(page) => page.items.length === 0 ? html`<${Empty}><p>No API tokens.</p></${Empty}>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
        <tbody>${page.items.map((t) => html`<tr key=${t.id}><td>${t.name}<div class="small muted">by ${t.createdBy ?? "—"}</div></td><td>${t.role}${t.team ? ` in ${t.team.name}` : ""}</td>
          <td>${fmt.time(t.createdAt)}</td><td>${t.expiresAt ? fmt.time(t.expiresAt) : "never"}</td><td>${t.lastUsedAt ? fmt.ago(t.lastUsedAt) : "never"}</td>
          <td>${t.revokedAt ? html`<${Badge} kind="bad">revoked</${Badge}>` : html`<button type="button" class="small danger" onClick=${() => confirm(`Revoke token ${t.name}?`) && run(() => del(`/v1/admin/tokens/${t.id}`))}>Revoke</button>`}</td></tr>`)}</tbody></table></div>`}</${Async}>
    ${act.error && html`<${ErrorBox} error=${act.error} />`}
    <${Secret} label="New token:" value=${act.result?.value} />
    <form class="card inner" onSubmit=${create} aria-label="Create an API token"><h3>Create an API token</h3>
      <div class="form-grid">
        <${Field} id="tok-name" label="Name" error=${fieldError(act.error, "name")}><input id="tok-name" required value=${form.name} onInput=${(e) => setForm({ ...form, name: e.target.value })} /></${Field}>
        <${Field} id="tok-role" label="Role" error=${fieldError(act.error, "role")}><select id="tok-role" value=${form.role} onChange=${(e) => setForm({ ...form, role: e.target.value })}>
          <option value="viewer">viewer</option><option value="editor">editor</option><option value="admin">admin</option></select></${Field}>
        <${Field} id="tok-exp" label="Expires (optional)" error=${fieldError(act.error, "expiresAt")}><input id="tok-exp" type="datetime-local" value=${form.expiresAt} onInput=${(e) => setForm({ ...form, expiresAt: e.target.value })} /></${Field}>
      </div>
      <button type="submit" class="primary" disabled=${act.busy}>Create token</button></form>`;
}

export function TeamsSettings() {
  const res = useApi((signal) => get("/v1/admin/teams", {}, { signal }), []);
  const [act, run] = useAction(res.reload);
  const [form, setForm] = useState({ name: "", description: "", namespaces: "" });
  const create = (e) => {
    e.preventDefault();
    const namespaces = form.namespaces.split(/[\s,]+/).filter(Boolean).map((p) => { const [cluster, namespace] = p.includes("/") ? p.split("/") : ["*", p]; return { cluster, namespace }; });
    run(() => post("/v1/admin/teams", { name: form.name, description: form.description, namespaces }));
  };
  return html`<h2>Teams</h2>
    <${Async} res=${res} what="teams">${(page) => page.items.length === 0 ? html`<${Empty}><p>No teams. Teams own namespaces and give their members roles there.</p></${Empty}>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Team</th><th scope="col">Namespaces</th><th scope="col">Members</th><th scope="col">Actions</th></tr></thead>
        <tbody>${page.items.map((t) => html`<tr key=${t.id}><td>${t.name}<div class="small muted">${t.description}</div></td>
          <td>${t.namespaces.map((n) => html`<code>${n.cluster}/${n.namespace}</code> `)}</td>
          <td>${t.members.length === 0 ? html`<span class="muted">none</span>` : t.members.map((m) => html`<span class="badge">${m.username}: ${m.role}</span> `)}</td>
          <td><button type="button" class="small danger" onClick=${() => confirm(`Delete team ${t.name}?`) && run(() => del(`/v1/admin/teams/${t.id}`))}>Delete</button></td></tr>`)}</tbody></table></div>`}</${Async}>
    ${act.error && !fieldError(act.error, "name") && html`<${ErrorBox} error=${act.error} />`}
    <form class="card inner" onSubmit=${create} aria-label="Create a team"><h3>Create a team</h3>
      <div class="form-grid">
        <${Field} id="team-name" label="Name" error=${fieldError(act.error, "name")}><input id="team-name" required value=${form.name} onInput=${(e) => setForm({ ...form, name: e.target.value })} /></${Field}>
        <${Field} id="team-desc" label="Description"><input id="team-desc" value=${form.description} onInput=${(e) => setForm({ ...form, description: e.target.value })} /></${Field}>
        <${Field} id="team-ns" label="Namespaces (cluster/namespace, comma-separated)" error=${fieldError(act.error, "namespaces")}><input id="team-ns" placeholder="prod/shop, */payments" value=${form.namespaces} onInput=${(e) => setForm({ ...form, namespaces: e.target.value })} /></${Field}>
      </div>
      <button type="submit" class="primary" disabled=${act.busy}>Create team</button></form>`;
}

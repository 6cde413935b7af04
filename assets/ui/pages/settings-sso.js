// Single sign-on (admin): the identity provider as configured (what to register with
// it), who may still use a password, and which provider groups give which kerf roles.
// The config file's mappings are read-only here; the UI's are edited as one set and
// audited (SsoMappingsUpdated). They apply at each person's next sign-in or re-check.
import { html, useState } from "../lib.js";
import { get, put } from "../api.js";
import { useApi, Async, Empty, ErrorBox, Field, Badge, CopyButton } from "../components.js";

const FLEET = ["viewer", "editor", "admin"];
const TEAM = ["team-viewer", "team-editor", "team-admin"];

/** What a mapping gives, in words. */
export function gives(m) {
  return m.role ? `fleet ${m.role}` : `${m.teamRole} in team ${m.team}`;
}

function Provider({ p, passwordLogin, breakGlass }) {
  return html`<dl class="facts">
    <dt>Provider</dt><dd>${p.name} <span class="muted small">${p.issuer}</span></dd>
    <dt>Client</dt><dd><code>${p.clientId}</code>, scopes <code>${p.scopes.join(" ")}</code></dd>
    <dt>Redirect URI to register</dt><dd><code>${p.redirectUri}</code> <${CopyButton} text=${p.redirectUri} /></dd>
    <dt>Post-logout redirect URI</dt><dd><code>${p.postLogoutRedirectUri}</code> <${CopyButton} text=${p.postLogoutRedirectUri} /></dd>
    <dt>Claims read</dt><dd>username from <code>${p.usernameClaim}</code>, groups from <code>${p.groupsClaim}</code></dd>
    <dt>Sessions re-checked</dt><dd>every ${p.recheckSeconds} s: a person the provider signed out, or who left every mapped group, is signed out of kerf by then</dd>
    <dt>Password sign-in</dt><dd>${passwordLogin === "break-glass-only"
      ? html`only the break-glass accounts ${breakGlass.map((u, i) => html`${i ? ", " : ""}<code>${u}</code>`)}`
      : "every local user (set auth.password_login = \"break-glass-only\" to limit it)"}</dd>
  </dl>`;
}

export function SsoSettings() {
  const res = useApi((signal) => get("/v1/admin/sso", {}, { signal }), []);
  const teams = useApi((signal) => get("/v1/admin/teams", {}, { signal }), []);
  const [state, setState] = useState({ busy: false, error: null });
  const [form, setForm] = useState({ group: "", kind: "fleet", role: "viewer", team: "", teamRole: "team-viewer" });
  const save = async (mappings) => {
    setState({ busy: true, error: null });
    try {
      await put("/v1/admin/sso/mappings", { mappings: mappings.map(({ source, ...m }) => m) });
      setState({ busy: false, error: null });
      res.reload();
      return true;
    } catch (e) { setState({ busy: false, error: e }); return false; }
  };
  return html`<h2>Single sign-on</h2>
    <${Async} res=${res} what="the single sign-on settings">${(s) => !s.configured
      ? html`<${Empty}><p>No identity provider is configured. People sign in with kerf accounts.</p>
          <p class="small muted">Add <code>[auth.oidc]</code> to the config file (issuer, client_id, client_secret_file) and restart: a "Sign in with …" button appears on the login page, and the provider's groups map to roles here.</p></${Empty}>`
      : html`<${Provider} p=${s.provider} passwordLogin=${s.passwordLogin} breakGlass=${s.breakGlassUsers} />
        <h3>Groups and the roles they give</h3>
        <p class="small muted">A person gets the highest fleet role and, per team, the highest team role of their mapped groups, read again at every sign-in and re-check. Someone in no mapped group cannot sign in. Roles changed by hand on such a user are overwritten at their next sign-in.</p>
        ${s.mappings.length === 0 ? html`<p class="notice">No group is mapped yet: nobody can sign in through ${s.provider.name} until one is.</p>`
          : html`<div class="table-wrap"><table aria-label="Group mappings"><thead><tr><th scope="col">Provider group</th><th scope="col">Gives</th><th scope="col">Set in</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>${s.mappings.map((m, i) => html`<tr key=${i}><td><code>${m.group}</code></td><td>${gives(m)}</td>
              <td>${m.source === "config" ? html`<${Badge}>config file</${Badge}>` : "this page"}</td>
              ${m.source === "ui" ? html`<td class="row-actions"><button type="button" class="small danger" disabled=${state.busy}
                onClick=${() => save(s.mappings.filter((x, j) => x.source === "ui" && j !== i))}>Remove</button></td>` : html`<td></td>`}</tr>`)}</tbody></table></div>`}
        ${state.error && html`<${ErrorBox} error=${state.error} />`}
        <form class="card inner" aria-label="Map a group" onSubmit=${(e) => {
          e.preventDefault();
          const m = form.kind === "fleet" ? { group: form.group.trim(), role: form.role } : { group: form.group.trim(), team: form.team, teamRole: form.teamRole };
          save([...s.mappings.filter((x) => x.source === "ui"), m]).then((ok) => ok && setForm({ ...form, group: "" }));
        }}><h3>Map a group</h3>
          <div class="form-grid">
            <${Field} id="sso-group" label="Provider group" hint="Exactly as the provider's groups claim says it."><input id="sso-group" required value=${form.group} onInput=${(e) => setForm({ ...form, group: e.target.value })} /></${Field}>
            <${Field} id="sso-kind" label="Gives"><select id="sso-kind" value=${form.kind} onChange=${(e) => setForm({ ...form, kind: e.target.value })}>
              <option value="fleet">a fleet role</option><option value="team">a role in a team</option></select></${Field}>
            ${form.kind === "fleet"
              ? html`<${Field} id="sso-role" label="Fleet role"><select id="sso-role" value=${form.role} onChange=${(e) => setForm({ ...form, role: e.target.value })}>${FLEET.map((r) => html`<option value=${r}>${r}</option>`)}</select></${Field}>`
              : html`<${Field} id="sso-team" label="Team"><select id="sso-team" required value=${form.team} onChange=${(e) => setForm({ ...form, team: e.target.value })}>
                    <option value="">choose a team</option>${(teams.data?.items ?? []).map((t) => html`<option value=${t.name}>${t.name}</option>`)}</select></${Field}>
                  <${Field} id="sso-team-role" label="Team role"><select id="sso-team-role" value=${form.teamRole} onChange=${(e) => setForm({ ...form, teamRole: e.target.value })}>${TEAM.map((r) => html`<option value=${r}>${r}</option>`)}</select></${Field}>`}
          </div>
          <button type="submit" class="primary" disabled=${state.busy}>Add mapping</button>
        </form>`}</${Async}>`;
}

// Notification forms: add a channel (per type: webhook URL, signing secret generated in
// the browser, SMTP settings), and a channel's digest schedule. Errors from the API land
// at the field they name. Secrets go to the hub once and are never read back.
import { html, useState } from "../lib.js";
import { get, post, put } from "../api.js";
import { useApi, Field, fieldError, ErrorBox, CopyButton, Confirm } from "../components.js";
import { hasRole } from "../session.js";

const HINT = {
  slack: "The Slack incoming webhook URL (https://hooks.slack.com/services/…).",
  teams: "The Teams incoming webhook or Workflows URL.",
  webhook: "Any HTTPS endpoint; kerf POSTs JSON signed with X-Kerf-Signature.",
};

/** Teams the caller may change channels of; `null` = every channel (fleet editor). */
export function editableTeams(session) {
  if (hasRole(session, "editor")) return null;
  return (session.me?.teams ?? []).filter((t) => t.role === "team-editor" || t.role === "team-admin");
}

export function canEdit(session, channel) {
  const teams = editableTeams(session);
  if (teams === null) return true;
  return channel.team !== null && teams.some((t) => String(t.id) === String(channel.team?.id));
}

/** The PUT body that keeps a channel as it is (secrets omitted: the hub keeps them). */
export function channelBody(c) {
  const body = { name: c.name, type: c.type, teamId: c.team ? Number(c.team.id) : undefined, enabled: c.enabled };
  if (c.email) {
    const { host, port, security, username, from, to } = c.email;
    body.email = { host, port, security, username: username ?? undefined, from, to };
  }
  return body;
}

function randomSecret() {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  return `kerf_whsec_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const FORM_FIELDS = new Set(["name", "type", "teamId", "url", "signingSecret", "email.host", "email.port", "email.security",
  "email.from", "email.password", "email.username", "email.caPem"]);

const split = (s) => s.split(",").map((x) => x.trim()).filter(Boolean);

function useTeams(session, teams) {
  // Team editors pick among their teams; fleet admins among all teams (fleet editors
  // cannot list teams, so they create fleet-wide channels).
  return useApi(async (signal) => {
    if (teams !== null) return teams.map((t) => ({ id: t.id, name: t.name }));
    if (!hasRole(session, "admin")) return [];
    return (await get("/v1/admin/teams", {}, { signal })).items.map((t) => ({ id: t.id, name: t.name }));
  }, [teams === null]);
}

export function ChannelForm({ session, teams, open, onSaved }) {
  const teamList = useTeams(session, teams);
  const [f, setF] = useState({ name: "", type: "slack", team: teams?.[0]?.id ?? "", url: "", signingSecret: "", defaultRules: true,
    host: "", port: "", security: "starttls", username: "", password: "", from: "", to: "", caPem: "" });
  const [st, setSt] = useState({ busy: false, error: null, done: null });
  const [shown, setShown] = useState(open);
  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === "checkbox" ? e.target.checked : e.target.value });
  const err = (name) => fieldError(st.error, name);
  const submit = async (e) => {
    e.preventDefault();
    const body = { name: f.name, type: f.type, defaultRules: f.defaultRules };
    if (f.team !== "") body.teamId = Number(f.team);
    if (f.type === "email") {
      body.email = { host: f.host, security: f.security, from: f.from, to: split(f.to),
        port: f.port ? Number(f.port) : undefined, username: f.username || undefined, password: f.password || undefined, caPem: f.caPem || undefined };
    } else {
      body.url = f.url;
      if (f.type === "webhook") body.signingSecret = f.signingSecret;
    }
    setSt({ busy: true, error: null, done: null });
    try {
      const c = await post("/v1/notifications/channels", body);
      setSt({ busy: false, error: null, done: c.name });
      setF({ ...f, name: "", url: "", signingSecret: "", password: "" });
      onSaved();
    } catch (error) { setSt({ busy: false, error, done: null }); }
  };
  const field = st.error?.details?.field ?? "";
  const general = st.error && !(FORM_FIELDS.has(field) || field.startsWith("email.to")) ? st.error : null;
  const toErr = err("email.to") ?? (st.error?.details?.errors ?? []).find((x) => x.field?.startsWith("email.to["))?.message;
  return html`<form class="card" onSubmit=${submit} aria-labelledby="add-channel"><details open=${shown} onToggle=${(e) => setShown(e.target.open)}>
    <summary><h3 id="add-channel" class="inline-heading">Add a channel</h3></summary>
    <div class="form-grid">
      <${Field} id="ch-name" label="Name" error=${err("name")}><input id="ch-name" value=${f.name} onInput=${set("name")} required /></${Field}>
      <${Field} id="ch-type" label="Type" error=${err("type")}>
        <select id="ch-type" value=${f.type} onChange=${set("type")}>
          <option value="slack">Slack</option><option value="teams">Microsoft Teams</option>
          <option value="webhook">Webhook (signed)</option><option value="email">Email (SMTP)</option>
        </select></${Field}>
      <${Field} id="ch-team" label="Hears about" error=${err("teamId")}>
        <select id="ch-team" value=${f.team} onChange=${set("team")}>
          ${teams === null && html`<option value="">the whole fleet</option>`}
          ${(teamList.data ?? []).map((t) => html`<option value=${t.id}>team ${t.name}</option>`)}
        </select></${Field}>
    </div>
    ${f.type !== "email" && html`<${Field} id="ch-url" label="Webhook URL (kept secret)" error=${err("url")} hint=${HINT[f.type]}>
      <input id="ch-url" type="password" autocomplete="off" value=${f.url} onInput=${set("url")} required /></${Field}>`}
    ${f.type === "webhook" && html`<${Field} id="ch-secret" label="Signing secret (16+ characters; give the same to the receiver)" error=${err("signingSecret")}>
      <div class="inline-add"><input id="ch-secret" autocomplete="off" value=${f.signingSecret} onInput=${set("signingSecret")} required />
        <button type="button" class="small" onClick=${() => setF({ ...f, signingSecret: randomSecret() })}>Generate</button>
        ${f.signingSecret && html`<${CopyButton} text=${f.signingSecret} />`}</div></${Field}>`}
    ${f.type === "email" && html`<div class="form-grid">
      <${Field} id="ch-host" label="SMTP server" error=${err("email.host")}><input id="ch-host" value=${f.host} onInput=${set("host")} required /></${Field}>
      <${Field} id="ch-security" label="Security" error=${err("email.security")}>
        <select id="ch-security" value=${f.security} onChange=${set("security")}>
          <option value="starttls">STARTTLS (587)</option><option value="tls">TLS (465)</option><option value="none">none — trusted relay only (25)</option>
        </select></${Field}>
      <${Field} id="ch-port" label="Port (optional)" error=${err("email.port")}><input id="ch-port" inputmode="numeric" value=${f.port} onInput=${set("port")} /></${Field}>
      <${Field} id="ch-user" label="Username (optional)" error=${err("email.username")}><input id="ch-user" autocomplete="off" value=${f.username} onInput=${set("username")} /></${Field}>
      <${Field} id="ch-pass" label="Password (kept secret)" error=${err("email.password")}><input id="ch-pass" type="password" autocomplete="new-password" value=${f.password} onInput=${set("password")} /></${Field}>
      <${Field} id="ch-from" label="From" error=${err("email.from")}><input id="ch-from" placeholder="kerf <kerf@example.com>" value=${f.from} onInput=${set("from")} required /></${Field}>
      <${Field} id="ch-to" label="To (comma-separated)" error=${toErr}><input id="ch-to" value=${f.to} onInput=${set("to")} required /></${Field}>
    </div>
    <details><summary>Extra CA certificate (PEM, optional)</summary>
      <${Field} id="ch-ca" label="CA certificates trusted for this server" error=${err("email.caPem")}><textarea id="ch-ca" rows="4" value=${f.caPem} onInput=${set("caPem")}></textarea></${Field}>
    </details>`}
    <label class="check"><input type="checkbox" checked=${f.defaultRules} onChange=${set("defaultRules")} /> Start with the default rule: rollbacks, failures, readiness, pauses and failed runs</label>
    ${general && html`<${ErrorBox} error=${general} />`}
    <div class="actions"><button type="submit" class="primary" disabled=${st.busy}>${st.busy ? "Saving…" : "Add channel"}</button>
      ${st.done && html`<span class="ok" role="status">Channel ${st.done} added. Send it a test message.</span>`}</div>
  </details></form>`;
}

export function DigestDialog({ channel, onClose, onSaved }) {
  const d = channel.digest;
  const [f, setF] = useState({ enabled: d.enabled, schedule: d.schedule, timeZone: d.timeZone, reason: "" });
  const [st, setSt] = useState({ busy: false, error: null });
  const submit = async () => {
    setSt({ busy: true, error: null });
    try {
      await put(`/v1/notifications/channels/${encodeURIComponent(channel.id)}/digest`, { ...f, reason: f.reason || undefined });
      onSaved(); onClose();
    } catch (error) { setSt({ busy: false, error }); }
  };
  const general = st.error && !fieldError(st.error, "schedule") && !fieldError(st.error, "timeZone") ? st.error : null;
  return html`<${Confirm} open=${true} title=${`Weekly digest of ${channel.name}`} confirmLabel="Save schedule" busy=${st.busy} error=${general} onConfirm=${submit} onCancel=${onClose}>
    <p class="small">Savings realized and still available, changes applied, rolled back and blocked, workloads that need attention and clusters not ready — ${channel.team ? `for team ${channel.team.name}` : "for the whole fleet"}.</p>
    <label class="check"><input type="checkbox" checked=${f.enabled} onChange=${(e) => setF({ ...f, enabled: e.target.checked })} /> Send the digest</label>
    <${Field} id="dg-schedule" label="Schedule (cron: minute hour day month weekday)" error=${fieldError(st.error, "schedule")} hint="0 9 * * 1 = Monday 09:00">
      <input id="dg-schedule" value=${f.schedule} onInput=${(e) => setF({ ...f, schedule: e.target.value })} /></${Field}>
    <${Field} id="dg-tz" label="Time zone (IANA)" error=${fieldError(st.error, "timeZone")} hint="e.g. Europe/Berlin; 09:00 stays 09:00 across daylight saving">
      <input id="dg-tz" value=${f.timeZone} onInput=${(e) => setF({ ...f, timeZone: e.target.value })} /></${Field}>
    <${Field} id="dg-reason" label="Reason (optional, recorded in the audit)">
      <input id="dg-reason" value=${f.reason} onInput=${(e) => setF({ ...f, reason: e.target.value })} /></${Field}>
  </${Confirm}>`;
}

// Notifications: channels (Slack, Teams, signed webhook, email) with a test button and
// their weekly digest schedule, the rules that route events to them, and the delivery
// log with failures visible. Secrets are write-only: the page shows masked targets only.
// Built on /v1/notifications/*; docs/contracts/notifications.md.
import { html, useState } from "../lib.js";
import { get, post, put, del } from "../api.js";
import { useApi, Async, Empty, ErrorBox, Badge } from "../components.js";
import * as fmt from "../format.js";
import { ChannelForm, DigestDialog, channelBody, editableTeams, canEdit } from "./notifications-forms.js";
import { RulesSection, DeliveryLog } from "./notifications-log.js";
import { DigestPreview } from "./digest-preview.js";

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** `0 9 * * 1` as "every Monday at 09:00"; other schedules stay cron. */
export function scheduleText(cron) {
  const m = cron.trim().match(/^(\d{1,2}) (\d{1,2}) \* \* (\*|[0-7])$/);
  if (!m) return null;
  const at = `${m[2].padStart(2, "0")}:${m[1].padStart(2, "0")}`;
  return m[3] === "*" ? `every day at ${at}` : `every ${DAYS[Number(m[3]) % 7]} at ${at}`;
}

export const TYPE_LABEL = { slack: "Slack", teams: "Microsoft Teams", webhook: "Webhook", email: "Email" };

export function NotificationsPage({ session }) {
  const channels = useApi((signal) => get("/v1/notifications/channels", {}, { signal }), []);
  const [logTick, setLogTick] = useState(0);
  const [rulesTick, setRulesTick] = useState(0);
  const changed = () => { channels.reload(); setRulesTick((t) => t + 1); setLogTick((t) => t + 1); };
  const teams = editableTeams(session);
  const mayCreate = teams === null || teams.length > 0;
  return html`<section>
    <div class="page-head"><h1>Notifications</h1></div>
    <p class="muted">kerf tells people what it did: rules send events and the hub's notices to channels, and each channel gets a weekly digest.
      Every message is in the delivery log below, failures included.</p>
    <${Async} res=${channels} what="notification channels">${(page) => html`
      <h2>Channels</h2>
      ${page.items.length === 0
        ? html`<${Empty}><p><strong>No channels yet.</strong> ${mayCreate ? "Add one below: a new channel hears about rollbacks, failures, readiness and pauses until you change its rules." : "An editor can add one."}</p></${Empty}>`
        : html`<div class="channel-list">${page.items.map((c) => html`<${ChannelCard} key=${c.id} c=${c} editable=${canEdit(session, c)}
            changed=${changed} onSent=${() => setLogTick((t) => t + 1)} />`)}</div>`}
      ${mayCreate && html`<${ChannelForm} session=${session} teams=${teams} open=${page.items.length === 0} onSaved=${changed} />`}
      <${RulesSection} session=${session} channels=${page.items} tick=${rulesTick} changed=${changed} />`}
    </${Async}>
    <${DeliveryLog} tick=${logTick} channels=${channels.data?.items ?? []} />
  </section>`;
}

function ChannelCard({ c, editable, changed, onSent }) {
  const [test, setTest] = useState(null);
  const [digestOpen, setDigestOpen] = useState(false);
  const [act, setAct] = useState({ busy: false, error: null });
  const id = encodeURIComponent(c.id);
  const sendTest = async () => {
    setTest({ busy: true });
    try { setTest({ result: await post(`/v1/notifications/channels/${id}/test`) }); }
    catch (e) { setTest({ error: e }); }
    onSent();
  };
  const run = async (fn) => {
    setAct({ busy: true, error: null });
    try { await fn(); setAct({ busy: false, error: null }); changed(); }
    catch (e) { setAct({ busy: false, error: e }); }
  };
  const toggle = () => run(() => put(`/v1/notifications/channels/${id}`, { ...channelBody(c), enabled: !c.enabled }));
  const remove = () => {
    const reason = prompt(`Delete the channel ${c.name} with its rules and delivery log? Reason (recorded in the audit):`);
    if (reason !== null) run(() => del(`/v1/notifications/channels/${id}`, { reason: reason || undefined }));
  };
  const r = test?.result;
  const d = c.digest;
  return html`<article class="card channel" aria-label=${`Channel ${c.name}`}>
    <div class="page-head">
      <h3>${c.name}</h3>
      <div class="head-badges">
        <${Badge}>${TYPE_LABEL[c.type] ?? c.type}</${Badge}>
        <${Badge} kind=${c.team ? "accent" : "muted"}>${c.team ? `team ${c.team.name}` : "fleet-wide"}</${Badge}>
        ${!c.enabled && html`<${Badge} kind="warn">disabled</${Badge}>`}
      </div>
    </div>
    <p class="small">Delivers to <code class="target">${c.target}</code>${c.type === "webhook" && html` <span class="muted">(signed with its secret)</span>`}</p>
    <p class="small">Weekly digest: ${d.enabled
      ? html`<span title=${`cron ${d.schedule}`}>${scheduleText(d.schedule) ?? html`<code>${d.schedule}</code>`}</span> (${d.timeZone})${d.nextAt ? html` · next ${fmt.time(d.nextAt)}` : ""}`
      : html`<span class="muted">off</span>`}</p>
    <${DigestPreview} id=${c.id} />
    <div class="row-actions">
      ${editable && html`<button type="button" class="small primary" onClick=${sendTest} disabled=${test?.busy}>${test?.busy ? "Sending…" : "Send test message"}</button>`}
      ${editable && html`<button type="button" class="small" onClick=${() => setDigestOpen(true)}>Digest schedule…</button>`}
      ${editable && html`<button type="button" class="small" onClick=${toggle} disabled=${act.busy}>${c.enabled ? "Disable" : "Enable"}</button>`}
      ${editable && html`<button type="button" class="small danger" onClick=${remove} disabled=${act.busy}>Delete</button>`}
    </div>
    ${act.error && html`<${ErrorBox} error=${act.error} />`}
    ${test?.error && html`<${ErrorBox} error=${test.error} what="the test message" />`}
    ${r && html`<div class="test-result" role="status">
      <${Badge} kind=${r.delivered ? "ok" : "bad"}>${r.delivered ? "delivered" : "not delivered"}</${Badge}>
      ${r.status !== null && html` answered <strong>${r.status}</strong>`} in ${r.durationMs} ms
      ${!r.delivered && r.answer && html`<span>: ${r.answer}</span>`}
    </div>`}
    ${digestOpen && html`<${DigestDialog} channel=${c} onClose=${() => setDigestOpen(false)} onSaved=${changed} />`}
  </article>`;
}

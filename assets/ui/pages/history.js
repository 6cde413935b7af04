// A workload's history as one timeline, newest first: its workload events from the
// agent, its recommendations, and configuration changes (its override, its approvals,
// the policies that apply to it), from GET /v1/workloads/{id}/history.
import { html, useState, useEffect } from "../lib.js";
import { get } from "../api.js";
import { Empty, ErrorBox, Loading, Badge, QualityBadge } from "../components.js";
import * as fmt from "../format.js";
import { typeWords, Code, changedText, localTimes, reasonWords } from "../words.js";

export function WorkloadHistory({ w, tick }) {
  const [items, setItems] = useState([]);
  const [next, setNext] = useState(null);
  const [state, setState] = useState({ loading: true, error: null });
  const load = async (cursor) => {
    setState({ loading: true, error: null });
    try {
      const page = await get(`/v1/workloads/${encodeURIComponent(w.id)}/history`, { limit: 50, next: cursor });
      setItems((old) => (cursor ? [...old, ...page.items] : page.items));
      setNext(page.next ?? null);
      setState({ loading: false, error: null });
    } catch (e) { setState({ loading: false, error: e }); }
  };
  useEffect(() => { load(null); }, [w.id, tick]);
  return html`<section class="card history" aria-labelledby="history-h">
    <h2 id="history-h">History</h2>
    ${state.error && html`<${ErrorBox} error=${state.error} retry=${() => load(null)} what="the history" />`}
    ${!state.error && !state.loading && items.length === 0 && html`<${Empty}><p>Nothing happened to this workload yet.</p></${Empty}>`}
    ${items.length > 0 && html`<ol class="timeline">${items.map((it, i) => html`<${Item} key=${i} it=${it} w=${w} />`)}</ol>`}
    ${state.loading && html`<${Loading} what="Loading the history" />`}
    ${next && !state.loading && html`<button type="button" onClick=${() => load(next)}>Show older</button>`}
    <p class="small"><a href=${`/audit?tab=events&cluster=${encodeURIComponent(w.cluster)}&namespace=${encodeURIComponent(w.namespace)}&kind=${encodeURIComponent(w.kind)}&name=${encodeURIComponent(w.name)}`}>All events in the audit</a></p>
  </section>`;
}

const KIND = { applied: "ok", failed: "bad", rolled_back: "bad", blocked: "warn", fallback: "warn" };

function Item({ it, w }) {
  const when = html`<time datetime=${it.time}>${fmt.time(it.time)}</time>`;
  if (it.type === "event" && it.event) {
    const e = it.event;
    return html`<li class="tl-event">${when} <${Badge} kind=${KIND[e.type] ?? ""} title=${e.type}>${typeWords(e.type)}</${Badge}> <strong><${Code} code=${e.reason} words=${reasonWords} /></strong> ${localTimes(e.message)}
      ${(e.containers ?? []).length > 0 && html`<div class="small muted">${changedText(e.containers)}</div>`}</li>`;
  }
  if (it.type === "recommendation" && it.recommendation) {
    const r = it.recommendation;
    const s = r.summary ?? {};
    const changes = (s.containers ?? []).flatMap((c) => ["cpu", "memory"].flatMap((res) => ["requests"].map((k) => c[res]?.[k])
      .filter((v) => v && v.suggested != null && v.current !== v.suggested)
      .map((v) => `${c.name} ${res} request ${v.current == null ? "not set" : fmt.quantity(res, v.current)} → ${fmt.quantity(res, fmt.asApplied(res, v.suggested))}`)));
    return html`<li class="tl-rec">${when} <${Badge}>recommendation</${Badge}> confidence ${s.confidence ?? "—"} <${QualityBadge} status=${s.dataQuality} />
      <strong class=${r.estimatedMonthlyCostDelta < 0 ? "ok" : r.estimatedMonthlyCostDelta > 0 ? "bad" : ""}>${fmt.delta(r.estimatedMonthlyCostDelta)}</strong>
      ${(s.notices ?? []).map((n) => html` <${Badge} kind="warn">${fmt.words(n)}</${Badge}>`)}
      ${changes.length > 0 && html`<div class="small muted">${changes.join(" · ")}</div>`}
      <div class="small muted">run <code>${r.runId?.slice(0, 8)}</code>${r.id === w.latestRecommendationId ? " · the latest" : ""}</div></li>`;
  }
  if (it.type === "configChange" && it.configChange) return html`<li class="tl-config">${when} <${Badge} kind="accent">config</${Badge}> <${Change} c=${it.configChange} /></li>`;
  return html`<li>${when} <${Badge}>${it.type}</${Badge}></li>`;
}

function Change({ c }) {
  const by = html`<span class="muted"> by ${c.actor?.name ?? "?"}${c.reason ? html` — “${c.reason}”` : ""}</span>`;
  const a = c.after ?? {};
  const verb = { PolicyCreated: "created", PolicyUpdated: "updated", PolicyDeleted: "deleted", PolicyReverted: "reverted" }[c.action];
  if (verb) {
    return html`<strong>${c.action}</strong> policy <a href=${`/policies/${c.target?.id}`}>${c.target?.name}</a> ${verb}${a.version ? ` → v${a.version}` : ""}${a.revertedTo ? ` (content of v${a.revertedTo})` : ""}${by}`;
  }
  if (c.action === "OverrideSet") {
    const s = a.spec ?? {};
    const modes = Object.entries(s.mode ?? {}).map(([k, v]) => `${k} ${v}`).join(", ");
    return html`<strong>OverrideSet</strong> ${modes ? `mode ${modes}` : "no mode"}${(s.excludedContainers ?? []).length ? `; excluded ${s.excludedContainers.join(", ")}` : ""}${s.expiresAt ? `; until ${fmt.time(s.expiresAt)}` : ""}${by}`;
  }
  if (c.action === "OverrideCleared") return html`<strong>OverrideCleared</strong>${by}`;
  if (c.action === "WorkloadApproved") {
    return html`<strong>WorkloadApproved</strong> recommendation <code>${(a.recommendationId ?? "").slice(0, 8)}</code> approved once${a.consumedAt ? `, applied ${fmt.time(a.consumedAt)}` : ", waiting for the agent"}${by}`;
  }
  return html`<strong>${c.action}</strong> ${c.target?.type} ${c.target?.name ?? c.target?.id}${by}`;
}

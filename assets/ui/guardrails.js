// The agent's guardrails on a workload's page: what holds the workload back now, in
// words (the latest blocks and the fallback since its last change), and the health
// watch's rollback history (what was restored, why, with the counts the watch saw).
// Read from the workload's events, GET /v1/audit?cluster&namespace&kind&name.
import { html } from "./lib.js";
import { get } from "./api.js";
import { useApi, Badge, ErrorBox, Loading } from "./components.js";
import * as fmt from "./format.js";

// What each guardrail (and hold) means, said to the workload's owner.
export const GUARDRAILS = {
  LearningPeriod: "Waiting for enough usage history: the recommendation rests on less than the policy's learning period.",
  LowConfidence: "The recommendation is not sure enough: its confidence is below the policy's minimum.",
  Cooldown: "A change (or a rollback) happened recently; the next one waits for the policy's cooldown.",
  HPACoupled: "A HorizontalPodAutoscaler scales this workload on utilization, and kerf cannot keep its target with the change (coordination is off, the HPA has several metrics, or the target would leave 1–100 %).",
  SingleReplicaUnsafe: "The workload has no Ready pod to spare (one replica, or a PodDisruptionBudget that allows no disruption), and the change would restart or replace it. Annotate it kerf.getkerf.dev/allow-disruption: \"true\" to allow that.",
  UnsupportedNode: "A pod runs on a node that cannot resize in place (swap, or a static CPU or Memory Manager).",
  Throttled: "The container is CPU-throttled above the policy's threshold: kerf does not lower its CPU.",
  OOMKilled: "The container was OOM-killed recently: kerf does not lower its memory.",
  JVMFixedHeap: "A JVM with a fixed maximum heap (-Xmx) ignores a memory change: memory is left as it is (audit only).",
  RestartPolicyRequired: "A JVM or Python process sizes its memory at start: an in-place memory change needs resizePolicy RestartContainer for memory, or the rollout strategy.",
  PodDisruptionBudget: "A PodDisruptionBudget refuses the eviction of an outdated pod; kerf retries until it allows it.",
  ResourceQuota: "The namespace's ResourceQuota has no room for the change (the new pods of a rollout included), so kerf does not start it: the new pods would be refused. Raise the quota or free room in it.",
  LimitRange: "A LimitRange of the namespace would refuse the new values (below its minimum, above its maximum, or a limit too many times its request), so kerf does not apply them.",
  VPAConflict: "A VerticalPodAutoscaler also sets this workload's requests (its updateMode is not Off), so kerf does not change them: the two would undo each other. Set the VPA's updateMode to Off to keep it as a recommender, or remove it.",
  NoFittingNode: "No node has room for a pod of the new size, so kerf does not start the change: its pods would stay Pending. Add capacity, or the change waits until a node has room.",
  OutsideMaintenanceWindow: "Queued for the next maintenance window.",
  FreezeWindow: "Inside a freeze: no change until it ends.",
  Paused: "Automation is paused in the hub.",
  HubUnreachable: "The agent cannot reach the hub: nothing new is applied.",
  ResizeInfeasible: "The pods could not be resized in place, so the change continued as a rollout.",
  ResizeDeferredTimeout: "The resize waited too long for room on the node, so the change continued as a rollout.",
  OOMKills: "OOM kills after the change crossed the policy's threshold.",
  Restarts: "Container restarts after the change crossed the policy's threshold.",
  Throttling: "CPU throttling after the change crossed the policy's threshold.",
  RolloutStalled: "The rollout of the new values stopped making progress (new pods Pending, refused by a quota or limit range, or the controller's progress deadline passed), so the previous values were restored.",
  RollbackError: "The Kubernetes API refused to restore the previous values; the agent keeps trying.",
};

const DETAILS = {
  oomKills: "OOM kills", restarts: "restarts", throttlingRatio: "throttled share", watchDuration: "watched for",
  fallbackReason: "fallback after", container: "container", pod: "pod", hpa: "HPA", heapOption: "heap",
  hpaTargetFrom: "HPA target from %", hpaTargetTo: "HPA target to %", cause: "cause", node: "node",
  resourceQuota: "quota", limitRange: "limit range", resource: "resource", needed: "needed", available: "room left",
  limit: "allowed", value: "new value", podRequests: "new pod requests", largestFree: "most room on a node",
  stall: "stall", updated: "pods with the new values", available: "available", stalledFor: "unchanged for",
  scheduling: "scheduler", failure: "refused", replicaSet: "ReplicaSet", condition: "condition",
};

/** `SingleReplicaUnsafe` → "Single replica unsafe" (`OOMKilled`, `HPACoupled` kept whole). */
export function reasonWords(reason) {
  const parts = String(reason ?? "").match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+/g) ?? [];
  return parts.map((p, i) => (p.length > 1 && p === p.toUpperCase() ? p : i === 0 ? p : p.toLowerCase())).join(" ");
}

const ENDS = new Set(["applied", "rolled_back", "released"]);

/** The holds in force, newest first, one per reason: the blocks and fallbacks since the
 *  last change, and the resources refused inside that change (a block of one resource
 *  reported with the change's recommendation just before it). `events` newest first. */
export function holds(events) {
  const out = [];
  const add = (e) => { if (!out.some((x) => x.reason === e.reason)) out.push(e); };
  let change = null;
  for (const e of events) {
    if (!change) {
      if (ENDS.has(e.type)) change = e;
      else if (e.type === "blocked" || e.type === "fallback") add(e);
      continue;
    }
    const same = e.recommendationID === change.recommendationID;
    const inside = same && ((e.type === "blocked" && (e.resources ?? []).length > 0) || e.type === "fallback");
    if (!inside) break;
    add(e);
  }
  return out;
}

function Details({ d }) {
  const entries = Object.entries(d ?? {}).filter(([k]) => DETAILS[k]);
  if (entries.length === 0) return null;
  return html`<span class="small muted"> · ${entries.map(([k, v]) => `${DETAILS[k]} ${k === "throttlingRatio" ? fmt.percent(Number(v)) : v}`).join(" · ")}</span>`;
}

function values(side) {
  const part = (kind) => Object.entries(side?.[kind] ?? {}).map(([r, v]) => `${r} ${kind === "requests" ? "request" : "limit"} ${v}`);
  return [...part("requests"), ...part("limits")].join(", ");
}

function Hold({ e }) {
  return html`<li class="hold">
    <${Badge} kind="warn">${e.type}</${Badge}> <strong>${reasonWords(e.reason)}</strong>${e.resources?.length ? html` <span class="muted">(${e.resources.join(", ")})</span>` : ""}
    <p>${GUARDRAILS[e.reason] ?? ""}</p>
    ${e.message && html`<p class="small">${e.message}</p>`}
    <${Details} d=${e.details} />
  </li>`;
}

function Rollback({ e }) {
  return html`<li class="rollback">
    <time datetime=${e.time}>${fmt.time(e.time)}</time> <${Badge} kind="bad">${e.type === "failed" ? "rollback failed" : "rolled back"}</${Badge}>
    <strong>${reasonWords(e.reason)}</strong>: ${GUARDRAILS[e.reason] ?? ""}
    ${(e.containers ?? []).map((c) => html`<div class="small">${c.name}: ${values(c.from)} → ${values(c.to)}</div>`)}
    <${Details} d=${e.details} />
  </li>`;
}

/** The events of workload `w`, newest first (refetched when `tick` moves). */
export function useWorkloadEvents(w, tick) {
  const q = { cluster: w.cluster, namespace: w.namespace, kind: w.kind, name: w.name, limit: 200 };
  return useApi((signal) => get("/v1/audit", q, { signal }), [w.id, tick]);
}

const ROLLBACKS = (e) => e.type === "rolled_back" || (e.type === "failed" && e.reason === "RollbackError");

/**
 * The agent's word on the workload now, for the top of its page, where the eye lands
 * before the recommendation: held by a guardrail (its latest verdict is a block), or its
 * last change rolled back (since then, nothing was applied). Nothing otherwise.
 */
export function AgentNow({ res, rec }) {
  const events = res?.data?.items ?? [];
  const latest = events.find((e) => e.type !== "released");
  if (!latest) return null;
  const lastApplied = events.findIndex((e) => e.type === "applied");
  const rollback = events.find((e, i) => ROLLBACKS(e) && (lastApplied < 0 || i < lastApplied));
  const held = latest.type === "blocked" ? latest : null;
  if (!held && !rollback) return null;
  return html`<div class="agent-now" role="status">
    ${held && html`<p><strong>Held: kerf does not apply this now.</strong> ${reasonWords(held.reason)}${held.resources?.length ? ` (${held.resources.join(", ")})` : ""}: ${GUARDRAILS[held.reason] ?? held.message}
      ${held.message && GUARDRAILS[held.reason] && html` <span class="small">${held.message}</span>`}</p>`}
    ${rollback && html`<p><strong>${rollback.type === "failed" ? "Rolling back failed" : "Rolled back"} ${fmt.ago(rollback.time)}</strong>: ${reasonWords(rollback.reason)}. ${GUARDRAILS[rollback.reason] ?? ""}
      ${rollback.type !== "failed" ? " The values before the change are live again; the next attempt waits for the policy's cooldown." : ""}</p>`}
    ${rollback && rec && Date.parse(rec.createdAt) < Date.parse(rollback.time) && html`<p class="small muted">The recommendation below was made before the rollback, from the values then; the next run reads the restored ones.</p>`}
    <p class="small"><a href="#guardrails-h">Guardrails</a> has the evidence.</p>
  </div>`;
}

/** The guardrails card of a workload, from its events (`useWorkloadEvents`). */
export function Guardrails({ res }) {
  if (res.error) return html`<${ErrorBox} error=${res.error} retry=${res.reload} what="the guardrails" />`;
  if (!res.data) return html`<${Loading} what="Loading the guardrails" />`;
  const events = res.data.items ?? [];
  const found = holds(events);
  const now = found.filter((e) => e.type === "blocked");
  const fallbacks = found.filter((e) => e.type === "fallback");
  const rollbacks = events.filter(ROLLBACKS);
  if (found.length === 0 && rollbacks.length === 0) return null;
  return html`<section class="card guardrails" aria-labelledby="guardrails-h">
    <h2 id="guardrails-h">Guardrails</h2>
    ${now.length > 0
      ? html`<h3>What holds it back</h3><ul class="holds">${now.map((e) => html`<${Hold} e=${e} />`)}</ul>`
      : html`<p class="muted">No guardrail holds it back now.</p>`}
    ${fallbacks.length > 0 && html`<h3>How the last change went</h3><ul class="holds">${fallbacks.map((e) => html`<${Hold} e=${e} />`)}</ul>`}
    ${rollbacks.length > 0 && html`<h3>Rollbacks</h3>
      <p class="small muted">After each change the agent watches OOM kills, restarts, CPU throttling and whether the rollout makes progress; crossing the policy's thresholds, or a rollout stalled for 10 minutes, restores the values before.</p>
      <ol class="rollbacks">${rollbacks.map((e) => html`<${Rollback} e=${e} />`)}</ol>`}
  </section>`;
}

// An approval's life on the workload page: what would hold the change now (asked before
// approving), and where an approval stands after (pending, carried over to a new
// recommendation asking for the same values, applied, or lapsed with the reason).
import { html } from "../lib.js";
import { get } from "../api.js";
import { useApi } from "../components.js";
import { reasonWords } from "../guardrails.js";
import * as fmt from "../format.js";

/**
 * What the hub knows would hold an approved change now: the learning period against the
 * history behind the recommendation, the minimum confidence, the cooldown since kerf's
 * last change, and the agent's own latest verdict on this workload after this
 * recommendation was made.
 */
export function heldBy(w, rec, effective, lastBlocked, nowMs = Date.now()) {
  const g = effective?.guardrails ?? {};
  const held = [];
  const want = fmt.parseDuration(g.learningPeriod);
  const have = rec.summary?.coveredSeconds;
  if (want != null && have != null && have < want) {
    held.push(`Learning period: ${fmt.duration(have)} of usage history, the policy wants ${fmt.duration(want)}. The agent waits until then.`);
  }
  if (g.minConfidence != null && w.confidence != null && w.confidence < g.minConfidence) {
    held.push(`Minimum confidence: this recommendation's is ${w.confidence}, the policy wants ${g.minConfidence}.`);
  }
  const cooldown = fmt.parseDuration(g.cooldown);
  const last = w.applied?.updatedAt ?? w.applied?.at;
  if (cooldown != null && last && nowMs - Date.parse(last) < cooldown * 1000) {
    held.push(`Cooldown: kerf changed it ${fmt.ago(last)}; the policy waits ${fmt.duration(cooldown)} between changes.`);
  }
  if (lastBlocked && Date.parse(lastBlocked.time) >= Date.parse(rec.createdAt)) {
    held.push(`The agent held it ${fmt.ago(lastBlocked.time)}: ${reasonWords(lastBlocked.reason)}${lastBlocked.message ? ` (${lastBlocked.message})` : ""}`);
  }
  return held;
}

/** Inside the approve dialog: what would hold the change now, or that nothing the hub knows would. */
export function HeldNow({ w, rec, effective }) {
  const last = useApi((signal) => get("/v1/audit", { cluster: w.cluster, namespace: w.namespace, kind: w.kind, name: w.name, type: "blocked", limit: 1 }, { signal }), [w.id]);
  if (last.data === null && !last.error) return html`<p class="small muted" role="status">Checking what would hold it…</p>`;
  const held = heldBy(w, rec, effective, last.data?.items?.[0]);
  return held.length === 0
    ? html`<p class="small held-now">Nothing the hub knows of holds it now: the agent applies it at its next pass, and History shows the result.</p>`
    : html`<div class="held-now warn" role="note"><p class="small"><strong>It would wait:</strong></p>
        <ul class="small">${held.map((h) => html`<li>${h}</li>`)}</ul>
        <p class="small muted">The approval stays pending while the new recommendations ask for the same values.</p></div>`;
}

/** Where the workload's latest approval stands. */
export function ApprovalState({ a }) {
  if (!a) return null;
  const who = a.approvedBy ? ` by ${a.approvedBy}` : "";
  if (a.state === "pending") {
    return html`<p class="small approval-state" role="status">Approved once${who} ${fmt.ago(a.approvedAt)}: the agent applies it at its next pass${a.carriedAt ? html`; carried over to this recommendation ${fmt.ago(a.carriedAt)}, which asks for the same values` : ""}.</p>`;
  }
  if (a.state === "lapsed") {
    return html`<p class="small approval-state warn" role="status">The approval${who} of ${fmt.time(a.approvedAt)} lapsed ${fmt.ago(a.lapsedAt)}: ${a.lapseReason}. Approve the new recommendation if you still want it.</p>`;
  }
  return html`<p class="small approval-state muted">Approved once${who} ${fmt.ago(a.approvedAt)}, applied ${fmt.ago(a.consumedAt)}.</p>`;
}

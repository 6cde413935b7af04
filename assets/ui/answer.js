// The top of a workload page: the answer. What the agent says now when it holds the
// change back or rolled it back, then one sentence (what to change and why), a
// from → to table per container and resource with the reason of each setting, and the
// recommendation taken out of kerf: the server-side apply YAML and the kubectl command
// that applies it, each with a copy button.
import { html } from "./lib.js";
import { Badge, QualityBadge, CopyButton } from "./components.js";
import { sentence, settingWhy, resultOf } from "./reason.js";
import * as fmt from "./format.js";
import { appliedBy, changedText } from "./words.js";
import { AgentNow } from "./guardrails.js";

function FromTo({ s, resource }) {
  if (!s) return html`<span class="muted">—</span>`;
  const q = (v) => fmt.quantity(resource, v);
  const now = s.known === false ? "unknown" : s.current === null || s.current === undefined ? "not set" : q(s.current);
  if (s.recommended === null || s.recommended === undefined) return html`<span>${now}</span> <span class="muted small">keep</span>`;
  return html`<span class="from">${now}</span> → <strong class="to">${q(s.recommended)}</strong>`;
}

/** What a sidecar or init container is, in words, for its badge. */
const ROLE_WORDS = {
  sidecar: ["sidecar", "A native sidecar: an init container with restartPolicy Always, running beside the app for the pod's whole life. Sized and applied like an app container."],
  init: ["init container", "Runs to completion before the app starts. Its values count only while it runs; only new pods take a change (kerf rolls it out)."],
};

export function RoleBadge({ role }) {
  const words = ROLE_WORDS[role];
  if (!words) return null;
  return html` <${Badge} kind="accent" title=${words[1]}>${words[0]}</${Badge}>`;
}

/** Each pod's effective requests, when init containers or sidecars make them more than a sum. */
function PodRequests({ w }) {
  const pod = w.podRequests;
  if (!pod || !(w.resources ?? []).some((c) => c.role)) return null;
  const one = (resource) => {
    const v = pod[resource];
    const q = (x) => fmt.quantity(resource, x);
    const now = v.current == null ? "unknown" : q(v.current);
    const by = v.setByInitContainer ? html` <span class="muted">(set by init container <code>${v.setByInitContainer}</code>)</span>` : null;
    if (v.recommended == null || v.recommended === v.current) return html`<span>${resource === "cpu" ? "CPU" : "memory"} ${now}${by}</span>`;
    return html`<span>${resource === "cpu" ? "CPU" : "memory"} <span class="from">${now}</span> → <strong class="to">${q(v.recommended)}</strong>${by}</span>`;
  };
  return html`<p class="small pod-requests" data-testid="pod-requests"><strong>Each pod reserves</strong> ${one("cpu")}, ${one("memory")}
    <span class="muted">: the app containers and sidecars together, or an init container's while it runs if that is more. This is what the scheduler and the savings count.</span></p>`;
}

function Rows({ w }) {
  const results = w.recommendation?.analysis?.results ?? [];
  return (w.resources ?? []).flatMap((c) => ["cpu", "memory"].map((resource) => {
    const p = c[resource];
    const r = resultOf(results, c.name, resource);
    const why = [settingWhy(r, "requests"), settingWhy(r, "limits")];
    const changes = p && (p.request.recommended != null || p.limit.recommended != null);
    return html`<tr class=${changes ? "changes" : "keeps"} data-container=${c.name} data-resource=${resource}>
      <th scope="row">${c.name}<${RoleBadge} role=${c.role} /></th>
      <td>${resource === "cpu" ? "CPU" : "Memory"}${(r?.notices ?? []).map((n) => html` <${Badge} kind=${n === "potential-memory-leak" || n === "oom-kill-detected" ? "bad" : "warn"}>${fmt.words(n)}</${Badge}>`)}</td>
      <td><${FromTo} s=${p?.request} resource=${resource} /></td>
      <td><${FromTo} s=${p?.limit} resource=${resource} /></td>
      <td class="small">${why[0] && html`<span>request: ${why[0]}</span>`}${why[0] && why[1] && html`<br />`}${why[1] && html`<span>limit: ${why[1]}</span>`}</td>
    </tr>`;
  }));
}

/** The apply YAML and command, ready to copy (absent when nothing changes). */
export function TakeItOut({ apply }) {
  if (!apply) return null;
  return html`<div class="take-out">
    <div class="actions">
      <${CopyButton} text=${apply.yaml} label="Copy YAML" className="" name="yaml" />
      <${CopyButton} text=${apply.command} label="Copy kubectl command" className="" name="command" />
    </div>
    <details class="apply-yaml"><summary class="small">Show the YAML (server-side apply, field manager <code>${apply.fieldManager}</code>)</summary>
      <pre class="json">${apply.yaml}</pre>
      <p class="small muted">Only the containers that change, each with its whole resources block. Apply it with the command, or paste the resources into your manifests.
        The command passes <code>--force-conflicts</code>: it takes these resource fields over from whoever owns them now (Helm, Argo CD, Flux, kubectl), so your next deploy from Git sets them back unless you change them there too.</p>
    </details>
  </div>`;
}

/** kerf's change that is live on the workload: what, when, on whose word, what it saves. */
export function AppliedNote({ a, currency }) {
  if (!a) return null;
  const money = a.realizedMonthly > 0.005 ? `It saves ${fmt.money(a.realizedMonthly, currency)} a month.`
    : a.realizedMonthly < -0.005 ? `It costs ${fmt.money(-a.realizedMonthly, currency)} a month more, to protect the workload.` : "";
  return html`<div class="applied-note" role="status">
    <p><strong>Applied ${fmt.ago(a.at)}</strong> ${appliedBy(a)}, ${fmt.words(a.strategy)}: ${changedText(a.containers)}. ${money}</p>
    ${a.afterRecommendation && html`<p class="small muted">The recommendation below was made before it, from the values it replaced; the next run reads the new ones.</p>`}
  </div>`;
}

export function Answer({ w, currency, events, children }) {
  const rec = w.recommendation;
  return html`<section class="card answer" aria-labelledby="answer-h">
    <h2 id="answer-h">What to change</h2>
    <${AgentNow} res=${events} rec=${rec} />
    <${AppliedNote} a=${w.applied} currency=${currency} />
    <p class="answer-sentence">${sentence(w, currency)}</p>
    ${rec && html`<div class="table-wrap"><table class="compact answer-table">
      <thead><tr><th scope="col">Container</th><th scope="col">Resource</th><th scope="col">Request</th><th scope="col">Limit</th><th scope="col">Why</th></tr></thead>
      <tbody><${Rows} w=${w} /></tbody>
    </table></div>`}
    ${rec && html`<${PodRequests} w=${w} />`}
    ${rec && w.kind === "CronJob" && html`<p class="small muted" data-testid="batch-note">A CronJob: sized from the usage of its runs together (memory for the peak of any run), and applied to its job template, so the next run starts with the new values; a run in progress keeps its own.</p>`}
    ${rec && w.kind === "Job" && html`<p class="small muted" data-testid="batch-note">A Job without a CronJob: recommended only, never applied (a Job's pod template is immutable). Put the values in whatever creates the Job.</p>`}
    ${rec && w.kind === "Rollout" && html`<p class="small muted" data-testid="argo-note">An Argo Rollout: kerf changes its pod template and Argo rolls the change out with the Rollout's own strategy, even where the policy says in place (annotate the Rollout <code>kerf.getkerf.dev/argo-in-place: "true"</code> to let kerf resize its pods).</p>`}
    ${rec && html`<p class="small muted meta">
      <${QualityBadge} status=${w.dataQuality} /> confidence ${w.confidence ?? "—"} ·
      <strong class=${w.estimatedMonthlyCostDelta < 0 ? "ok" : w.estimatedMonthlyCostDelta > 0 ? "bad" : ""}>${fmt.delta(w.estimatedMonthlyCostDelta, currency)}</strong> ·
      made ${fmt.ago(rec.createdAt)} by run <code>${String(rec.runId).slice(0, 8)}</code></p>`}
    <${TakeItOut} apply=${w.apply} />
    ${children}
  </section>`;
}

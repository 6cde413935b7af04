// The effective policy of a workload, readable: each setting with its value and where it
// came from (a policy and its version, a RightsizingPolicy of the cluster and its
// generation, the workload's override, or the default).
import { html } from "../lib.js";
import { Badge, Async } from "../components.js";
import { flatten, grouped, label, valueText } from "../policyview.js";
import * as fmt from "../format.js";
import { clusterPolicyHref } from "./cluster-policies.js";

/** The origin of `path`: its own entry, or the nearest ancestor's (analysis is one block). */
function originOf(origins, path) {
  const segs = path.split(".");
  for (let n = segs.length; n > 0; n--) {
    const o = origins?.[segs.slice(0, n).join(".")];
    if (o) return o;
  }
  return { source: "default" };
}

export function Origin({ o }) {
  if (o.source === "cluster-policy") return html`<a class="badge origin policy cluster" href=${clusterPolicyHref(o.id)} title=${`RightsizingPolicy ${o.name} of cluster ${o.cluster}, generation ${o.generation}`}>${o.name} (cluster) g${o.generation}</a>`;
  if (o.source === "policy") return html`<a class="badge origin policy" href=${`/policies/${o.id}`} title=${`policy ${o.name}, version ${o.version}`}>${o.name} v${o.version}</a>`;
  if (o.source === "override") return html`<${Badge} kind="warn">override</${Badge}>`;
  return html`<${Badge} kind="muted">default</${Badge}>`;
}

export function EffectivePolicy({ res, rec }) {
  return html`<section class="card effective" aria-labelledby="effective-h">
    <h2 id="effective-h">Effective policy</h2>
    <${Async} res=${res} what="the effective policy">${(p) => html`<${Body} p=${p} rec=${rec} />`}</${Async}>
  </section>`;
}

function Body({ p, rec }) {
  const rows = flatten(p.effective);
  const main = rows.filter((r) => !r.path.startsWith("analysis."));
  const analysis = rows.filter((r) => r.path.startsWith("analysis."));
  const stale = rec && p.recommendationStale;
  return html`
    <p class="small">${p.policies.length === 0
      ? html`No policy selects this workload: every setting is the default${p.override ? " or the override" : ""}.`
      : html`Policies that select it, first wins${p.policies.some((x) => x.source === "cluster") ? " (the cluster's own come first)" : ""}: ${p.policies.map((x, i) => html`${i ? ", " : ""}${x.source === "cluster"
        ? html`<a href=${clusterPolicyHref(x.id)}>${x.name}</a> <span class="muted">from the cluster, generation ${x.version}, priority ${x.priority}</span>`
        : html`<a href=${`/policies/${x.id}`}>${x.name}</a> <span class="muted">v${x.version}, priority ${x.priority}</span>`}`)}.`}
      ${p.override && html` An override ${p.override.active ? "is in force" : "has expired and is ignored"}${p.override.expiresAt ? ` (until ${fmt.time(p.override.expiresAt)})` : ""}.`}</p>
    ${stale && html`<p class="notice small" role="note">The latest recommendation was made under another effective policy; it will be renewed by the next run and cannot be approved before.</p>`}
    <table class="compact settings-table"><thead><tr><th scope="col">Setting</th><th scope="col">Value</th><th scope="col">From</th></tr></thead>
      <tbody>${[...grouped(main)].map(([sec, rs]) => html`<tr class="group"><th colspan="3" scope="rowgroup">${sec}</th></tr>
        ${rs.map((r) => html`<tr key=${r.path}><th scope="row">${label(r.path)}</th><td><code>${valueText(r.path, r.value)}</code></td><td><${Origin} o=${originOf(p.origins, r.path)} /></td></tr>`)}`)}
      </tbody></table>
    ${analysis.length > 0 && html`<details class="analysis-settings"><summary>Analysis settings (${analysis.length}) from <${Origin} o=${originOf(p.origins, "analysis")} /></summary>
      <table class="compact settings-table"><tbody>${analysis.map((r) => html`<tr key=${r.path}><th scope="row">${label(r.path)}</th><td><code>${valueText(r.path, r.value)}</code></td></tr>`)}</tbody></table>
    </details>`}
    <p class="small muted">Identity <code title=${p.identity}>${p.identity.slice(0, 18)}…</code></p>`;
}

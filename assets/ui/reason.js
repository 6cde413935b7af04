// The answer of a workload page in words: one sentence saying what to change and why
// (usage against the request, OOM kills, a potential leak), and a short reason per
// setting from the decision trace. Pure (tested in plain node): it reads the workload
// detail the API answers and says only what its evidence holds.
import * as fmt from "./format.js";
import { explain } from "./explain.js";

const RES = { cpu: "CPU", memory: "memory" };

/** The engine's results of one container and resource. */
export function resultOf(results, container, resource) {
  return results.find((r) => r.target?.container === container && r.resource === resource) ?? null;
}

/** "p95" or "peak": how the usage figure was taken. */
function statistic(r) {
  const src = r?.decisionTrace?.source;
  if (src?.percentile) return `p${src.percentile}`;
  return "peak";
}

function usageOf(r) {
  const u = r?.evidence?.aggregatedUsage;
  return u?.available === false ? null : u?.value ?? null;
}

/** A short reason for one setting of one resource: "p95 328m × 3", "3× the request". */
export function settingWhy(r, setting) {
  const s = r?.decisionTrace?.settings?.find((x) => x.setting === setting);
  if (!s) return r?.noActionReason ? explain(r.noActionReason) || fmt.words(r.noActionReason) : "";
  if (s.disposition !== "recommended") {
    const why = (s.reasons ?? [])[0];
    return why ? `kept: ${explain(why) || fmt.words(why)}` : "kept";
  }
  const q = (v) => fmt.quantity(r.resource, v);
  const parts = [];
  for (const step of s.steps ?? []) {
    const v = step.values ?? {};
    if (step.rule === "usage × headroom") parts.push(`${statistic(r)} usage ${q(v.usage)} × ${v.coefficient}`);
    else if (step.rule === "OOM floor" && v.floor >= v.baseline) parts.push(`OOM floor (${v.coefficient}× the limit at the kill)`);
    else if (step.rule === "request × limit ratio") parts.push(`${v.ratio}× the request`);
    else if (step.rule === "initialize unset setting") parts.push("not set today");
    else if (/bounds$/.test(step.rule) && v.before !== undefined && v.candidate !== v.before) parts.push(`held to the policy's ${step.rule}`);
  }
  return parts.join("; ");
}

/** The OOM kills behind a memory change; `limitNow` is the memory limit in force. */
function oomClause(r, limitNow) {
  const kills = r?.evidence?.oomKills ?? [];
  if (kills.length === 0) return null;
  const last = Math.max(...kills.map((k) => k.timestamp));
  const limit = kills.find((k) => k.timestamp === last)?.memoryLimitBytes;
  // Killed under a lower limit than today's: say so, or the sentence reads as if the
  // limit in force were the one the kills hit.
  const since = limit && limitNow && limitNow > limit * 1.01 ? `, and its limit is ${fmt.bytes(limitNow)} since` : "";
  return `it was OOM-killed ${kills.length === 1 ? "once" : `${kills.length} times`}${limit ? ` at a ${fmt.bytes(limit)} limit` : ""} (last ${fmt.ago(last)})${since}`;
}

function leakClause(r) {
  const leak = r?.memoryLeak;
  if (leak?.status !== "potential-leak") return null;
  const eps = (leak.episodes ?? []).filter((e) => e.status === "potential-leak");
  const slope = eps.length ? Math.max(...eps.map((e) => e.slopeBytesPerHour ?? 0)) : 0;
  return `memory keeps growing${slope > 0 ? ` about ${fmt.bytes(slope)}/h` : ""} in ${leak.suspectedEpisodes} of ${leak.evaluatedEpisodes} pods, a potential leak (more memory only buys time)`;
}

/** What changes in one resource, in words: "its request 2 cores → 250m". */
function change(plan, resource) {
  const q = (v) => fmt.quantity(resource, v);
  const bits = [];
  for (const [name, s] of [["request", plan.request], ["limit", plan.limit]]) {
    if (s.recommended === null || s.recommended === undefined) continue;
    bits.push(`${name} ${s.current === null || s.current === undefined ? "not set" : q(s.current)} → ${q(s.recommended)}`);
  }
  return bits.length ? `${RES[resource]} ${bits.join(", ")}` : null;
}

/** Usage against the request in force, for a resource whose request changes. */
function usageClause(r, plan, resource) {
  const used = usageOf(r);
  const req = plan.request;
  if (used === null || req.current === null || req.current === undefined || req.recommended == null) return null;
  const q = (v) => fmt.quantity(resource, v);
  const stat = statistic(r);
  const name = RES[resource];
  if (req.recommended < req.current) return `${name} use (${stat} ${q(used)}) is ${fmt.percent(used / req.current)} of its ${q(req.current)} request`;
  if (used > req.current) return `${name} use (${stat} ${q(used)}) is above its ${q(req.current)} request`;
  return `${name} use (${stat} ${q(used)}) leaves too little headroom under its ${q(req.current)} request`;
}

/**
 * The workload's answer in one sentence: the verdict (save, spend or keep), then per
 * resource what the evidence says, OOM kills and a potential leak included.
 */
export function sentence(w, currency) {
  const results = w.recommendation?.analysis?.results ?? [];
  if (!w.recommendation) return "No recommendation yet: no run has analysed this workload.";
  if (!w.hasRecommendation) {
    const why = results.map((r) => r.noActionReason).find(Boolean);
    return `Keep it as it is${why ? `: ${(explain(why) || fmt.words(why)).replace(/\.$/, "").toLowerCase()}` : ": the settings in force fit the usage"}.`;
  }
  // A change kerf applied after this recommendation was made is done: the rest is what
  // is left (the money already counts only the rest).
  const live = w.applied?.afterRecommendation ? w.applied.chain?.inForce ?? {} : {};
  const done = (container, resource) => live[container]?.[resource] != null;
  const d = w.estimatedMonthlyCostDelta;
  // Which way the requests left to change go: "shrink" only when none goes up.
  const moves = (w.resources ?? []).flatMap((c) => ["cpu", "memory"].filter((r) => !done(c.name, r)).map((r) => c[r]?.request))
    .filter((q) => q?.recommended != null && q.current != null && q.recommended !== q.current)
    .map((q) => Math.sign(q.recommended - q.current));
  const mixed = moves.includes(1) && moves.includes(-1);
  const verdict = d === null || d === undefined ? "Change it (no cost estimate)"
    : mixed ? `Rebalance it${d < -0.005 ? `, saving ${fmt.money(-d, currency)} a month` : d > 0.005 ? `, for ${fmt.money(d, currency)} a month more` : " (no cost change)"}`
    : d < -0.005 ? `Shrink it to save ${fmt.money(-d, currency)} a month`
    : d > 0.005 ? `Grow it, for ${fmt.money(d, currency)} a month more`
    : "Adjust it (no cost change)";
  const clauses = [];
  for (const plan of w.resources ?? []) {
    for (const resource of ["cpu", "memory"]) {
      const p = plan[resource];
      if (!p || (p.request.recommended == null && p.limit.recommended == null)) continue;
      if (done(plan.name, resource)) continue;
      const r = resultOf(results, plan.name, resource);
      const context = [
        resource === "memory" ? oomClause(r, p.limit?.current) : null,
        resource === "memory" ? leakClause(r) : null,
      ].filter(Boolean);
      const use = context.length ? null : usageClause(r, p, resource);
      const what = change(p, resource);
      const who = (w.resources ?? []).length > 1 ? ` (${plan.name})` : "";
      const lead = [use, ...context].filter(Boolean).join(", and ");
      clauses.push(lead ? `${lead}${who}, so ${what}` : `${what}${who}`);
    }
  }
  if (clauses.length === 0 && w.applied?.afterRecommendation) {
    return `Done: kerf applied this recommendation ${fmt.ago(w.applied.at)}. Nothing is left to change until the next run reads the cluster again.`;
  }
  return `${verdict}: ${clauses.join("; ")}.`;
}

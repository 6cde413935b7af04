// Every sentence kerf writes agrees with the table beside it (issue 27, defect 5). For
// every workload of `kerf demo` (both clusters, the guardrail scenarios included), the
// workload page's one sentence (assets/ui/reason.js, rendered here from the API's
// answer exactly as the page renders it) is checked against the from → to table:
//   - "Shrink" only when no request goes up, "Grow" only when none goes down (a change
//     that does both is a "Rebalance"); on main the leaking ingest-worker was headed
//     "Shrink it" while its memory went 512 → 707 MiB;
//   - every "a → b" it names is a row of the table;
//   - OOM kills at a lower limit than today's say the limit in force (on main,
//     session-store read "OOM-killed at a 256 MiB limit, so memory limit 2 GiB → 6 GiB").
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startHub, until } from "./lib/hub.js";
import { sentence } from "../../assets/ui/reason.js";
import * as fmt from "../../assets/ui/format.js";

let hub;
before(async () => { hub = await startHub(); });
after(async () => { await hub?.stop(); });

const get = async (path) => {
  const r = await hub.api("GET", path);
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  return r.body;
};

/** The table's rows as the sentence would write them: "request 2 cores → 250m". */
function rows(w) {
  const out = new Set();
  for (const c of w.resources ?? []) {
    for (const r of ["cpu", "memory"]) {
      for (const s of ["request", "limit"]) {
        const v = c[r]?.[s];
        if (v?.recommended == null) continue;
        out.add(`${s} ${v.current == null ? "not set" : fmt.quantity(r, v.current)} → ${fmt.quantity(r, v.recommended)}`);
      }
    }
  }
  return out;
}

test("every demo workload's sentence agrees with its table", async () => {
  await until("both demo clusters analysed", 3 * 60_000, async () => {
    const runs = await get("/v1/runs?status=succeeded&limit=20");
    const done = new Set(runs.items.map((r) => r.cluster));
    return done.has("demo-east") && done.has("demo-west") ? true : null;
  });
  const list = await get("/v1/workloads?limit=500");
  assert.ok(list.items.length >= 60, `${list.items.length} workloads`);
  let checked = 0;
  for (const item of list.items.filter((w) => w.latestRecommendationId)) {
    const w = await get(`/v1/workloads/${encodeURIComponent(item.id)}`);
    const said = sentence(w, "USD");
    const name = `${w.cluster}/${w.namespace}/${w.name}`;
    if (!w.hasRecommendation) {
      assert.match(said, /^Keep it as it is/, `${name}: ${said}`);
      continue;
    }
    const moves = (w.resources ?? []).flatMap((c) => ["cpu", "memory"].map((r) => c[r]?.request))
      .filter((q) => q?.recommended != null && q.current != null && q.recommended !== q.current)
      .map((q) => Math.sign(q.recommended - q.current));
    if (said.startsWith("Shrink")) assert.ok(!moves.includes(1), `${name} says shrink while a request goes up: ${said}`);
    if (said.startsWith("Grow")) assert.ok(!moves.includes(-1), `${name} says grow while a request goes down: ${said}`);
    if (moves.includes(1) && moves.includes(-1)) assert.match(said, /^Rebalance it/, `${name}: ${said}`);
    const table = rows(w);
    for (const m of said.matchAll(/(request|limit) ((?:not set)|[\d.]+ ?(?:m|cores?|MiB|GiB|KiB|B)) → ([\d.]+ ?(?:m|cores?|MiB|GiB|KiB|B))/g)) {
      assert.ok(table.has(m[0]), `${name} says "${m[0]}", not a row of its table ${[...table].join(" | ")}: ${said}`);
    }
    for (const m of said.matchAll(/OOM-killed [^(]* at a ([\d.]+ (?:MiB|GiB)) limit/g)) {
      const limits = (w.resources ?? []).map((c) => c.memory?.limit?.current).filter((v) => v != null).map((v) => fmt.bytes(v));
      if (limits.length && !limits.includes(m[1])) {
        assert.match(said, new RegExp(`its limit is (${limits.join("|")}) since`), `${name}: killed at ${m[1]}, limit now ${limits}: ${said}`);
      }
    }
    checked += 1;
  }
  assert.ok(checked >= 40, `${checked} sentences checked`);
  console.log(`${checked} sentences agree with their tables`);
});

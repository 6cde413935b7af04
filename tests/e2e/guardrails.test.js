// `kerf demo` shows the agent's guardrails (issue 13, done means 5; issue 32, done means
// 3): within 10 minutes of the start, the audit trail holds at least 6 distinct
// blocked/fallback reasons (a ResourceQuota without room among them) and two rollbacks
// (an OOM kill; a rollout that stalled), and each of those workloads' pages says, in
// words, what holds it back (and, for the rolled-back ones, what was restored and why).
import { test } from "node:test";
import assert from "node:assert/strict";
import { until } from "./lib/hub.js";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

let hub, browser, tab, page;
const started = Date.now();

withSignedInPage({ ready: (s) => ({ hub, browser, tab, page } = s) });


// The plain words the workload page must use for each reason.
const WORDS = {
  SingleReplicaUnsafe: /no Ready pod to spare/,
  HPACoupled: /HorizontalPodAutoscaler scales this workload/,
  Throttled: /CPU-throttled above the policy's threshold/,
  OOMKilled: /OOM-killed recently/,
  JVMFixedHeap: /fixed maximum heap/,
  RestartPolicyRequired: /needs resizePolicy RestartContainer/,
  PodDisruptionBudget: /PodDisruptionBudget refuses the eviction/,
  ResizeInfeasible: /could not be resized in place/,
  ResourceQuota: /ResourceQuota has no room for the change/,
};

test("within 10 minutes the demo shows 6 guardrails and a rollback, each explained on its page", async () => {
  const events = await until("6 blocked/fallback reasons and a rollback", 10 * 60_000 - (Date.now() - started), async () => {
    const r = await hub.api("GET", "/v1/audit?cluster=demo-east&limit=500");
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const held = new Set(r.body.items.filter((e) => e.type === "blocked" || e.type === "fallback").map((e) => e.reason));
    const rolled = (reason) => r.body.items.some((e) => e.type === "rolled_back" && e.reason === reason);
    return held.size >= 6 && rolled("OOMKills") && rolled("RolloutStalled") ? r.body.items : null;
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  const held = [...new Set(events.filter((e) => e.type === "blocked" || e.type === "fallback").map((e) => e.reason))];
  console.log(`${held.length} blocked/fallback reasons and a rollback ${seconds} s after the demo started: ${held.join(", ")}`);

  // Each guardrail workload's page says what holds it back, in words.
  const guarded = events.filter((e) => e.workload.namespace === "guardrails" && WORDS[e.reason]);
  const byReason = new Map();
  for (const e of guarded) if (!byReason.has(e.reason)) byReason.set(e.reason, e);
  assert.ok(byReason.size >= 6, `guardrail reasons on the guardrails namespace: ${[...byReason.keys()]}`);
  for (const [reason, e] of byReason) {
    const list = await hub.api("GET", `/v1/workloads?cluster=demo-east&q=${encodeURIComponent(e.workload.name)}&limit=20`);
    const w = list.body.items.find((x) => x.namespace === "guardrails" && x.name === e.workload.name);
    assert.ok(w, `workload ${e.workload.name} in the list`);
    await go(page, `/workloads/${w.id}`);
    await page.locator("h1", { hasText: e.workload.name }).waitFor({ timeout: 15000 });
    const card = page.locator("section.card.guardrails");
    await card.waitFor({ timeout: 15000 });
    await settled(page);
    const text = await card.textContent();
    assert.match(text, WORDS[reason], `${e.workload.name}'s page explains ${reason}: ${text}`);
    // A workload whose latest verdict is this block says so first, above the
    // recommendation, where the eye lands (not "Shrink it to save…" alone).
    const latest = events.find((x) => x.workload.namespace === "guardrails" && x.workload.name === e.workload.name && x.type !== "released");
    if (latest === e && e.type === "blocked") {
      const top = await page.locator("section.answer .agent-now").textContent();
      assert.match(top, /^Held: kerf does not apply this now\./, `${e.workload.name}: ${top}`);
      assert.match(top, WORDS[reason], `${e.workload.name}: ${top}`);
    }
    if (reason === "ResourceQuota") await screenshot(page, "guardrails-quota");
    if (reason === "SingleReplicaUnsafe") await screenshot(page, "guardrails-single-replica");
  }

  // The rolled-back workloads' pages: the rollback history with what was restored and
  // why (an OOM kill after the change; a rollout whose new pods never became Ready).
  const rollbackWords = {
    OOMKills: [/OOM kills after the change crossed the policy's threshold/, "guardrails-rollback"],
    RolloutStalled: [/rollout of the new values stopped making progress/, "guardrails-stalled"],
  };
  for (const [reason, [words, shot]] of Object.entries(rollbackWords)) {
    const rb = events.find((e) => e.type === "rolled_back" && e.reason === reason);
    const list = await hub.api("GET", `/v1/workloads?cluster=demo-east&q=${encodeURIComponent(rb.workload.name)}&limit=20`);
    const w = list.body.items.find((x) => x.namespace === rb.workload.namespace && x.name === rb.workload.name);
    await go(page, `/workloads/${w.id}`);
    await page.locator("h1", { hasText: rb.workload.name }).waitFor({ timeout: 15000 });
    const rollbacks = page.locator("section.card.guardrails .rollbacks li");
    await rollbacks.first().waitFor({ timeout: 15000 });
    const text = await rollbacks.first().textContent();
    assert.match(text, /rolled back/);
    assert.match(text, words, `${rb.workload.name}: ${text}`);
    assert.match(text, /→/, `the restored values: ${text}`);
    // And the top of the page says it was rolled back before any recommendation.
    const top = await page.locator("section.answer .agent-now").textContent();
    assert.match(top, /Rolled back .* ago/, `${rb.workload.name}: ${top}`);
    assert.match(top, words, `${rb.workload.name}: ${top}`);
    await settled(page);
    await screenshot(page, shot);
  }
  tab.assertClean("guardrail pages");
});

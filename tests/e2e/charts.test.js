// The charts a newcomer sees in `kerf demo` (issue 27, defect 7). leaky-worker is
// OOM-killed again and again: its memory chart marks the kills per pixel column along
// the top with counts that do not overlap, not thousands of full-height lines (a red
// block with "OOM ×64" labels over each other on main). Memory axes step in binary
// units (128 MiB, 256 MiB; main had 95.4 / 191 / 286 MiB). The legend shows the newest
// values before anyone hovers (main: "usage: —"). "Actions over time" fits its axis to
// the events (hours for a young install; main: 30 days holding one).
import { test } from "node:test";
import assert from "node:assert/strict";
import { until } from "./lib/hub.js";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

let hub, tab, page;
withSignedInPage({ ready: (s) => ({ hub, tab, page } = s) });

const MIB = 1024 * 1024;

test("dense OOM kills stay readable, memory ticks are binary, the legend has values, the actions axis fits", async () => {
  const w = await until("leaky-worker analysed", 3 * 60_000, async () => {
    const r = await hub.api("GET", "/v1/workloads?cluster=demo-east&namespace=guardrails&limit=50");
    return r.body.items.find((x) => x.name === "leaky-worker" && x.latestRecommendationId) ?? null;
  });
  const detail = (await hub.api("GET", `/v1/workloads/${w.id}`)).body;
  const kills = detail.recommendation.analysis.results.find((r) => r.resource === "memory").evidence.oomKills.length;
  assert.ok(kills > 100, `leaky-worker has many OOM kills: ${kills}`);
  await go(page, `/workloads/${encodeURIComponent(w.id)}`);
  const mem = page.locator("figure[data-resource=memory] .chart-box");
  await page.waitForFunction(() => document.querySelector("figure[data-resource=memory] .chart-box[data-oom-labels]"), null, { timeout: 20000 });
  await settled(page);
  const width = await mem.evaluate((el) => el.clientWidth);
  const columns = Number(await mem.getAttribute("data-oom-columns"));
  assert.ok(columns >= 1 && columns <= width, `${columns} marked columns on a ${width} px chart for ${kills} kills`);
  const labels = (await mem.getAttribute("data-oom-label-xs")).split(",").map(Number);
  assert.ok(labels.length >= 1 && labels.length < 20, `${labels.length} labels`);
  // "OOM ×1234" at 11 px is under 70 px wide: labels that far apart do not overlap.
  for (let i = 1; i < labels.length; i++) assert.ok(labels[i] - labels[i - 1] >= 56, `labels at ${labels[i - 1]} and ${labels[i]} overlap`);

  const ticks = (await mem.getAttribute("data-y-ticks")).split(",").map(Number);
  assert.ok(ticks.length >= 2, `${ticks}`);
  const step = ticks[1] - ticks[0];
  assert.ok(step >= MIB && Number.isInteger(Math.log2(step)), `memory ticks step ${step / MIB} MiB, a power of two: ${ticks.map((t) => t / MIB)}`);

  const legend = await page.locator("figure[data-resource=memory] .u-legend .u-series").nth(1).locator(".u-value").textContent();
  assert.match(legend, /\d/, `the usage legend shows a value before any hover: ${legend}`);
  await screenshot(page, "leaky-worker-charts");

  await until("the agents' first events", 3 * 60_000, async () => {
    const r = await hub.api("GET", "/v1/audit?limit=1");
    return r.body.items?.length ? true : null;
  });
  await go(page, "/");
  const actions = page.locator(".actions-chart");
  await actions.waitFor({ timeout: 30000 });
  assert.equal(await actions.getAttribute("data-bucket"), "hour", "a young install's events, per hour");
  const from = Number(await actions.getAttribute("data-from"));
  assert.ok(Date.now() / 1000 - from < 2 * 86400, "the axis starts at the first event, not 30 days back");
  tab.assertClean("charts");
});

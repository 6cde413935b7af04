// The UI's pure parts in plain node (no browser): units, the charts' scales and OOM
// labels (assets/ui/chartscale.js), and the answer sentence (assets/ui/reason.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fmt from "../../assets/ui/format.js";
import { timeRange, valueRange, oomLabels, MIN_SPAN_S } from "../../assets/ui/chartscale.js";
import { sentence, settingWhy } from "../../assets/ui/reason.js";

const GI = 1024 ** 3;
const MI = 1024 ** 2;

test("units are grammatical", () => {
  assert.equal(fmt.cpu(1000), "1 core");
  assert.equal(fmt.cpu(2000), "2 cores");
  assert.equal(fmt.cpu(1500), "1.5 cores");
  assert.equal(fmt.cpu(250), "250m");
  assert.equal(fmt.count(1, "OOM kill"), "1 OOM kill");
  assert.equal(fmt.count(18, "OOM kill"), "18 OOM kills");
  assert.equal(fmt.count(2, "series", "series"), "2 series");
});

test("the time axis spans the data, at least the minimum span, ending at the newest sample", () => {
  assert.deepEqual(timeRange([100, 5000, 2000]), [100, 5000]);
  const now = 1_800_000_000;
  assert.deepEqual(timeRange([now]), [now - MIN_SPAN_S, now], "one sample is not a dot in years");
  assert.deepEqual(timeRange([now - 1200, now]), [now - 1200, now], "20 minutes are 20 minutes");
  assert.equal(timeRange([]), null);
});

test("the CPU axis scales to usage and requests; a far limit is named off the scale", () => {
  const lines = [
    { label: "current request", kind: "current-request", value: 500 },
    { label: "recommended request", kind: "recommended-request", value: 983 },
    { label: "recommended limit", kind: "recommended-limit", value: 4913 },
  ];
  const r = valueRange("cpu", 400, lines);
  assert.ok(Math.abs(r.max - 983 * 1.1) < 1e-9);
  assert.deepEqual(r.offScale.map((l) => l.label), ["recommended limit"]);
  // A limit just above the requests is drawn.
  const near = valueRange("cpu", 400, [{ label: "current limit", kind: "current-limit", value: 1100 }, ...lines.slice(0, 2)]);
  assert.equal(near.offScale.length, 0);
  // Memory keeps its limits on the scale: OOM kills happen there.
  const mem = valueRange("memory", 300 * MI, [{ label: "current limit", kind: "current-limit", value: 2 * GI }]);
  assert.ok(mem.max > 2 * GI && mem.offScale.length === 0);
});

test("OOM labels closer than the gap merge, and the rest stay the gap apart", () => {
  const xs = [10, 12, 15, 100, 101, 300, 50];
  const labels = oomLabels(xs, 56);
  assert.deepEqual(labels, [{ x: 10, n: 4 }, { x: 100, n: 2 }, { x: 300, n: 1 }]);
  for (let i = 1; i < labels.length; i++) assert.ok(labels[i].x - labels[i - 1].x >= 56);
  assert.equal(labels.reduce((s, l) => s + l.n, 0), xs.length);
});

const trace = (setting, steps, disposition = "recommended") => ({ setting, disposition, steps });

test("the sentence says what changes and why, with the leak and OOM context", () => {
  const leak = {
    recommendation: { analysis: { results: [{
      target: { container: "worker" }, resource: "memory", notices: ["potential-memory-leak"],
      evidence: { aggregatedUsage: { value: 1.3 * GI } },
      memoryLeak: { status: "potential-leak", evaluatedEpisodes: 2, suspectedEpisodes: 2, episodes: [{ status: "potential-leak", slopeBytesPerHour: 16 * MI }] },
      decisionTrace: { source: { method: "maximum" }, settings: [trace("limits", [{ rule: "request × limit ratio", values: { ratio: 3 } }])] },
    }] } },
    hasRecommendation: true,
    estimatedMonthlyCostDelta: 22.27,
    resources: [{ name: "worker", cpu: { request: { current: 500, recommended: null }, limit: { current: null, recommended: null } },
      memory: { request: { current: 1.5 * GI, recommended: null }, limit: { current: 2 * GI, recommended: 4.63 * GI } } }],
  };
  assert.equal(sentence(leak, "USD"), "Grow it, for $22.27 a month more: memory keeps growing about 16 MiB/h in 2 of 2 pods, a potential leak (more memory only buys time), so memory limit 2 GiB → 4.63 GiB.");
  assert.equal(settingWhy(leak.recommendation.analysis.results[0], "limits"), "3× the request");

  const oom = {
    recommendation: { analysis: { results: [{
      target: { container: "app" }, resource: "memory",
      evidence: { oomKills: [{ timestamp: Date.now() - 3 * 86400_000, memoryLimitBytes: 256 * MI }, { timestamp: Date.now() - 86400_000, memoryLimitBytes: 256 * MI }] },
      decisionTrace: { settings: [trace("requests", [{ rule: "usage × headroom", values: { usage: 255 * MI, coefficient: 1.2 } }, { rule: "OOM floor", values: { baseline: 300 * MI, floor: 384 * MI, coefficient: 1.5 } }])] },
    }] } },
    hasRecommendation: true,
    estimatedMonthlyCostDelta: 1.5,
    resources: [{ name: "app", cpu: { request: { current: 250, recommended: null }, limit: { current: null, recommended: null } },
      memory: { request: { current: 256 * MI, recommended: 384 * MI }, limit: { current: null, recommended: null } } }],
  };
  assert.equal(sentence(oom, "USD"), "Grow it, for $1.50 a month more: it was OOM-killed 2 times at a 256 MiB limit (last 1 d ago), so memory request 256 MiB → 384 MiB.");
  assert.equal(settingWhy(oom.recommendation.analysis.results[0], "requests"), "peak usage 255 MiB × 1.2; OOM floor (1.5× the limit at the kill)");

  const keep = { recommendation: { analysis: { results: [{ noActionReason: "no-material-change" }] } }, hasRecommendation: false, resources: [] };
  assert.equal(sentence(keep, "USD"), "Keep it as it is: the change would be too small to be worth making.");
});

test("before an approval, the page names what would hold the change now", async () => {
  const { heldBy } = await import("../../assets/ui/pages/approval-state.js");
  const seconds = fmt.parseDuration;
  assert.equal(seconds("7d"), 604800);
  assert.equal(seconds("6h"), 21600);
  assert.equal(seconds("soon"), null);
  const now = Date.parse("2026-12-06T12:00:00Z");
  const rec = { createdAt: "2026-12-06T11:00:00Z", summary: { coveredSeconds: 6 * 86400 } };
  const effective = { guardrails: { learningPeriod: "7d", minConfidence: 70, cooldown: "24h" } };
  const w = { confidence: 60, applied: { at: "2026-12-06T10:00:00Z" } };
  const blocked = { time: "2026-12-06T11:30:00Z", reason: "Paused", message: "automation is paused for demo-east" };
  const held = heldBy(w, rec, effective, blocked, now);
  assert.equal(held.length, 4, held.join("\n"));
  assert.match(held[0], /^Learning period: 6 days of usage history, the policy wants 7 days/);
  assert.match(held[1], /this recommendation's is 60, the policy wants 70/);
  assert.match(held[2], /^Cooldown: kerf changed it/);
  assert.match(held[3], /automation is paused for demo-east/);
  const clear = heldBy({ confidence: 95 }, { ...rec, summary: { coveredSeconds: 7 * 86400 } }, effective, { ...blocked, time: "2026-12-06T10:00:00Z" }, now);
  assert.deepEqual(clear, [], "a verdict older than the recommendation, and nothing else, holds nothing");
});

test("dense OOM marks: one per pixel column, labels merged until their text does not overlap", async () => {
  const { oomColumns, unoverlapped, MEMORY_INCRS } = await import("../../assets/ui/chartscale.js");
  const cols = oomColumns([10.2, 10.4, 11, 50, 50.3]);
  assert.deepEqual(cols, [{ x: 10, n: 2 }, { x: 11, n: 1 }, { x: 50, n: 2 }]);
  const width = (n) => (n > 1 ? 40 : 25);
  assert.deepEqual(unoverlapped([{ x: 0, n: 3 }, { x: 30, n: 2 }, { x: 100, n: 1 }], width, 6), [{ x: 0, n: 5 }, { x: 100, n: 1 }]);
  assert.ok(MEMORY_INCRS.every((v) => Number.isInteger(Math.log2(v))) && MEMORY_INCRS.includes(128 * 1024 * 1024));
});

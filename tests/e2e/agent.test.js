// `kerf demo` shows the agent acting (issue 12, done means 5): the demo's in-process
// agents apply the recommendations of its auto-patch workloads within 5 minutes of the
// start; the overview's actions chart and the audit trail show the applied changes, the
// clusters are `ready`, and a changed workload's page shows the change (from → to) and,
// after the next run, its new values in force beside its usage.
import { test } from "node:test";
import assert from "node:assert/strict";
import { until } from "./lib/hub.js";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

let hub, browser, tab, page;
const started = Date.now();

withSignedInPage({ ready: (s) => ({ hub, browser, tab, page } = s) });


test("the demo's agents apply changes within 5 minutes, and the UI shows them", async () => {
  const applied = await until("applied events in the audit", 5 * 60_000 - (Date.now() - started), async () => {
    const r = await hub.api("GET", "/v1/audit?type=applied&limit=100");
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.items.length > 0 ? r.body.items : null;
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`first applied change ${seconds} s after the demo started; ${applied.length} so far`);
  assert.ok(applied.every((e) => e.reason === "RecommendationApplied" && e.containers.length > 0));

  // Both clusters are ready: their agents send heartbeats.
  const clusters = await until("ready clusters", 60_000, async () => {
    const r = await hub.api("GET", "/v1/clusters");
    const demo = r.body.items.filter((c) => c.name.startsWith("demo-"));
    return demo.every((c) => c.readiness?.state === "ready") ? demo : null;
  });
  assert.equal(clusters.length, 2);

  // The overview: cluster cards say ready, the actions chart has applied changes.
  // A fresh load (the overview was open since signing in, before the first run).
  await page.goto(`${hub.url}/`);
  await page.waitForSelector("article.card.cluster .readiness .badge");
  await settled(page);
  for (const name of ["demo-east", "demo-west"]) {
    // By the card's own cluster, not its text: another card may mention the name.
    const readiness = page.locator(`article.card.cluster[data-cluster="${name}"] .readiness`);
    assert.match(await readiness.textContent(), /\bready\b/);
    assert.doesNotMatch(await readiness.textContent(), /not-ready/);
  }
  const chart = await page.textContent("section.card:has(h2:text('Actions over time'))");
  assert.match(chart, /applied/);
  assert.doesNotMatch(chart, /No workload events/);
  await screenshot(page, "agent-overview");

  // The audit trail lists them.
  await go(page, "/audit?tab=events&type=applied");
  await settled(page);
  // Codes in words, the code as the tooltip (issue 27, defect 8).
  const rows = page.locator("table tbody tr", { has: page.locator(".code-words[title=RecommendationApplied]", { hasText: "Recommendation applied" }) });
  assert.ok((await rows.count()) > 0, "applied rows in the audit");
  const audit = await page.textContent("table tbody");
  assert.doesNotMatch(audit, /RecommendationApplied|\{"requests"/, "no raw codes or JSON in the audit rows");
  await screenshot(page, "agent-audit-applied");

  // One changed workload: its page shows the change with its values.
  const e = applied.find((x) => x.strategy === "in-place") ?? applied[0];
  const list = await hub.api("GET", `/v1/workloads?cluster=${e.cluster}&q=${encodeURIComponent(e.workload.name)}&limit=20`);
  const w = list.body.items.find((x) => x.namespace === e.workload.namespace && x.name === e.workload.name);
  assert.ok(w, `workload ${e.workload.name} in the list`);
  await go(page, `/workloads/${w.id}`);
  await page.waitForSelector(".timeline .tl-event");
  const event = page.locator(".timeline .tl-event", { hasText: "Recommendation applied" });
  await event.first().waitFor();
  const text = await event.first().textContent();
  const to = e.containers[0].to.requests?.cpu ?? e.containers[0].to.requests?.memory;
  assert.ok(text.includes(`→ ${to}`), `the timeline shows the change to ${to}: ${text}`);
  await screenshot(page, "agent-workload-changed");

  // A later run reads the values now in force (a run's window ends on the minute, so
  // the one right after the change may still end before it): they become the page's
  // current values, beside the usage.
  const container = e.containers[0];
  const resource = container.to.requests?.cpu !== undefined ? "cpu" : "memory";
  // What kerf set last on that container: the newest applied or rolled_back event (the
  // demo's agents keep working while this waits: a later change, or a rollback, moves
  // the values in force on).
  const lastSet = async () => {
    const q = `cluster=${e.cluster}&namespace=${encodeURIComponent(e.workload.namespace)}&name=${encodeURIComponent(e.workload.name)}&limit=50`;
    const events = (await hub.api("GET", `/v1/audit?${q}`)).body.items;
    const last = events.find((x) => x.type === "applied" || x.type === "rolled_back");
    const q2 = last?.containers.find((c) => c.name === container.name)?.to.requests?.[resource];
    return q2 === undefined ? null : resource === "cpu" ? parseCpu(q2) : parseMemory(q2);
  };
  let seen = null;
  await until("the new values in force", 3 * 60_000, async () => {
    await hub.runsDone();
    const run = await hub.api("POST", `/v1/clusters/${e.cluster}/runs`);
    assert.ok([200, 201, 202, 409].includes(run.status), JSON.stringify(run.body));
    await hub.runsDone();
    const want = await lastSet();
    const r = await hub.api("GET", `/v1/workloads/${w.id}`);
    const value = (r.body.current ?? []).find((c) => c.name === container.name)?.[resource]?.request?.value;
    seen = { want, value };
    if (want !== null && value !== undefined && Math.abs(value - want) <= 1e-6 * Math.max(1, want)) return true;
    await new Promise((res) => setTimeout(res, 15000));
    return null;
  }).catch((err) => { throw new Error(`${err.message}; kerf set ${JSON.stringify(seen)} on ${e.workload.name}/${container.name} ${resource}`); });
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll(".chart-box canvas").length >= 2, null, { timeout: 15000 });
  await settled(page);
  await screenshot(page, "agent-workload-after-run");
  tab.assertClean("agent pages");
});

function parseCpu(q) {
  return q.endsWith("m") ? Number(q.slice(0, -1)) : Number(q) * 1000;
}

function parseMemory(q) {
  const units = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
  const m = q.match(/^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti)?$/);
  return Number(m[1]) * (units[m[2]] ?? 1);
}

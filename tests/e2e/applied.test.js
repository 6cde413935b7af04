// What kerf applied shows at once (issue 27, defects 2 and 3). In `kerf demo` the agent
// resizes the web workloads of demo-east in place as their policy allows. As soon as the
// audit trail holds such a change, before any new run: the workload's page leads with
// what was applied, when and on whose word; the list marks it; the overview counts its
// saving as realized and no longer as available; and a channel's digest preview says the
// same. Per changed workload, realized plus what is left equals what its recommendation
// offered: nothing is counted twice. (On main the page still offered the whole saving,
// the overview had no realized figure, and the digest counted partial changes whole.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { until } from "./lib/hub.js";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

let hub, tab, page;
withSignedInPage({ ready: (s) => ({ hub, tab, page } = s) });

const api = async (path) => {
  const r = await hub.api("GET", path);
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  return r.body;
};
const cents = (a, b) => Math.abs(a - b) <= 0.02;

test("an applied change shows on its page, in the list, on the overview and in the digest preview at once", async () => {
  // The first change the agent applies in web, with the workload as the API shows it.
  const { event, w } = await until("the agent to apply a change in web", 5 * 60_000, async () => {
    const audit = await api("/v1/audit?cluster=demo-east&namespace=web&type=applied&limit=50");
    for (const e of audit.items) {
      const list = await api(`/v1/workloads?cluster=demo-east&namespace=web&limit=100`);
      const w = list.items.find((x) => x.name === e.workload.name && x.kind === e.workload.kind);
      if (w?.applied?.afterRecommendation) return { event: e, w };
    }
    return null;
  });
  const detail = await api(`/v1/workloads/${encodeURIComponent(w.id)}`);
  assert.equal(detail.applied.eventId, event.id, JSON.stringify(detail.applied));
  assert.equal(detail.applied.by, "policy");
  // Nothing counted twice: what it realized plus what is left is what was offered.
  const offered = -detail.recommendation.estimatedMonthlyCostDelta;
  const left = Math.max(0, -detail.estimatedMonthlyCostDelta);
  assert.ok(offered > 0, `web/${w.name} offered a saving: ${offered}`);
  assert.ok(cents(detail.applied.realizedMonthly + left, offered),
    `realized ${detail.applied.realizedMonthly} + left ${left} = offered ${offered}`);

  // Its page leads with the change.
  await go(page, `/workloads/${encodeURIComponent(w.id)}`);
  const note = page.locator("section.answer .applied-note");
  await note.waitFor({ timeout: 15000 });
  const said = await note.textContent();
  assert.match(said, /Applied (just now|.* ago) by the agent, as its policy allows, in place: CPU request .* → /s, said);
  if (detail.applied.realizedMonthly > 0.005) assert.match(said, /It saves \$[\d,.]+ a month/, said);
  await screenshot(page, "workload-applied");

  // The list marks it.
  await go(page, `/workloads?cluster=demo-east&namespace=web`);
  const row = page.locator("table.workloads tbody tr", { has: page.locator(`a[href="/workloads/${encodeURIComponent(w.id)}"]`) });
  await row.locator(".applied").waitFor({ timeout: 15000 });
  assert.match(await row.locator(".applied").textContent(), /^applied (just now|.* ago)/);

  // The overview and a digest preview show the same realized and available figures as
  // the workload totals (read until two reads agree: the agent may apply more meanwhile).
  const made = await hub.api("POST", "/v1/notifications/channels", { name: "ops", type: "slack", url: "https://hooks.slack.com/services/T/B/x" });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  await until("the overview and the digest preview to agree with the totals", 60_000, async () => {
    const before = (await api("/v1/workloads/summary")).total;
    await go(page, "/");
    const realized = page.locator(".fleet-totals [data-realized]");
    await realized.waitFor({ timeout: 15000 });
    await settled(page);
    const shown = { realized: Number(await realized.getAttribute("data-realized")), available: Number(await page.locator(".fleet-totals [data-available]").getAttribute("data-available")) };
    await go(page, "/notifications");
    const details = page.locator("article.channel", { hasText: "ops" }).locator("details.digest-preview");
    await details.locator("summary").click();
    const body = details.locator("[data-realized]");
    await body.waitFor({ timeout: 15000 });
    const digest = { realized: Number(await body.getAttribute("data-realized")), available: Number(await body.getAttribute("data-available")) };
    const after = (await api("/v1/workloads/summary")).total;
    if (JSON.stringify(before) !== JSON.stringify(after)) return null;
    assert.ok(before.realized.sinceInstall > 0, JSON.stringify(before.realized));
    assert.equal(shown.realized, before.realized.sinceInstall);
    assert.equal(shown.available, before.monthlySavings);
    assert.equal(digest.realized, before.realized.thisWeek);
    assert.equal(digest.available, before.monthlySavings);
    await screenshot(page, "digest-preview");
    return true;
  });
  await go(page, "/");
  await page.locator(".fleet-totals [data-realized]").waitFor();
  assert.match(await page.locator(".fleet-totals .realized").textContent(), /Realized by kerf's changes, a month\$[\d,.]+\$[\d,.]+ from changes this week/);
  await screenshot(page, "overview-realized");
  tab.assertClean("applied changes");
});

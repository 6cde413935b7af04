// Approve once works in `kerf demo` (issue 27, defect 1). A workload in audit mode (shop
// on demo-east: no demo policy selects it, so the shipped defaults hold, a 7-day
// learning period included): before approving, the dialog says what would hold the
// change now, and for the demo that is nothing (its history covers the learning period);
// after approving, the page says the approval is pending; within one agent pass the
// agent applies it as ApprovedOnce, and the page leads with that change, approved by the
// signed-in user. (On main the demo's history read "6d 23h", the agent blocked it as
// LearningPeriod, and the approval vanished at the next run.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { until } from "./lib/hub.js";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

let hub, tab, page;
withSignedInPage({ ready: (s) => ({ hub, tab, page } = s) });

test("approving a demo workload once applies it within one agent pass", async () => {
  const w = await until("a shop workload with a recommendation", 3 * 60_000, async () => {
    const r = await hub.api("GET", "/v1/workloads?cluster=demo-east&namespace=shop&hasRecommendation=true&sort=savings&limit=20");
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.items.find((x) => !x.risk) ?? null;
  });
  await go(page, `/workloads/${encodeURIComponent(w.id)}`);
  const approve = page.locator("section.answer button", { hasText: "Approve once…" });
  await approve.waitFor({ timeout: 15000 });
  await settled(page);
  await approve.click();
  const dialog = page.getByRole("dialog");
  await dialog.locator(".held-now").waitFor({ timeout: 15000 });
  const held = await dialog.locator(".held-now").textContent();
  assert.match(held, /Nothing the hub knows of holds it now/, `the demo's history is long enough: ${held}`);
  await screenshot(page, "approve-dialog");
  await page.fill("#approve-reason", "e2e: try it once");
  await dialog.getByRole("button", { name: "Approve once" }).click();
  const state = page.locator("section.answer .approval-state");
  await state.waitFor({ timeout: 15000 });
  assert.match(await state.textContent(), /Approved once by admin (just now|.* ago): the agent applies it at its next pass/);

  const applied = await until("the agent to apply the approval", 3 * 60_000, async () => {
    const r = await hub.api("GET", `/v1/audit?cluster=demo-east&namespace=shop&name=${encodeURIComponent(w.name)}&limit=20`);
    const held = r.body.items.find((e) => e.type === "blocked");
    assert.ok(!held, `the agent held the approved change: ${JSON.stringify(held)}`);
    return r.body.items.find((e) => e.type === "applied" && e.reason === "ApprovedOnce") ?? null;
  });
  assert.equal(applied.details.approvedBy, "admin");
  // The page looks for the agent's answer while the approval is pending: no reload.
  const note = page.locator("section.answer .applied-note");
  await note.waitFor({ timeout: 30000 });
  assert.match(await note.textContent(), /Applied (just now|.* ago) approved once by admin, /);
  assert.match(await page.locator("section.answer .approval-state").textContent(), /applied (just now|.* ago)/);
  await screenshot(page, "approved-applied");
  tab.assertClean("approve once");
});

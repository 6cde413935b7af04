// The UI at fleet scale: a data dir the demo analysed is filled up to 10,000 workloads
// with recommendations (examples/seed_workloads.rs, through kerf::store), `kerf serve`
// runs on it, and the browser measures how long the workloads page takes to show its
// first rows and the detail page its recommendation, from navigation. The figures are
// printed, not asserted: timing on a shared 2-core runner is not a test.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { startHub, serve } from "./lib/hub.js";
import { launch, newPage, screenshot, go, settled, signIn } from "./lib/browser.js";

const SEED = process.env.E2E_SEED_BIN;
const COUNT = 10000;
let hub, browser;

before(async () => {
  if (!SEED) return;
  const demo = await startHub({ keepDataDir: true });
  await demo.runsDone();
  await demo.stop();
  const out = execFileSync(SEED, [demo.dataDir, String(COUNT)], { encoding: "utf8" });
  console.log(`${out.trim()}`);
  hub = await serve(demo.dataDir, { token: demo.token, login: demo.login });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await hub?.stop();
});

/** performance.now() at the first animation frame where `selector` is in the page. */
const shownAt = (page, selector) =>
  page.waitForFunction((s) => document.querySelector(s) && performance.now(), selector, { polling: "raf", timeout: 30000 }).then((h) => h.jsonValue());

/** Milliseconds from a client-side navigation (a link click) to `selector` showing. */
async function clientNav(page, path, selector) {
  const t0 = await page.evaluate((p) => { const t = performance.now(); history.pushState(null, "", p); dispatchEvent(new PopStateEvent("popstate")); return t; }, path);
  return (await shownAt(page, selector)) - t0;
}

test(`with ${COUNT} workloads, the list's first rows and the detail's recommendation, timed from navigation`, async (t) => {
  if (!SEED) return t.skip("E2E_SEED_BIN is not set (scripts/e2e.sh builds examples/seed_workloads)");
  const total = await hub.api("GET", "/v1/savings");
  assert.ok(total.body.fleet.workloads >= COUNT, `the hub has ${total.body.fleet.workloads} workloads`);
  const { page, expect } = await newPage(browser, hub.url);
  // `kerf serve` has no demo datasource: usage charts show the API's refusal.
  expect((status, method, url) => new URL(url).pathname.endsWith("/usage"));
  await signIn(page, hub.url, hub.login);

  const rows = "table.workloads tbody tr";
  await page.goto(`${hub.url}/workloads`);
  const listLoad = await shownAt(page, rows);
  assert.equal(await page.locator(rows).count(), 50);
  await settled(page);
  await screenshot(page, "scale-workloads");

  // In-app navigations start from the overview, so no earlier rows stand in for new ones.
  await go(page, "/");
  await settled(page);
  const listClient = await clientNav(page, "/workloads?sort=savings", rows);
  await settled(page);
  await go(page, "/");
  await settled(page);
  const listFiltered = await clientNav(page, "/workloads?sort=savings&q=catalog", rows);
  await settled(page);
  assert.match(await page.textContent(`${rows}:first-child`), /catalog/);

  const href = await page.getAttribute(`${rows}:first-child a`, "href");
  const detailClient = await clientNav(page, href, ".answer-table tbody tr");
  await settled(page);
  await screenshot(page, "scale-workload-detail");
  await page.goto(`${hub.url}${href}`);
  const detailLoad = await shownAt(page, ".answer-table tbody tr");
  await settled(page);

  const ms = (x) => `${Math.round(x)} ms`;
  console.log(`${COUNT} workloads: workloads page first rows: ${ms(listLoad)} (full page load), ${ms(listClient)} (in-app, sorted by savings), ${ms(listFiltered)} (name search, sorted by savings)`);
  console.log(`${COUNT} workloads: detail page answer (from → to table): ${ms(detailLoad)} (full page load), ${ms(detailClient)} (in-app from the list)`);
  console.log(`target ≤ 1000 ms each: ${[listLoad, listClient, listFiltered, detailLoad, detailClient].every((x) => x <= 1000) ? "met" : "NOT met"}`);
});

// The web UI in a real headless chromium against the real kerf binary: sign in, every
// page renders (no console errors, no CSP violations, no unexpected API failures), and
// screenshots of each page at 1280 px and 768 px land in tests/e2e/artifacts/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startHub, routes } from "./lib/hub.js";
import { launch, newPage, screenshot } from "./lib/browser.js";

let hub, browser, page, problems, api;

before(async () => {
  hub = await startHub();
  api = await routes(hub.url);
  browser = await launch();
  ({ page, problems } = await newPage(browser.context));
  // A 404 from a route this hub does not serve yet is how pages detect missing
  // features; anything else failing is a bug.
  page.on("response", async (r) => {
    if (r.status() < 400 || !r.url().startsWith(hub.url)) return;
    let body = "";
    try { body = await r.text(); } catch { /* body gone */ }
    if (!(r.status() === 404 && body.includes("no API route"))) problems.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}: ${body.slice(0, 200)}`);
  });
});

after(async () => {
  await browser?.close();
  await hub?.stop();
});

/** Waits until nothing on the page is loading any more. */
async function settled() {
  await page.waitForFunction(() => !document.querySelector(".state.loading, .boot"), null, { timeout: 15000 });
  await page.waitForLoadState("networkidle");
}

function assertClean(where) {
  // Chromium logs every 4xx fetch as "Failed to load resource"; the response listener
  // above already judges those.
  const real = problems.filter((p) => !p.startsWith("console: Failed to load resource"));
  problems.length = 0;
  assert.deepEqual(real, [], `problems on ${where}`);
}

test("signing in shows the shell with navigation", async () => {
  await page.goto(`${hub.url}/`);
  await page.waitForSelector("form[aria-label='Sign in']");
  await screenshot(page, "login");
  if (!(await page.$("#token"))) await page.click("text=Use an API token instead");
  await page.fill("#token", hub.token);
  await page.click("button[type=submit]");
  await page.waitForSelector("nav[aria-label='Main']");
  await settled();
  assertClean("sign in");
});

const PAGES = [
  ["/", "overview"],
  ["/workloads", "workloads"],
  ["/audit", "audit-events"],
  ["/audit?tab=config", "audit-config"],
  ["/policies", "policies"],
  ["/clusters", "clusters"],
  ["/settings", "settings-recommender"],
  ["/settings?tab=pricing", "settings-pricing"],
  ["/settings?tab=datasources", "settings-datasources"],
  ["/settings?tab=users", "settings-users"],
  ["/settings?tab=tokens", "settings-tokens"],
  ["/settings?tab=teams", "settings-teams"],
  ["/no-such-page", "not-found"],
];

test("every page renders without console errors or CSP violations", async () => {
  for (const [path, name] of PAGES) {
    // Client-side navigation, as a user clicks through; then a hard load of the deep link.
    await page.evaluate((p) => { history.pushState(null, "", p); dispatchEvent(new PopStateEvent("popstate")); }, path);
    await settled();
    const text = await page.textContent("main");
    assert.ok(text.trim().length > 0, `${path} rendered an empty page`);
    await screenshot(page, `${name}-1280`);
    await page.setViewportSize({ width: 768, height: 1000 });
    await screenshot(page, `${name}-768`);
    await page.setViewportSize({ width: 1280, height: 900 });
    assertClean(path);
  }
});

test("workloads filter by URL, open the most over-provisioned, see charts and trace", async (t) => {
  if (!api.has("GET /v1/workloads")) return t.skip("this hub has no workloads API yet");
  const t0 = Date.now();
  // Sorted by savings, biggest first: the first row is the most over-provisioned.
  await page.evaluate(() => { history.pushState(null, "", "/workloads?sort=savings&hasRecommendation=true"); dispatchEvent(new PopStateEvent("popstate")); });
  await page.waitForSelector("table.workloads tbody tr");
  const listMs = Date.now() - t0;
  await screenshot(page, "workloads-filtered");
  const saving = await page.textContent("table.workloads tbody tr:first-child td:last-child");
  assert.match(saving, /−/, "the first row sorted by savings saves money");
  const t1 = Date.now();
  await page.click("table.workloads tbody tr:first-child a");
  await page.waitForSelector(".results .result .trace .steps li");
  const detailMs = Date.now() - t1;
  await page.waitForSelector(".chart-box canvas", { timeout: 15000 });
  const chartsMs = Date.now() - t1;
  console.log(`workloads: first rows ${listMs} ms; detail (recommendation + trace) ${detailMs} ms; usage charts ${chartsMs} ms`);
  assert.equal(await page.locator(".chart-box canvas").count() >= 2, true, "a CPU and a memory chart");
  await settled();
  await screenshot(page, "workload-detail");
  assert.ok(listMs < 1000, `first rows took ${listMs} ms`);
  assert.ok(detailMs < 1000, `detail took ${detailMs} ms`);
  assertClean("workload detail");
});

test("the UI signs out", async () => {
  await page.click("text=Log out");
  await page.waitForSelector("form[aria-label='Sign in']");
  assertClean("sign out");
});

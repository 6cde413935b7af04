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
  await hub.runsDone();
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
  await page.waitForFunction(() => document.querySelectorAll(".chart-box canvas").length >= 2, null, { timeout: 15000 });
  const chartsMs = Date.now() - t1;
  console.log(`workloads: first rows ${listMs} ms; detail (recommendation + trace) ${detailMs} ms; usage charts ${chartsMs} ms`);
  await settled();
  await screenshot(page, "workload-detail");
  assert.ok(listMs < 1000, `first rows took ${listMs} ms`);
  assert.ok(detailMs < 1000, `detail took ${detailMs} ms`);
  assertClean("workload detail");
});

test("the audit filters workload events, pages through them and exports CSV", async (t) => {
  if (!hub.postEvents) return t.skip("needs a hub this test started (cluster token)");
  const base = Date.now() - 3600_000;
  const events = Array.from({ length: 60 }, (_, i) => ({
    id: crypto.randomUUID(),
    type: i % 3 === 0 ? "blocked" : "skipped",
    reason: i % 3 === 0 ? "LowConfidence" : "ModeAudit",
    time: new Date(base + i * 1000).toISOString(),
    workload: { namespace: "shop", kind: "Deployment", name: `svc-${i % 4}` },
    message: i === 0 ? "a message with, a comma and \"quotes\"" : undefined,
  }));
  await hub.postEvents(events);
  await page.evaluate(() => { history.pushState(null, "", "/audit"); dispatchEvent(new PopStateEvent("popstate")); });
  await settled();
  assert.equal(await page.locator("table tbody tr").count(), 50, "first page of 50");
  await page.click("text=Next →");
  await settled();
  assert.equal(await page.locator("table tbody tr").count(), 10, "second page");
  assert.match(page.url(), /cursor=/, "the page is in the URL");
  await page.click("text=← Previous");
  await settled();
  await page.selectOption("form[aria-label='Filter the audit'] select", "blocked");
  await page.click("form[aria-label='Filter the audit'] button[type=submit]");
  await settled();
  assert.match(page.url(), /type=blocked/);
  assert.equal(await page.locator("table tbody tr").count(), 20, "20 blocked events");
  await screenshot(page, "audit-events-filtered");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("text=Export CSV")]);
  const csv = await (await download.createReadStream()).toArray().then((c) => Buffer.concat(c).toString("utf8"));
  const lines = csv.trim().split("\r\n");
  assert.equal(lines.length, 21, "header + 20 rows");
  assert.ok(lines[0].startsWith("time,cluster,namespace"), lines[0]);
  assert.ok(csv.includes('"a message with, a comma and ""quotes"""'), "RFC 4180 quoting");
  assertClean("audit");
});

test("the UI signs out", async () => {
  await page.click("text=Log out");
  await page.waitForSelector("form[aria-label='Sign in']");
  assertClean("sign out");
});

// Accessibility and weight on `kerf demo` in a real chromium. axe-core (WCAG 2.1 A and
// AA rules) runs on every page in light and in dark mode and finds nothing; it is
// evaluated through the DevTools protocol, so the hub's CSP stays as strict as in
// production (no inline script, no bypass). Also: no page scrolls sideways at 320 px,
// each page names itself in the title and gets focus on navigation, dialogs are
// announced by their own title and give focus back, the cold overview transfers at most
// 150 KB, and the login page loads no chart code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { newPage, screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";
import { violations } from "./lib/axe.js";

let hub, browser, tab, page, leakId;

withSignedInPage({
  ready: async (s) => {
    ({ hub, browser, tab, page } = s);
    await hub.runsDone();
    leakId = (await hub.api("GET", "/v1/workloads?notice=potential-memory-leak")).body.items[0].id;
  },
});

const pages = () => [
  ["/", "Overview"],
  ["/workloads", "Workloads"],
  ["/workloads?group=namespace", "Workloads"],
  [`/workloads/${leakId}`, "data/ingest-worker · Workloads"],
  ["/audit", "Audit"],
  ["/audit?tab=config", "Audit"],
  ["/policies", "Policies"],
  ["/policies/new", "Policy"],
  ["/clusters", "Clusters"],
  ["/notifications", "Notifications"],
  ["/settings", "Settings"],
  ["/settings?tab=pricing", "Settings"],
  ["/settings?tab=datasources", "Settings"],
  ["/settings?tab=users", "Settings"],
  ["/settings?tab=tokens", "Settings"],
  ["/settings?tab=teams", "Settings"],
  ["/settings?tab=sso", "Settings"],
  ["/no-such-page", "Page not found"],
];

test("axe-core finds no WCAG 2.1 A/AA violation on any page, light or dark, and the CSP is the production one", async () => {
  const csp = (await (await fetch(`${hub.url}/`)).headers.get("content-security-policy"));
  assert.match(csp, /script-src 'self';/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const found = [];
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [path] of pages()) {
      await go(page, path);
      await settled(page);
      if (path.startsWith("/workloads/")) await page.waitForFunction(() => document.querySelectorAll(".chart-box canvas").length >= 2, null, { timeout: 15000 });
      for (const v of await violations(page)) found.push(`${scheme} ${path}: ${v}`);
    }
    // The login page, signed out in a context of its own.
    const anon = await newPage(browser, hub.url);
    await anon.page.emulateMedia({ colorScheme: scheme });
    await anon.page.goto(`${hub.url}/`);
    await anon.page.waitForSelector("form[aria-label='Sign in']");
    for (const v of await violations(anon.page)) found.push(`${scheme} login: ${v}`);
    await screenshot(anon.page, `login-${scheme}`);
    await anon.context.close();
    await go(page, `/workloads/${leakId}`);
    await settled(page);
    await screenshot(page, `workload-detail-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
  assert.deepEqual(found, []);
  tab.assertClean("axe");
});

test("no page scrolls sideways at 320 px, and each names itself in the title", async () => {
  await page.setViewportSize({ width: 320, height: 640 });
  const wide = [];
  for (const [path, title] of pages()) {
    await go(page, path);
    await settled(page);
    assert.equal(await page.title(), `${title} · kerf`, path);
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    if (scroll > client) wide.push(`${path}: ${scroll} px wide`);
    if (path.startsWith("/workloads/")) await screenshot(page, "workload-detail-320");
    // The navigation is one row (issue 27, defect 9: four rows at 390 px on main).
    const rows = await page.evaluate(() => new Set([...document.querySelectorAll("nav.nav a")].map((a) => Math.round(a.getBoundingClientRect().top))).size);
    assert.equal(rows, 1, `${path}: the navigation takes ${rows} rows`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual(wide, []);
  tab.assertClean("320 px");
});

test("navigation moves focus to the new page's heading; a dialog is announced by its own title and gives focus back", async () => {
  await go(page, "/");
  await settled(page);
  await page.click("nav[aria-label='Main'] a:has-text('Workloads')");
  await page.waitForFunction(() => document.activeElement?.tagName === "H1" && document.activeElement.textContent === "Workloads");

  await go(page, `/workloads/${leakId}`);
  await page.waitForSelector(".effective .settings-table");
  await settled(page);
  const titles = await page.evaluate(() => [...document.querySelectorAll("dialog")].map((d) => {
    const h = document.getElementById(d.getAttribute("aria-labelledby"));
    return { id: d.getAttribute("aria-labelledby"), inside: Boolean(h && d.contains(h)) };
  }));
  assert.ok(titles.length >= 1 && titles.every((t) => t.inside), JSON.stringify(titles));
  assert.equal(new Set(titles.map((t) => t.id)).size, titles.length, "every dialog has its own title id");
  for (const [opener, cancel] of [["Set override…", "Cancel"], ["Approve once…", "Cancel"]]) {
    const button = page.locator("button", { hasText: opener });
    await button.focus();
    await button.press("Enter");
    const dialog = page.locator("dialog[open]");
    await dialog.waitFor();
    const name = await page.evaluate(() => {
      const d = document.querySelector("dialog[open]");
      return document.getElementById(d.getAttribute("aria-labelledby")).textContent;
    });
    assert.ok(name.length > 0 && (await dialog.locator("h2").textContent()) === name);
    await dialog.locator("button", { hasText: cancel }).click();
    await page.waitForFunction(() => !document.querySelector("dialog[open]"));
    await page.waitForFunction((t) => document.activeElement?.textContent === t, opener);
  }
  tab.assertClean("focus");
});

/** Bytes a cold load of `path` transfers (document, modules, styles, API answers), in a fresh context. */
async function coldLoad(path, signedIn) {
  const c = await newPage(browser, hub.url);
  try {
    if (signedIn) {
      const r = await c.page.request.post(`${hub.url}/v1/auth/login`, { data: hub.login, headers: { Origin: hub.url } });
      assert.equal(r.status(), 200);
    }
    const cdp = await c.context.newCDPSession(c.page);
    await cdp.send("Network.enable");
    const bytes = new Map();
    const urls = new Map();
    cdp.on("Network.requestWillBeSent", (e) => urls.set(e.requestId, e.request.url));
    cdp.on("Network.loadingFinished", (e) => bytes.set(e.requestId, e.encodedDataLength));
    await c.page.goto(`${hub.url}${path}`);
    await c.page.waitForSelector(signedIn ? ".cluster-grid .cluster" : "form[aria-label='Sign in']");
    await settled(c.page);
    // The actions chart (its code loads last), or its empty state on a young demo.
    if (signedIn) await c.page.waitForSelector("section[aria-labelledby=actions-h] :is(.chart-box canvas, .state.empty)");
    await settled(c.page);
    const files = [...bytes.entries()].map(([id, n]) => [urls.get(id), n]);
    return { total: files.reduce((s, [, n]) => s + n, 0), files };
  } finally {
    await c.context.close();
  }
}

test("a cold overview transfers at most 150 KB, and the login page loads no chart code", async () => {
  const overview = await coldLoad("/", true);
  console.log(`cold overview: ${overview.files.length} requests, ${(overview.total / 1024).toFixed(1)} KiB transferred`);
  for (const [url, n] of overview.files.sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log(`  ${(n / 1024).toFixed(1)} KiB ${url.replace(hub.url, "")}`);
  assert.ok(overview.total <= 150 * 1000, `${overview.total} B`);
  const summaries = overview.files.filter(([u]) => new URL(u).pathname === "/v1/workloads/summary").length;
  assert.ok(summaries >= 1 && summaries <= 2, `the counts come from one summary call (and the currency from a cached one): ${summaries}`);
  assert.equal(overview.files.filter(([u]) => /\/v1\/workloads\?.*limit=100/.test(u)).length, 0, "no counting by listing");

  const login = await coldLoad("/", false);
  console.log(`cold login page: ${login.files.length} requests, ${(login.total / 1024).toFixed(1)} KiB transferred`);
  const chartCode = login.files.filter(([u]) => /uPlot|chart/i.test(u));
  assert.deepEqual(chartCode, [], "the login page loads no chart code");
  assert.ok(login.files.every(([u]) => !/\/pages\/(?!login)/.test(u)), "nor any page but its own");
});

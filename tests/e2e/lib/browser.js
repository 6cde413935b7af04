// Headless Debian chromium through playwright-core. Each `newPage` is its own browser
// context (own cookies), with every console error, page error, CSP violation and
// unexpected API failure collected so a test can assert there were none.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");

export async function launch() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return browser;
}

/**
 * A fresh context and page on `hubUrl`. `problems` collects console errors, page errors,
 * CSP violations and HTTP errors from the hub; `expect(fn)` marks API failures a test
 * provokes on purpose (fn(status, method, url) → true), and `assertClean(where)` fails
 * on anything else.
 */
export async function newPage(browser, hubUrl) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  let expected = () => false;
  await page.addInitScript(() => {
    // Requests in flight, so a test can wait until the page has its data.
    window.__inflight = 0;
    const fetch0 = window.fetch;
    window.fetch = (...args) => {
      window.__inflight++;
      return fetch0(...args).finally(() => { window.__inflight--; });
    };
    document.addEventListener("securitypolicyviolation", (e) => {
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => { if (!r.failure()?.errorText.includes("ERR_ABORTED")) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`); });
  // A 404 `no API route` is how pages detect a feature this hub does not serve yet;
  // any other failure is a bug unless the test asked for it.
  page.on("response", async (r) => {
    if (r.status() < 400 || !r.url().startsWith(hubUrl)) return;
    let body = "";
    try { body = await r.text(); } catch { /* body gone */ }
    if (r.status() === 404 && body.includes("no API route")) return;
    if (expected(r.status(), r.request().method(), r.url(), body)) return;
    problems.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}: ${body.slice(0, 200)}`);
  });
  return {
    page,
    context,
    problems,
    expect: (fn) => { expected = fn; },
    assertClean: (where) => {
      // Chromium logs every 4xx fetch as "Failed to load resource"; the response
      // listener above already judges those.
      const real = problems.filter((p) => !p.startsWith("console: Failed to load resource"));
      problems.length = 0;
      assert.deepEqual(real, [], `problems on ${where}`);
    },
  };
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Client-side navigation, as a click on a link does. */
export async function go(page, path) {
  await page.evaluate((p) => { history.pushState(null, "", p); dispatchEvent(new PopStateEvent("popstate")); }, path);
}

/** Waits until nothing on the page is loading any more. */
export async function settled(page) {
  await page.waitForLoadState("networkidle");
  await page.waitForFunction(() => window.__inflight === 0 && !document.querySelector(".state.loading, .boot, .busy, [aria-busy=true]"), null, { timeout: 15000, polling: 50 });
  // One more frame for the last answer to render.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
}

/** Signs in through the login form with a username and password. */
export async function signIn(page, url, { username, password }) {
  await page.goto(`${url}/`);
  await page.waitForSelector("form[aria-label='Sign in']");
  await page.fill("#username", username);
  await page.fill("#password", password);
  await page.click("form[aria-label='Sign in'] button[type=submit]");
  await page.waitForSelector("nav[aria-label='Main']");
  await settled(page);
}

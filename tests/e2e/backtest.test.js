// The policy editor's presets and backtest, in a real headless chromium against the
// real `kerf demo`: a new policy for the demo's `shop` namespace starts from a preset,
// its backtest shows the figures in and out of sample and what changes per workload,
// equal to what the API answers for the same document; changing the preset marks it
// outdated and a second backtest shows the other policy's figures.
import { test } from "node:test";
import assert from "node:assert/strict";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

let hub, browser, tab, page;

withSignedInPage({
  ready: async (s) => {
    ({ hub, browser, tab, page } = s);
    await hub.runsDone();
  },
});

/** The figures table as { label: [in, out] }. */
async function figures() {
  return page.$$eval("table.backtest-figures tbody tr", (rows) =>
    Object.fromEntries(rows.map((r) => [r.querySelector("th").textContent.trim(), [...r.querySelectorAll("td")].map((td) => td.textContent.trim())])));
}

/** The next answer to the page's own backtest request. */
const backtestAnswer = () =>
  page.waitForResponse((res) => res.request().method() === "POST" && new URL(res.url()).pathname === "/v1/policies/backtest", { timeout: 60000 });

const pct = (x) => (x === null || x === undefined ? "—" : `${(x * 100).toFixed(2)} %`);

test("the policy editor backtests the policy being edited and shows what it changes", async () => {
  const presets = (await hub.api("GET", "/v1/policies/presets")).body.items;
  assert.deepEqual(presets.map((p) => p.name), ["cost-saving", "balanced", "conservative", "engine-default"]);
  assert.equal(presets.find((p) => p.fleetDefault).name, "balanced");

  await go(page, "/policies/new");
  await page.waitForSelector("form[aria-label='New policy']");
  await page.fill("#pol-name", "e2e-backtest");
  await page.fill("#pol-selector-namespaces", "shop");
  // The preset fills the policy's analysis (the JSON editor shows it) and says who it is for.
  await page.selectOption("#pol-preset", "cost-saving");
  assert.match(await page.textContent("#pol-preset-hint"), /Dev, staging and batch/);
  const doc = JSON.parse(await page.inputValue("#pol-json"));
  assert.deepEqual(doc.analysis, presets.find((p) => p.name === "cost-saving").analysis);
  assert.deepEqual(doc.selector, { namespaces: ["shop"] });

  // The demo's usage keeps arriving, so a second backtest a moment later may differ in
  // the last digit: the page is compared with the answer it was given, and that answer's
  // request with the document the editor shows.
  const asked = backtestAnswer();
  await page.click("section[aria-label='Backtest'] button:has-text('Backtest this policy')");
  const answer = await asked;
  await page.waitForSelector("table.backtest-figures", { timeout: 60000 });
  await screenshot(page, "policy-backtest");
  assert.equal(answer.status(), 200);
  assert.deepEqual(answer.request().postDataJSON(), { policy: doc });
  const r = await answer.json();
  assert.ok(r.workloads.length > 0 && r.workloads.every((w) => w.namespace === "shop"), "only shop's workloads");
  const shown = await figures();
  assert.deepEqual(shown["CPU above the request"], [pct(r.inSample.cpuAboveRequestShare), pct(r.outOfSample.cpuAboveRequestShare)]);
  assert.deepEqual(shown["Would-be OOM kills"], [String(r.inSample.wouldBeOomKills), String(r.outOfSample.wouldBeOomKills)]);
  assert.ok(shown["Cost change per month"][0].startsWith("−"), `shop saves: ${shown["Cost change per month"]}`);
  // What changes: a row per workload (its containers), catalog among them, current → recommended.
  const names = await page.$$eval("table.backtest-changes tbody td a", (as) => as.map((a) => a.textContent.trim()));
  assert.deepEqual(new Set(names), new Set(r.workloads.map((w) => w.name)));
  const catalog = await page.textContent("table.backtest-changes tbody tr:has(a:text-is('catalog'))");
  assert.match(catalog, /→/);

  // Another preset: the result is marked outdated until it is backtested again.
  await page.selectOption("#pol-preset", "engine-default");
  await page.waitForSelector("section[aria-label='Backtest'] .badge:has-text('outdated')");
  const askedAgain = backtestAnswer();
  await page.click("section[aria-label='Backtest'] button:has-text('Backtest again')");
  const second = await askedAgain;
  await page.waitForSelector("section[aria-label='Backtest'] .badge:has-text('outdated')", { state: "detached", timeout: 60000 });
  assert.deepEqual(second.request().postDataJSON().policy.analysis, presets.find((p) => p.name === "engine-default").analysis);
  const engine = await second.json();
  const again = await figures();
  assert.deepEqual(again["CPU above the request"], [pct(engine.inSample.cpuAboveRequestShare), pct(engine.outOfSample.cpuAboveRequestShare)]);
  assert.ok(engine.inSample.costChange > r.inSample.costChange, "the engine's defaults save less than cost-saving");
  await settled(page);
  tab.assertClean("policy backtest");
});

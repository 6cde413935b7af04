// From a fresh `kerf serve` to recommendations, in the UI alone, against a real
// Prometheus (kube-state-metrics and cAdvisor series backfilled by promtool): add a
// datasource and see its test inline, register a cluster linked to it, see the new
// cluster on the overview at once with its next step, run it, and open a workload only
// 20 minutes old, whose chart spans those 20 minutes. A second cluster registered without
// a datasource says it waits for its agent's usage, and is linked from the Clusters page.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startEmptyHub, until } from "./lib/hub.js";
import { OpenMetrics, deployment, startPrometheus } from "./lib/prometheus.js";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

const MIN = 60_000;
let hub, prom, browser, tab, page;

before(async () => {
  const now = Date.now() - (Date.now() % MIN);
  const om = new OpenMetrics();
  // Over-provisioned for three hours, and one only 20 minutes old.
  deployment(om, { ns: "shop", name: "storefront", replicas: 2, from: now - 180 * MIN, to: now, cpuRequest: 1, memRequestMib: 1024, memLimitMib: 1024, cores: 0.12, memMib: 300 });
  deployment(om, { ns: "shop", name: "fresh-start", replicas: 1, from: now - 20 * MIN, to: now, cpuRequest: 0.5, memRequestMib: 512, memLimitMib: 512, cores: 0.05, memMib: 120 });
  prom = await startPrometheus(om);
});

withSignedInPage({ start: startEmptyHub, ready: (s) => ({ hub, browser, tab, page } = s) });

after(async () => {
  await prom?.stop();
});

test("a datasource added in the UI is tested at once, and the result is shown inline", async () => {
  await go(page, "/settings?tab=datasources");
  await settled(page);
  assert.match(await page.textContent("main"), /No datasources yet/);
  const form = page.locator("form[aria-label='Add a datasource']");
  // A bad URL is answered at its field.
  await form.locator("#ds-name").fill("prom");
  await form.locator("#ds-url").fill("ftp://nowhere.example");
  tab.expect((status, method, url) => status === 400 && method === "POST" && url.endsWith("/v1/datasources"));
  await form.locator("button[type=submit]").click();
  await page.locator("#ds-url-error").waitFor();
  assert.match(await page.textContent("#ds-url-error"), /http or https/);
  tab.expect(() => false);
  await form.locator("#ds-url").fill(prom.url);
  await form.locator("button[type=submit]").click();
  const result = page.locator(".datasource[data-name=prom] .test-result");
  await result.waitFor({ timeout: 30000 });
  assert.equal(await result.getAttribute("data-ok"), "true", await result.textContent());
  assert.match(await result.textContent(), /connected.*every metric kerf needs is present/s);
  await screenshot(page, "connect-datasource-added");
  tab.assertClean("add a datasource");
});

test("a cluster registered with the datasource is on the overview at once with its next step, and its run fills it", async () => {
  await go(page, "/clusters");
  await settled(page);
  await page.fill("#cl-name", "prod");
  await page.selectOption("#cl-datasource", { label: `prom (${prom.url})` });
  await page.click("form[aria-label='Register a cluster'] button[type=submit]");
  await page.waitForSelector(".secret-value");
  assert.match(await page.textContent(".secret-value"), /^kerf_ct_/);
  await page.click("text=I have stored it");
  const card = page.locator("article[aria-label='Cluster prod']");
  await card.locator(".link-ds", { hasText: "Reads usage from prom" }).waitFor();
  // A second one without a datasource.
  await page.fill("#cl-name", "staging");
  await page.click("form[aria-label='Register a cluster'] button[type=submit]");
  await page.waitForSelector(".secret-value");
  await page.click("text=I have stored it");
  await settled(page);
  await screenshot(page, "connect-clusters");

  await go(page, "/");
  await settled(page);
  const prod = page.locator("article[data-cluster=prod]");
  const staging = page.locator("article[data-cluster=staging]");
  await prod.waitFor();
  await staging.waitFor();
  // Without a datasource the cluster waits for what its agent collects (embedded.test.js).
  assert.equal(await staging.locator(".next-step").getAttribute("data-step"), "collect");
  assert.match(await staging.locator(".next-step").textContent(), /No data yet: this cluster's agent collects usage itself/);
  // prod waits for (or already runs) its first run, unless the scheduler was quicker.
  // Its card says one or the other once its runs have loaded: wait for that, not a guess.
  await prod.locator(".next-step").or(prod.locator("h3", { hasText: /^Workloads \(/ })).first().waitFor();
  if (await prod.locator(".next-step").count()) {
    assert.match(await prod.locator(".next-step").getAttribute("data-step"), /^(wait|run)$/);
    await screenshot(page, "connect-overview-next-step");
    if ((await prod.locator(".next-step").getAttribute("data-step")) === "wait") {
      // Pressed until the hub has a run of prod: once, on the loaded CI machine, a press
      // started nothing (the overview re-renders as it polls) and the test waited a
      // minute for a run that never began.
      await until("a run of prod after Run now", 30000, async () => {
        const runs = await hub.api("GET", "/v1/runs?cluster=prod");
        if ((runs.body.items ?? []).length > 0) return true;
        const button = prod.locator("button", { hasText: "Run now" });
        if (await button.count()) await button.click();
        return false;
      }, { every: 2000 });
    }
  }
  // The overview follows the run; its counts come once the run has stored them.
  await prod.locator("h3", { hasText: /^Workloads \(2\)$/ }).waitFor({ timeout: 60000 });
  await settled(page);
  assert.equal(await prod.locator(".next-step").count(), 0);
  await screenshot(page, "connect-overview-after-run");
  tab.assertClean("overview with a new cluster");
});

test("a workload 20 minutes old is charted over its 20 minutes, not years", async () => {
  await go(page, "/workloads?q=fresh-start");
  await settled(page);
  await page.locator("table.workloads a", { hasText: "fresh-start" }).click();
  await page.waitForFunction(() => document.querySelectorAll(".chart-box canvas").length >= 2, null, { timeout: 15000 });
  await settled(page);
  for (const resource of ["cpu", "memory"]) {
    const box = page.locator(`figure[data-resource=${resource}] .chart-box`);
    const span = Number(await box.getAttribute("data-x-max")) - Number(await box.getAttribute("data-x-min"));
    assert.ok(span >= 15 * 60 && span <= 25 * 60, `${resource}: the time axis spans ${span} s`);
  }
  await screenshot(page, "connect-young-workload");
  tab.assertClean("young workload");
});

test("the cluster without a datasource is linked from the Clusters page", async () => {
  await go(page, "/clusters");
  await settled(page);
  const card = page.locator("article[aria-label='Cluster staging']");
  assert.match(await card.locator(".link-ds").textContent(), /No datasource linked: usage comes from kerf's own collection/);
  await card.locator("select").selectOption({ label: `prom (${prom.url})` });
  await card.locator("button", { hasText: "Link" }).click();
  await card.locator(".link-ds", { hasText: "Reads usage from prom" }).waitFor();
  await go(page, "/");
  await settled(page);
  const step = page.locator("article[data-cluster=staging] .next-step");
  if (await step.count()) assert.notEqual(await step.getAttribute("data-step"), "link");
  tab.assertClean("link a datasource");
});

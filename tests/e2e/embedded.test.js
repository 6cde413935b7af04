// kerf without a Prometheus, in the UI: on a fresh `kerf serve`, a cluster registered
// without a datasource waits for its agent's usage (the overview says what comes next,
// with no "Run now" that could only fail); once three hours of kube-state-metrics and
// cAdvisor samples arrive by remote write (examples/remote_write_openmetrics.rs, the
// path the agent's collector and any Prometheus remote writer take), the Clusters page
// says where the usage comes from and how much history there is, a run reads the
// embedded store, and a workload's charts span those three hours and say where they
// come from.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmptyHub, until } from "./lib/hub.js";
import { OpenMetrics, deployment } from "./lib/prometheus.js";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

const MIN = 60_000;
const WRITER = process.env.E2E_WRITE_BIN;
let hub, tab, page, dir;

before(() => {
  assert.ok(WRITER, "E2E_WRITE_BIN names the remote-write example (scripts/e2e.sh builds it)");
  dir = mkdtempSync(join(tmpdir(), "kerf-e2e-embedded-"));
});

withSignedInPage({ start: startEmptyHub, ready: (s) => ({ hub, tab, page } = s) });

after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

async function register(name) {
  const r = await hub.api("POST", "/v1/clusters", { name });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.token;
}

test("a cluster without a datasource waits for its agent's usage, and says so", async () => {
  await register("edge");
  await go(page, "/clusters");
  await settled(page);
  const line = page.locator("article[aria-label='Cluster edge'] .usage-source");
  assert.equal(await line.getAttribute("data-source"), "collecting");
  assert.match(await line.textContent(), /nothing has arrived yet.*\/v1\/clusters\/edge\/write/s);
  await screenshot(page, "embedded-waiting");
  await go(page, "/");
  await settled(page);
  const step = page.locator("article[data-cluster=edge] .next-step");
  await step.waitFor();
  assert.equal(await step.getAttribute("data-step"), "collect");
  assert.match(await step.textContent(), /collects usage itself.*no Prometheus needed/s);
  assert.equal(await page.locator("article[data-cluster=edge] button", { hasText: "Run now" }).count(), 0);
  tab.assertClean("a cluster waiting for usage");
});

test("usage sent by remote write is the cluster's history: the page says so, a run reads it, and the charts show it", async () => {
  const token = (await hub.api("POST", "/v1/clusters/edge/token", {})).body.token;
  assert.ok(token, "a fresh agent token");
  const now = Date.now() - (Date.now() % MIN);
  const om = new OpenMetrics();
  deployment(om, { ns: "shop", name: "storefront", replicas: 2, from: now - 180 * MIN, to: now, cpuRequest: 1, memRequestMib: 1024, memLimitMib: 1024, cores: 0.12, memMib: 300 });
  const file = join(dir, "edge.om");
  writeFileSync(file, om.text());
  const sent = execFileSync(WRITER, [hub.url, "edge", file], { encoding: "utf8", env: { ...process.env, KERF_CLUSTER_TOKEN: token } });
  assert.match(sent, /^sent \d+ samples in \d+ writes to cluster edge/);

  await go(page, "/clusters");
  await settled(page);
  const line = page.locator("article[aria-label='Cluster edge'] .usage-source");
  await line.waitFor();
  assert.equal(await line.getAttribute("data-source"), "embedded");
  assert.match(await line.textContent(), /collected by kerf itself.*3 h of history/s);
  await screenshot(page, "embedded-history");

  const run = await hub.api("POST", "/v1/clusters/edge/runs");
  assert.equal(run.status, 202, JSON.stringify(run.body));
  const done = await until("the run over the embedded store", 60000, async () => {
    const r = await hub.api("GET", `/v1/runs/${run.body.id}`);
    return r.body.status !== "running" && r.body;
  }, { every: 200 });
  assert.equal(done.status, "succeeded", JSON.stringify(done));

  await go(page, "/");
  await settled(page);
  const card = page.locator("article[data-cluster=edge]");
  await card.locator("h3", { hasText: /^Workloads \(1\)$/ }).waitFor({ timeout: 30000 });
  assert.equal(await card.locator(".next-step").count(), 0);

  await go(page, "/workloads?q=storefront");
  await settled(page);
  await page.locator("table.workloads a", { hasText: "storefront" }).click();
  await page.waitForFunction(() => document.querySelectorAll(".chart-box canvas").length >= 2, null, { timeout: 15000 });
  await settled(page);
  for (const resource of ["cpu", "memory"]) {
    const box = page.locator(`figure[data-resource=${resource}] .chart-box`);
    const span = Number(await box.getAttribute("data-x-max")) - Number(await box.getAttribute("data-x-min"));
    // Three hours in buckets of a seven-day window's points (about 20 minutes each).
    assert.ok(span >= 150 * 60 && span <= 190 * 60, `${resource}: the time axis spans ${span} s`);
  }
  // The workload page names where its charts and recommendation come from.
  const source = page.locator("section.charts .usage-source");
  await source.waitFor();
  assert.equal(await source.getAttribute("data-source"), "embedded");
  assert.match(await source.textContent(), /collected by kerf itself.*3 h of history/s);
  await screenshot(page, "embedded-workload-charts");
  tab.assertClean("a cluster read from the embedded store");
});

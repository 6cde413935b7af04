// The web UI in a real headless chromium against the real `kerf demo` binary: sign in
// with the demo's printed login, every page renders (no console errors, no CSP
// violations, no unexpected API failures), filter and open the over-provisioned
// workload, settings validation at the named field, the config-change audit, and a
// viewer who is refused. Screenshots land in tests/e2e/artifacts/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { routes } from "./lib/hub.js";
import { newPage, screenshot, go, settled, signIn } from "./lib/browser.js";
import * as fmt from "../../assets/ui/format.js";
import { withSignedInPage } from "./lib/session.js";

const VIEWER = { username: "vera", password: "plum-harbour-lantern-73" };
const EDITOR = { username: "eddie", password: "copper-meadow-signal-41" };
let hub, browser, tab, page, api;

withSignedInPage({
  // The first test signs in itself, through the form.
  signedIn: false,
  ready: async (s) => {
    ({ hub, browser, tab, page } = s);
    api = await routes(hub.url);
    await users();
  },
});

/** A viewer and an editor, made through the admin API as an administrator would. */
async function users() {
  const made = await hub.api("POST", "/v1/admin/users", { username: VIEWER.username, displayName: "Vera Viewer", role: "viewer", password: VIEWER.password });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const editor = await hub.api("POST", "/v1/admin/users", { username: EDITOR.username, displayName: "Eddie Editor", role: "editor", password: EDITOR.password });
  assert.equal(editor.status, 201, JSON.stringify(editor.body));
}

/** The id of demo-east/shop/catalog, the over-provisioned workload. */
async function catalogId() {
  return (await hub.api("GET", "/v1/workloads?q=catalog&cluster=demo-east")).body.items[0].id;
}

test("signing in with the demo's ui login shows who I am", async () => {
  await page.goto(`${hub.url}/`);
  await page.waitForSelector("form[aria-label='Sign in']");
  // Asking who is signed in is not an error: not one console line, not even Chromium's
  // "Failed to load resource" for a 401 (issue 27).
  await page.waitForLoadState("networkidle");
  assert.deepEqual(tab.problems, [], "the signed-out login page logs nothing");
  await screenshot(page, "login");
  // A wrong password is the API's message, on the form.
  await page.fill("#username", hub.login.username);
  await page.fill("#password", "not-the-password");
  tab.expect((status, method, url) => status === 401 && url.endsWith("/v1/auth/login"));
  await page.click("form[aria-label='Sign in'] button[type=submit]");
  await page.waitForSelector("form[aria-label='Sign in'] .state.error");
  // Said in words, not "Something went wrong" and a code.
  assert.match(await page.textContent("form[aria-label='Sign in'] .state.error"), /^Wrong username or password/);
  assert.doesNotMatch(await page.textContent("form[aria-label='Sign in'] .state.error"), /Something went wrong|invalid_credentials/);
  tab.expect(() => false);
  await signIn(page, hub.url, hub.login);
  assert.equal((await page.textContent(".who-name")).trim(), hub.login.username);
  assert.equal((await page.textContent(".who .badge.role")).trim(), "admin");
  tab.assertClean("sign in");
});

const PAGES = [
  ["/", "overview"],
  ["/workloads", "workloads"],
  ["/audit", "audit-events"],
  ["/audit?tab=config", "audit-config"],
  ["/policies", "policies"],
  ["/clusters", "clusters"],
  ["/notifications", "notifications"],
  ["/settings", "settings-recommender"],
  ["/settings?tab=pricing", "settings-pricing"],
  ["/settings?tab=datasources", "settings-datasources"],
  ["/settings?tab=users", "settings-users"],
  ["/settings?tab=tokens", "settings-tokens"],
  ["/settings?tab=teams", "settings-teams"],
  ["/no-such-page", "not-found"],
];

test("every page renders without console errors or CSP violations", async () => {
  await hub.runsDone();
  for (const [path, name] of PAGES) {
    await go(page, path);
    await settled(page);
    const text = await page.textContent("main");
    assert.ok(text.trim().length > 0, `${path} rendered an empty page`);
    await screenshot(page, `${name}-1280`);
    await page.setViewportSize({ width: 768, height: 1000 });
    await screenshot(page, `${name}-768`);
    await page.setViewportSize({ width: 1280, height: 900 });
    tab.assertClean(path);
  }
});

test("filter the workloads, open the over-provisioned shop/catalog, see its charts and trace", async () => {
  await go(page, "/workloads");
  await settled(page);
  const filters = "form[aria-label='Filter workloads']";
  await page.fill(`${filters} input[name=q]`, "catalog");
  await page.selectOption(`${filters} select[name=cluster]`, "demo-east");
  await page.selectOption(`${filters} select[name=sort]`, "savings");
  await page.click(`${filters} button[type=submit]`);
  await settled(page);
  assert.match(page.url(), /q=catalog/);
  assert.match(page.url(), /cluster=demo-east/);
  const rows = page.locator("table.workloads tbody tr");
  assert.equal(await rows.count(), 1, "one catalog in demo-east");
  assert.match(await rows.first().textContent(), /catalog.*shop/);
  assert.match(await rows.first().locator("td.cost").textContent(), /−/, "it saves money");
  assert.match(await rows.first().textContent(), /2 cores → \d+m/, "current → recommended CPU");
  await screenshot(page, "workloads-filtered");
  // The URL is the view: a fresh load shows the same rows.
  await page.reload();
  await page.waitForSelector("table.workloads tbody tr");
  assert.equal(await rows.count(), 1);

  await rows.first().locator("a").click();
  await page.waitForSelector(".results .result .trace .steps li");
  await page.waitForFunction(() => document.querySelectorAll(".chart-box canvas").length >= 2, null, { timeout: 15000 });
  await settled(page);
  const h1 = await page.textContent("h1");
  assert.match(h1, /catalog/);
  const results = await page.textContent(".results");
  assert.match(results, /2 cores|2000m|2 CPU/i, "from the current 2 cores");
  assert.ok(await page.locator(".trace .steps li").count() >= 2, "the trace has steps");
  await screenshot(page, "workload-detail");
  tab.assertClean("workload detail");
});

test("a meshed service: its proxy is a native sidecar, named so, and each pod's request counts it", async () => {
  await go(page, "/workloads?q=storefront&cluster=demo-east");
  await page.waitForSelector("table.workloads tbody tr");
  const row = page.locator("table.workloads tbody tr").first();
  assert.match(await row.textContent(), /proxy \(sidecar\):/, "the list names the sidecar");
  await row.locator("a").first().click();
  await page.waitForSelector(".answer-table");
  await settled(page);
  const proxy = page.locator(".answer-table tr[data-container=proxy]").first();
  assert.match(await proxy.locator("th").textContent(), /proxy\s*sidecar/, "the table badges the sidecar");
  assert.match(await proxy.locator("th .badge").getAttribute("title"), /restartPolicy Always/);
  const pod = await page.textContent("[data-testid=pod-requests]");
  // The pod reserves the app and its sidecar together, as the API says.
  const w = (await hub.api("GET", `/v1/workloads/${page.url().split("/workloads/")[1].split("?")[0]}`)).body;
  const app = w.resources.find((c) => c.name === "app");
  const side = w.resources.find((c) => c.name === "proxy");
  assert.equal(side.role, "sidecar");
  assert.equal(w.podRequests.cpu.current, app.cpu.request.current + side.cpu.request.current);
  assert.match(pod, /Each pod reserves CPU/);
  assert.ok(pod.includes(fmt.quantity("cpu", w.podRequests.cpu.current)), pod);
  await screenshot(page, "workload-sidecar");
  tab.assertClean("sidecar workload");
});

test("an Argo Rollout is one workload whose page says Argo rolls the change out", async () => {
  const listed = (await hub.api("GET", "/v1/workloads?q=checkout&cluster=demo-east")).body.items;
  const rollouts = listed.filter((w) => w.kind === "Rollout");
  assert.equal(rollouts.length, 1, "one workload across its revisions");
  assert.ok(!listed.some((w) => w.kind === "ReplicaSet"), "no revision is a workload of its own");
  await go(page, `/workloads/${rollouts[0].id}`);
  await page.waitForSelector(".answer-table");
  await settled(page);
  assert.match(await page.textContent("h1"), /checkout\s*Rollout/);
  assert.match(await page.textContent("[data-testid=argo-note]"), /Argo rolls the change out.*argo-in-place/s);
  tab.assertClean("rollout workload");
});

test("a nightly CronJob is one workload sized from its runs, whose page says the next run takes the change", async () => {
  const listed = (await hub.api("GET", "/v1/workloads?kind=CronJob&cluster=demo-east")).body.items;
  assert.deepEqual(listed.map((w) => w.name), ["nightly-report"], "its runs pool into one workload");
  const w = listed[0];
  assert.ok(w.hasRecommendation, "sized from its runs");
  assert.ok(w.confidence >= 50, `a week of nightly runs is confident: ${w.confidence}`);
  await go(page, `/workloads/${w.id}`);
  await page.waitForSelector(".answer-table");
  await settled(page);
  assert.match(await page.textContent("h1"), /nightly-report\s*CronJob/);
  assert.match(await page.textContent("main"), /runs as Jobs/, "no 'unknown replicas'");
  assert.match(await page.textContent("[data-testid=batch-note]"), /next run starts with the new values/);
  await screenshot(page, "workload-cronjob");
  // Batch work has no replicas to cost: the list's totals say so, not "saves $0.00" alone.
  await go(page, "/workloads?kind=CronJob&cluster=demo-east");
  await page.waitForSelector("[data-testid=no-estimate]");
  assert.match(await page.textContent("[data-testid=no-estimate]"), /1 workload has no estimate/);
  tab.assertClean("cronjob workload");
});

test("an editor approves the recommendation once, seeing exactly what will change, and finds it in the history and the config-change audit", async () => {
  await hub.runsDone();
  // The demo runs every 10 minutes: a run between the agent's apply and the second
  // approval would make a newer recommendation, which may rightly be approved. No
  // scheduled run starts while this test runs (its schedule is restored after).
  const settings = (await hub.api("GET", "/v1/admin/settings/recommender")).body;
  const quiet = await hub.api("PUT", "/v1/admin/settings/recommender", { ...settings, schedule: "0 0 1 1 *" });
  assert.equal(quiet.status, 200, JSON.stringify(quiet.body));
  await hub.runsDone();
  const id = await catalogId();
  const e = await newPage(browser, hub.url);
  try {
    await signIn(e.page, hub.url, EDITOR);
    assert.equal((await e.page.textContent(".who .badge.role")).trim(), "editor");
    await go(e.page, `/workloads/${id}`);
    await e.page.waitForSelector(".effective .settings-table");
    await settled(e.page);
    // The effective policy, readable, with where each setting came from (the defaults here).
    const modeRow = e.page.locator(".effective tr", { hasText: "CPU mode" });
    assert.match(await modeRow.textContent(), /audit.*default/);
    await screenshot(e.page, "workload-effective-policy");
    await e.page.click("button:has-text('Approve once…')");
    const dialog = e.page.locator("dialog[open]");
    await dialog.waitFor();
    const rows = dialog.locator("table.approve-changes tbody tr");
    assert.ok(await rows.count() >= 2, "requests and limits of CPU and memory");
    const cpuRequest = dialog.locator("table.approve-changes tbody tr", { hasText: "CPU" }).filter({ hasText: "request" });
    assert.match(await cpuRequest.textContent(), /app.*CPU.*request.*2 cores.*m/, "container, resource, setting: from → to");
    await dialog.locator("#approve-reason").fill("e2e: approved by the editor");
    await screenshot(e.page, "workload-approve-dialog");
    await dialog.locator("button.primary").click();
    const state = e.page.locator("section.answer .approval-state");
    await state.waitFor();
    assert.match(await state.textContent(), /Approved once by eddie (just now|.* ago): the agent applies it at its next pass/);
    await e.page.waitForSelector(".timeline .tl-config:has-text('WorkloadApproved')");
    assert.match(await e.page.textContent(".timeline .tl-config"), /eddie.*e2e: approved by the editor/);
    await settled(e.page);
    await screenshot(e.page, "workload-approved");
    // While it is pending there is nothing to approve; once the agent applied it (the
    // page follows), approving the same recommendation again is refused by the API, and
    // its message is shown.
    await e.page.waitForSelector("section.answer button:has-text('Approve once…'):not([disabled])", { timeout: 60000 });
    assert.match(await state.textContent(), /applied (just now|.* ago)/);
    e.expect((status, method, url) => status === 409 && method === "POST" && url.endsWith("/approve"));
    await e.page.click("button:has-text('Approve once…')");
    await e.page.locator("dialog[open] button.primary").click();
    await e.page.waitForSelector("dialog[open] .state.error");
    assert.match(await e.page.textContent("dialog[open] .state.error"), /already approved.*HTTP 409/s);
    await e.page.locator("dialog[open] button:has-text('Cancel')").click();
    e.expect(() => false);
    e.assertClean("approve as an editor");
  } finally {
    await e.context.close();
    const back = await hub.api("PUT", "/v1/admin/settings/recommender", settings);
    assert.equal(back.status, 200, JSON.stringify(back.body));
  }
  await go(page, "/audit?tab=config&action=WorkloadApproved");
  await settled(page);
  const row = page.locator("table tbody tr", { hasText: "WorkloadApproved" });
  assert.equal(await row.count(), 1, "the approval is audited");
  assert.match(await row.textContent(), /eddie/);
  assert.match(await row.textContent(), /demo-east\/shop\/Deployment\/catalog/);
  await screenshot(page, "audit-config-approved");
  tab.assertClean("approval audit");
});

test("a policy: create it, an invalid field shows the API's error at that field (form and JSON line), fix it, diff and revert versions (with a conflict), delete it, and find it all in the audit", async () => {
  await go(page, "/policies");
  await settled(page);
  await page.click("a:has-text('New policy')");
  await page.waitForSelector("form[aria-label='New policy']");
  await page.fill("#pol-name", "e2e-sandbox");
  // It selects a namespace the demo does not have, so it changes no workload's policy.
  await page.fill("#pol-selector-namespaces", "e2e-sandbox");
  await page.selectOption("#pol-mode-cpu", "auto-patch");
  await page.fill("#pol-reason", "e2e: a policy for the browser test");
  assert.match(await page.inputValue("#pol-json"), /"namespaces": \[\s*"e2e-sandbox"\s*\]/, "the form writes the JSON document");
  await page.click("form[aria-label='New policy'] button[type=submit]");
  await page.waitForSelector("text=Saved as version 1.");
  await settled(page);
  const policyUrl = new URL(page.url()).pathname;
  assert.match(policyUrl, /^\/policies\/\d+$/);
  assert.match(await page.textContent(".settings-table"), /Namespaces\s*e2e-sandbox/);
  await screenshot(page, "policy-view");

  // An invalid field in the form: the error sits at that control.
  await page.click("[role=tab]:has-text('Edit')");
  await page.waitForSelector("form[aria-label='Edit policy']");
  await page.fill("#pol-guardrails-minConfidence", "200");
  tab.expect((status, method, url) => status === 400 && method === "PUT" && /\/v1\/policies\/\d+$/.test(url));
  await page.click("form[aria-label='Edit policy'] button[type=submit]");
  const err = page.locator("#pol-guardrails-minConfidence-error");
  await err.waitFor();
  assert.match(await err.textContent(), /between 0 and 95/);
  assert.equal(await page.locator(".field.invalid #pol-guardrails-minConfidence").count(), 1, "the field is marked");
  assert.equal(await page.getAttribute("#pol-guardrails-minConfidence", "aria-invalid"), "true");
  await screenshot(page, "policy-invalid-field");

  // A field only the JSON editor has: the error names its line in the editor.
  const doc = JSON.parse(await page.inputValue("#pol-json"));
  doc.guardrails.minConfidence = 80;
  doc.apply = { maintenanceWindows: [{ cron: "every night", duration: "2h", timezone: "UTC" }] };
  await page.fill("#pol-json", JSON.stringify(doc));
  assert.equal(await page.inputValue("#pol-guardrails-minConfidence"), "80", "the JSON editor writes the form");
  await page.click("form[aria-label='Edit policy'] button[type=submit]");
  const jsonErr = page.locator(".json-errors li[data-path='apply.maintenanceWindows[0].cron']");
  await jsonErr.waitFor();
  assert.match(await jsonErr.textContent(), /line \d+.*five-field cron/);
  const line = Number(await jsonErr.getAttribute("data-line"));
  const text = (await page.inputValue("#pol-json")).split("\n");
  assert.match(text[line - 1], /"cron": "every night"/, "the line the error names is the cron's");
  assert.equal(await page.locator("#pol-guardrails-minConfidence-error").count(), 0, "the fixed field is clean");
  await screenshot(page, "policy-invalid-json-line");
  delete doc.apply;
  await page.fill("#pol-json", JSON.stringify(doc));
  tab.expect(() => false);
  await page.click("form[aria-label='Edit policy'] button[type=submit]");
  await page.waitForSelector("text=Saved as version 2.");
  await settled(page);

  // Versions: the diff between 1 and 2, and a revert that someone else's change beats.
  await page.click("[role=tab]:has-text('Versions')");
  await page.waitForSelector(".diff-lines");
  await settled(page);
  assert.match((await page.locator(".diff-lines .add").allTextContents()).join("\n"), /\+ +"minConfidence": 80/);
  await screenshot(page, "policy-versions-diff");
  const pid = policyUrl.split("/").pop();
  const behind = await hub.api("PUT", `/v1/policies/${pid}`, { ...doc, description: "changed behind the UI's back", version: 2 });
  assert.equal(behind.status, 200, JSON.stringify(behind.body));
  await page.click("button:has-text('Revert to v1…')");
  const dialog = page.locator("dialog[open]");
  await dialog.locator(".diff-lines").waitFor();
  await dialog.locator("#revert-reason").fill("e2e: back to the first version");
  tab.expect((status, method, url) => (status === 412 || status === 409) && method === "POST" && url.endsWith("/revert"));
  await dialog.locator("button.primary").click();
  await dialog.locator(".conflict").waitFor();
  assert.match(await dialog.locator(".conflict").textContent(), /Someone changed this policy.*version 3/s);
  await screenshot(page, "policy-revert-conflict");
  tab.expect(() => false);
  await dialog.locator(".conflict button:has-text('Reload')").click();
  await page.waitForSelector("h1:has-text('version 3')");
  await settled(page);
  await page.click("button:has-text('Revert to v1…')");
  await page.locator("dialog[open] #revert-reason").fill("e2e: back to the first version");
  await page.locator("dialog[open] button.primary").click();
  await page.waitForSelector("h1:has-text('version 4')");
  // The versions table reloads after the heading: wait for its new first row.
  await page.locator("table.versions tbody tr:first-child", { hasText: "reverted" }).waitFor();
  await settled(page);
  assert.match(await page.textContent("table.versions tbody tr:first-child"), /4.*current.*reverted.*e2e: back to the first version/s);
  await screenshot(page, "policy-reverted");

  // Soft delete, with confirmation: hidden from the list, shown with "Show deleted".
  await page.click("[role=tab]:has-text('Settings')");
  await page.click("button:has-text('Delete…')");
  await page.locator("dialog[open] #delete-reason").fill("e2e: done with it");
  await page.locator("dialog[open] button.primary").click();
  await page.waitForFunction(() => location.pathname === "/policies");
  await settled(page);
  assert.equal(await page.locator("table.policies tr", { hasText: "e2e-sandbox" }).count(), 0, "deleted policies are hidden");
  await page.check("label.check input");
  await settled(page);
  assert.match(await page.textContent("table.policies tr:has-text('e2e-sandbox')"), /deleted/);
  await screenshot(page, "policies-with-deleted");

  await go(page, `/audit?tab=config&targetType=policy&targetId=${pid}`);
  await settled(page);
  for (const action of ["PolicyCreated", "PolicyUpdated", "PolicyReverted", "PolicyDeleted"]) {
    assert.ok(await page.locator("table tbody tr", { hasText: action }).count() >= 1, `${action} is audited`);
  }
  await screenshot(page, "audit-config-policy");
  tab.assertClean("policies");
});

test("the clusters' own policies: listed read-only beside the hub's, one object's page, and a workload's effective policy names the one it comes from", async () => {
  await go(page, "/policies");
  await settled(page);
  const row = page.locator("section.cluster-policies table tbody tr", { hasText: "auth-from-git" });
  await row.waitFor();
  const text = await row.textContent();
  assert.match(text, /from the cluster/);
  assert.match(text, /demo-west/);
  assert.match(text, /in force/);
  assert.match(await page.textContent("section.cluster-policies"), /Read-only here/);
  await screenshot(page, "policies-from-the-cluster");
  await row.locator("a").first().click();
  await page.waitForSelector("h2:has-text('In force: generation 1')");
  assert.equal(await page.locator("[role=tab]:has-text('Edit'), button:has-text('Delete')").count(), 0, "nothing to edit in the hub");
  const auth = (await hub.api("GET", "/v1/workloads?cluster=demo-west&namespace=auth&limit=1")).body.items[0];
  await go(page, `/workloads/${auth.id}`);
  await page.waitForSelector(".effective .settings-table");
  await settled(page);
  assert.match(await page.textContent(".effective tr:has-text('Cooldown')"), /48h.*auth-from-git \(cluster\) g1/);
  assert.match(await page.textContent(".effective p.small"), /the cluster's own come first.*auth-from-git from the cluster, generation 1/);
  await screenshot(page, "workload-policy-from-the-cluster");
  // An override of what Git sets would change nothing: the dialog says so at the field.
  await page.click("button:has-text('Set override…')");
  assert.match(await page.textContent("dialog[open] #ov-cpu-hint"), /auth-from-git \(from Git\): an override of it has no effect/);
  await page.locator("dialog[open] button:has-text('Cancel')").click();
  tab.assertClean("cluster policies");
});

test("set and clear a workload's override, see where the effective policy comes from, and find both in the audit", async () => {
  const id = await catalogId();
  await go(page, `/workloads/${id}`);
  await page.waitForSelector(".effective .settings-table");
  await settled(page);
  await page.click("button:has-text('Set override…')");
  const dialog = page.locator("dialog[open]");
  await dialog.locator("#ov-memory").selectOption("off");
  await dialog.locator("#ov-reason").fill("e2e: memory hands off");
  await dialog.locator("button.primary").click();
  await page.waitForSelector(".override .badge:has-text('in force')");
  await settled(page);
  assert.match(await page.textContent(".effective tr:has-text('Memory mode')"), /off.*override/);
  assert.match(await page.textContent(".effective tr:has-text('CPU mode')"), /audit.*default/);
  await screenshot(page, "workload-override");
  await page.click("button:has-text('Clear override…')");
  await page.locator("dialog[open] #ov-clear-reason").fill("e2e: back to the policy");
  await page.locator("dialog[open] button.primary").click();
  await page.waitForSelector(".override p.muted:has-text('No override')");
  await settled(page);
  await go(page, `/audit?tab=config&targetType=workload-override&targetId=${id}`);
  await settled(page);
  assert.equal(await page.locator("table tbody tr", { hasText: "OverrideSet" }).count(), 1);
  assert.equal(await page.locator("table tbody tr", { hasText: "OverrideCleared" }).count(), 1);
  tab.assertClean("override");
});

test("settings show the API's validation error at the field it names", async () => {
  await go(page, "/settings");
  await settled(page);
  // Durations are written as policies write them (issue 27, defect 9), not 604800.
  assert.equal(await page.inputValue("#lookbackSeconds"), "7d");
  assert.equal(await page.inputValue("#stepSeconds"), "1m");
  await page.fill("#lookbackSeconds", "60");
  tab.expect((status, method, url) => status === 400 && method === "PUT" && url.endsWith("/v1/admin/settings/recommender"));
  await page.click("form[aria-label='Recommender settings'] button[type=submit]");
  const err = page.locator("#lookbackSeconds-error");
  await err.waitFor();
  assert.match(await err.textContent(), /lookback/i);
  assert.ok(await page.locator(".field.invalid #lookbackSeconds").count(), "the field is marked");
  await screenshot(page, "settings-invalid-field");
  await page.fill("#lookbackSeconds", "604800");
  await page.fill("#retentionDays", "14");
  await page.click("form[aria-label='Recommender settings'] button[type=submit]");
  await page.waitForSelector("form[aria-label='Recommender settings'] [role=status].ok");
  assert.equal(await page.locator("#lookbackSeconds-error").count(), 0);

  await go(page, "/settings?tab=pricing");
  await settled(page);
  await page.fill("#currency", "usd");
  tab.expect((status, method, url) => status === 400 && method === "PUT" && url.endsWith("/v1/admin/settings/pricing"));
  await page.click("form[aria-label='Pricing'] button[type=submit]");
  const currencyError = page.locator("#currency-error");
  await currencyError.waitFor();
  assert.match(await currencyError.textContent(), /currency|ISO/i);
  await screenshot(page, "settings-pricing-invalid-field");
  tab.expect(() => false);
  tab.assertClean("settings");
});

test("an API token made in the UI is shown once and found in the config-change audit", async () => {
  await go(page, "/settings?tab=tokens");
  await settled(page);
  await page.fill("#tok-name", "e2e-ui-token");
  await page.selectOption("#tok-role", "viewer");
  await page.click("form[aria-label='Create an API token'] button[type=submit]");
  const secret = await page.waitForSelector("text=/kerf_at_/");
  assert.ok(secret);
  await settled(page);

  await go(page, "/audit?tab=config");
  await settled(page);
  const filters = "form[aria-label='Filter the audit']";
  await page.fill(`${filters} label:has-text('Action') input`, "TokenCreated");
  await page.click(`${filters} button[type=submit]`);
  await settled(page);
  assert.match(page.url(), /action=TokenCreated/);
  const tokenRow = page.locator("table tbody tr", { hasText: "e2e-ui-token" });
  assert.equal(await tokenRow.count(), 1, "the token made in the UI");
  assert.match(await tokenRow.textContent(), /admin\s*user/, "made by the admin user's session");
  await screenshot(page, "audit-config-token-created");

  await page.fill(`${filters} label:has-text('Action') input`, "UserCreated");
  await page.click(`${filters} button[type=submit]`);
  await settled(page);
  assert.match(page.url(), /action=UserCreated/);
  await page.locator("table tbody tr", { hasText: VIEWER.username }).first().waitFor({ timeout: 10000 });
  assert.equal(await page.locator("table tbody tr", { hasText: VIEWER.username }).count(), 1, "the viewer made in setup");
  tab.assertClean("config audit");
});

test("pause a cluster with a reason and resume time, resume it, and find both in the config-change audit", async () => {
  assert.ok(api.has("POST /v1/clusters/{cluster}/pause"), "the hub serves the fleet API");
  await go(page, "/clusters");
  await settled(page);
  const card = page.locator("article[aria-label='Cluster demo-east']");
  await card.locator("button", { hasText: "Pause…" }).click();
  const dialog = page.locator("dialog[open]");
  await dialog.locator("#pause-reason").fill("e2e: change freeze for the release");
  const until = new Date(Date.now() + 2 * 3600_000);
  const local = new Date(until.getTime() - until.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  await dialog.locator("#pause-until").fill(local);
  await screenshot(page, "clusters-pause-dialog");
  await dialog.locator("button.primary").click();
  await card.locator(".badge", { hasText: "paused" }).waitFor();
  await settled(page);
  assert.match(await card.textContent(), /e2e: change freeze for the release/);
  await screenshot(page, "clusters-paused");
  await go(page, "/");
  await settled(page);
  assert.match(await page.textContent("article[aria-label='Cluster demo-east'] .readiness"), /paused/);
  await screenshot(page, "overview-paused");

  await go(page, "/clusters");
  await settled(page);
  await card.locator("button", { hasText: "Resume…" }).click();
  await page.locator("dialog[open] button.primary").click();
  await page.waitForFunction(() => !document.querySelector("dialog[open]"));
  // The list reloads after the dialog closes: wait (with Playwright's deadline) for the
  // badge to go rather than count it at once, which raced that reload under load.
  await card.locator(".badge", { hasText: "paused" }).waitFor({ state: "detached" });
  await settled(page);
  assert.equal(await card.locator(".badge", { hasText: "paused" }).count(), 0);

  await go(page, "/audit?tab=config&targetType=automation");
  await settled(page);
  assert.ok(await page.locator("table tbody tr", { hasText: "AutomationPaused" }).count() >= 1, "the pause is audited");
  assert.ok(await page.locator("table tbody tr", { hasText: "AutomationResumed" }).count() >= 1, "the resume is audited");
  await screenshot(page, "audit-config-automation");
  tab.assertClean("clusters");
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
    message: i === 0 ? "a message with, a comma and \"quotes\"" : i === 3 ? "=1+2 written by an agent" : undefined,
  }));
  await hub.postEvents(events);
  // The demo's own agents report events too: only those of the test's cluster.
  await go(page, "/audit?cluster=e2e");
  await settled(page);
  assert.equal(await page.locator("table tbody tr").count(), 50, "first page of 50");
  await page.click("text=Next →");
  await settled(page);
  assert.equal(await page.locator("table tbody tr").count(), 10, "second page");
  assert.match(page.url(), /cursor=/, "the page is in the URL");
  await page.click("text=← Previous");
  await settled(page);
  await page.selectOption("form[aria-label='Filter the audit'] select", "blocked");
  await page.click("form[aria-label='Filter the audit'] button[type=submit]");
  await settled(page);
  assert.match(page.url(), /type=blocked/);
  assert.equal(await page.locator("table tbody tr").count(), 20, "20 blocked events");
  await screenshot(page, "audit-events-filtered");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("text=Export CSV")]);
  const csv = await (await download.createReadStream()).toArray().then((c) => Buffer.concat(c).toString("utf8"));
  const lines = csv.trim().split("\r\n");
  assert.equal(lines.length, 21, "header + 20 rows");
  assert.ok(lines[0].startsWith("time,cluster,namespace"), lines[0]);
  assert.ok(csv.includes('"a message with, a comma and ""quotes"""'), "RFC 4180 quoting");
  assert.ok(csv.includes(",'=1+2 written by an agent"), "a formula from an agent is text in the export");
  tab.assertClean("audit");
});

test("a viewer sees no actions, and what the API refuses is shown as its message", async () => {
  const v = await newPage(browser, hub.url);
  try {
    await signIn(v.page, hub.url, VIEWER);
    assert.equal((await v.page.textContent(".who .badge.role")).trim(), "viewer");
    await v.page.waitForSelector(".cluster-grid .cluster");
    assert.equal(await v.page.locator("button", { hasText: "Run now" }).count(), 0, "no Run now for a viewer");
    await screenshot(v.page, "viewer-overview");
    if (api.has("POST /v1/clusters/{cluster}/pause")) {
      await go(v.page, "/clusters");
      await settled(v.page);
      assert.equal(await v.page.locator("button", { hasText: /Pause|Rotate|Retire/ }).count(), 0, "no cluster actions for a viewer");
    }

    const wl = (await hub.api("GET", "/v1/workloads?q=catalog&cluster=demo-east")).body.items[0];
    await go(v.page, `/workloads/${wl.id}`);
    await v.page.waitForSelector(".results .result");
    await settled(v.page);
    assert.equal(await v.page.locator("button", { hasText: "Approve once" }).count(), 0, "no approve for a viewer");
    await v.page.waitForSelector("text=Approving needs the editor role.");
    assert.equal(await v.page.locator("button", { hasText: /override/i }).count(), 0, "no override actions for a viewer");
    await screenshot(v.page, "viewer-workload-detail");

    // Admin-only pages ask the API anyway and show its refusal, not a blank page.
    v.expect((status) => status === 403);
    await go(v.page, "/settings");
    await settled(v.page);
    const refusal = await v.page.textContent("main .state.error");
    assert.match(refusal, /HTTP 403/);
    assert.match(refusal, /role does not allow/);
    await screenshot(v.page, "viewer-settings-refused");
    await go(v.page, "/audit?tab=config");
    await settled(v.page);
    assert.match(await v.page.textContent("main .state.error"), /HTTP 403/);

    // A change sent straight to the API with the viewer's own session is refused too.
    const direct = await v.page.evaluate(async () => {
      const me = await (await fetch("/v1/me")).json();
      const r = await fetch("/v1/clusters/demo-east/runs", { method: "POST", headers: { "X-CSRF-Token": me.csrfToken } });
      return { status: r.status, body: await r.json() };
    });
    assert.equal(direct.status, 403, JSON.stringify(direct.body));
    const approve = await v.page.evaluate(async (wid) => {
      const me = await (await fetch("/v1/me")).json();
      const w = await (await fetch(`/v1/workloads/${wid}`)).json();
      const r = await fetch(`/v1/workloads/${wid}/approve`, { method: "POST", headers: { "X-CSRF-Token": me.csrfToken, "Content-Type": "application/json" }, body: JSON.stringify({ recommendationId: w.recommendation.id }) });
      return { status: r.status, body: await r.json() };
    }, wl.id);
    assert.equal(approve.status, 403, JSON.stringify(approve.body));
    v.expect(() => false);
    v.assertClean("viewer");
  } finally {
    await v.context.close();
  }
});

test("the UI signs out, and the session is gone server-side", async () => {
  await page.click("text=Log out");
  await page.waitForSelector("form[aria-label='Sign in']");
  const state = await page.evaluate(async () => (await fetch("/v1/session")).json());
  assert.deepEqual(state, { signedIn: false, me: null });
  tab.expect((status, method, url) => status === 401 && url.endsWith("/v1/me"));
  const me = await page.evaluate(async () => (await fetch("/v1/me")).status);
  assert.equal(me, 401);
  tab.expect(() => false);
  tab.assertClean("sign out");
});

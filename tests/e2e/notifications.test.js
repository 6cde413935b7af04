// The Notifications page in a real headless chromium against `kerf demo`: an editor
// adds a signed webhook channel through the form (an invalid URL answered at its field
// first), sends a test message, sees its status and kerf's verdict, finds the message in
// the delivery log — and the receiver, a real HTTP server here, verified the HMAC. A
// receiver that refuses shows up in the log as a failure.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createHmac, timingSafeEqual } from "node:crypto";
import { screenshot, go, settled } from "./lib/browser.js";
import { withSignedInPage } from "./lib/session.js";

const SECRET = "e2e-signing-secret-0123456789";
const received = [];
let refuse = false;
let hub, browser, tab, page, receiver, hookUrl;

/** A webhook receiver that checks X-Kerf-Signature and the timestamp's freshness as docs/contracts/notifications.md says. */
function startReceiver() {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const ts = req.headers["x-kerf-timestamp"] ?? "";
        const sig = String(req.headers["x-kerf-signature"] ?? "").replace(/^sha256=/, "");
        const want = createHmac("sha256", SECRET).update(`${ts}.`).update(body).digest("hex");
        const signed = sig.length === want.length && timingSafeEqual(Buffer.from(sig), Buffer.from(want));
        // The contract's recipe refuses replays: a timestamp more than 300 s from now.
        const fresh = /^\d+$/.test(ts) && Math.abs(Date.now() / 1000 - Number(ts)) <= 300;
        const ok = signed && fresh;
        received.push({ ok, kind: req.headers["x-kerf-kind"], body: JSON.parse(body.toString("utf8")) });
        if (refuse) { res.writeHead(503); res.end("maintenance"); return; }
        res.writeHead(ok ? 200 : 401); res.end(ok ? "accepted" : "bad signature");
      });
    });
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

before(async () => {
  receiver = await startReceiver();
  hookUrl = `http://127.0.0.1:${receiver.address().port}/hooks/e2e-path-secret`;
});

withSignedInPage({ ready: (s) => ({ hub, browser, tab, page } = s) });

after(async () => {
  receiver?.close();
});

test("an editor adds a webhook channel, sends a test message and finds it in the delivery log", async () => {
  await go(page, "/notifications");
  await settled(page);
  assert.match(await page.textContent("main h1"), /Notifications/);
  assert.match(await page.textContent("main"), /No channels yet/);
  await screenshot(page, "notifications-empty");

  await page.fill("#ch-name", "ops-webhook");
  await page.selectOption("#ch-type", "webhook");
  await page.fill("#ch-url", "ftp://not-a-webhook");
  await page.fill("#ch-secret", SECRET);
  tab.expect((status, method, url) => status === 400 && method === "POST" && url.endsWith("/v1/notifications/channels"));
  await page.click("form[aria-labelledby=add-channel] button[type=submit]");
  const urlError = await page.waitForSelector("#ch-url-error");
  assert.match(await urlError.textContent(), /http\(s\) URL/);
  tab.expect(() => false);

  await page.fill("#ch-url", hookUrl);
  await page.click("form[aria-labelledby=add-channel] button[type=submit]");
  await page.waitForSelector("article[aria-label='Channel ops-webhook']");
  const card = page.locator("article[aria-label='Channel ops-webhook']");
  const target = await card.locator("code.target").textContent();
  assert.ok(target.startsWith("http://127.0.0.1:") && !target.includes("e2e-path-secret"), `masked: ${target}`);
  assert.match(await page.textContent("main"), /Changes, holds, rollbacks, failures, readiness and pauses/);

  await card.locator("button", { hasText: "Send test message" }).click();
  await card.locator(".test-result .badge.ok").waitFor();
  assert.match(await card.locator(".test-result").textContent(), /delivered.*answered 200/s);
  // The status and a verdict only: never the receiver's own words ("accepted").
  assert.doesNotMatch(await card.locator(".test-result").textContent(), /accepted/);
  const row = page.locator("table.delivery-log tbody tr", { hasText: "Test message from kerf to ops-webhook" });
  await row.waitFor();
  assert.match(await row.textContent(), /test.*delivered/s);
  await settled(page);
  await screenshot(page, "notifications-test-sent");
  assert.equal(received.length, 1);
  assert.deepEqual([received[0].ok, received[0].kind, received[0].body.title], [true, "test", "Test message from kerf to ops-webhook"]);
  tab.assertClean("notifications");
});

test("a receiver that refuses shows as a failure in the delivery log", async () => {
  refuse = true;
  const card = page.locator("article[aria-label='Channel ops-webhook']");
  await card.locator("button", { hasText: "Send test message" }).click();
  await card.locator(".test-result .badge.bad").waitFor();
  assert.match(await card.locator(".test-result").textContent(), /not delivered.*503.*refused by the receiver/s);
  assert.doesNotMatch(await card.locator(".test-result").textContent(), /maintenance/);
  await page.selectOption(".filters select >> nth=0", "failed");
  const failed = page.locator("table.delivery-log tbody tr.failed");
  await failed.first().waitFor();
  assert.equal(await failed.count(), 1);
  assert.match(await failed.first().textContent(), /failed.*503.*the receiver answered 503/s);
  await settled(page);
  await screenshot(page, "notifications-failure");
  refuse = false;
  tab.assertClean("notifications failure");
});

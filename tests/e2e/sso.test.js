// Single sign-on in a real headless chromium: `kerf serve` configured with [auth.oidc]
// against a real OpenID Connect provider (tests/oidc-provider, built from zitadel/oidc).
// A person signs in through the provider's redirect and lands where they started, with
// the roles their groups give; logout ends the provider's session too; removed from a
// group, they lose that role at their next sign-in; a person the provider disabled, or
// in no mapped group, gets no session and a page that says why; the admin maps a group
// in Settings.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, newPage, screenshot, settled, go } from "./lib/browser.js";
import { startEmptyHub } from "./lib/hub.js";
import { startOidcProvider } from "./lib/oidc-provider.js";
import { violations } from "./lib/axe.js";

const SECRET = "e2e-kerf-client-secret-5521";
const PASSWORD = "Provider-Pass-3377";
let idp, hub, browser, tab, page;

before(async () => {
  idp = await startOidcProvider();
  hub = await startEmptyHub({
    config: () => `[auth]
argon2_iterations = 1

[auth.oidc]
issuer = "${idp.url}"
name = "Corp SSO"
client_id = "kerf"
scopes = ["openid", "profile", "email", "offline_access"]

[[auth.oidc.groups]]
group = "kerf-admins"
role = "admin"

[[auth.oidc.groups]]
group = "kerf-viewers"
role = "viewer"
`,
    env: { KERF_OIDC_CLIENT_SECRET: SECRET },
  });
  await idp.putClient("kerf", { secret: SECRET, redirectUris: [`${hub.url}/v1/auth/oidc/callback`], postLogoutRedirectUris: [`${hub.url}/login`] });
  const team = await hub.api("POST", "/v1/admin/teams", { name: "shop", namespaces: [{ cluster: "*", namespace: "shop" }] });
  assert.equal(team.status, 201, JSON.stringify(team.body));
  const mapped = await hub.api("PUT", "/v1/admin/sso/mappings", { mappings: [{ group: "shop-devs", team: "shop", teamRole: "team-editor" }] });
  assert.equal(mapped.status, 200, JSON.stringify(mapped.body));
  browser = await launch();
  tab = await newPage(browser, hub.url);
  page = tab.page;
});

after(async () => {
  await browser?.close();
  await hub?.stop();
  await idp?.stop();
});

/** Signs in from the login page through the provider's own login form. */
async function throughProvider(username) {
  await page.click("a.sso-login");
  await page.waitForURL((u) => u.toString().startsWith(idp.url));
  await page.waitForSelector("#username");
  await page.fill("#username", username);
  await page.fill("#password", PASSWORD);
  await page.click("button[type=submit]");
}

/** Who the browser is signed in as (GET /v1/session: 200 either way), null when signed out. */
const me = () => page.evaluate(() => fetch("/v1/session", { credentials: "same-origin" }).then((r) => r.json()).then((s) => s.me));

test("a person signs in through the provider and lands where they started, with their groups' roles", async () => {
  await idp.putUser("ana", { password: PASSWORD, email: "ana@corp.example", name: "Ana Lima", groups: ["kerf-viewers", "shop-devs", "unrelated"] });
  await page.goto(`${hub.url}/workloads`);
  await page.waitForSelector("a.sso-login");
  assert.equal((await page.textContent("a.sso-login")).trim(), "Sign in with Corp SSO");
  await screenshot(page, "sso-login");
  assert.deepEqual(await violations(page), [], "the login page with a provider");
  await throughProvider("ana");
  await page.waitForSelector("nav[aria-label='Main']");
  assert.equal(new URL(page.url()).pathname, "/workloads");
  await settled(page);
  const who = await me();
  assert.equal(who.name, "ana");
  assert.equal(who.role, "viewer");
  assert.deepEqual(who.teams.map((t) => [t.name, t.role]), [["shop", "team-editor"]]);
  assert.match(await page.textContent("header"), /shop: team-editor/);
  tab.assertClean("signing in through the provider");
});

test("logout ends the provider's session too; removed from a group, the role is gone at the next sign-in", async () => {
  await page.click("header button:has-text('Log out')");
  // The provider ends its session and sends the browser back to kerf's login page.
  await page.waitForURL((u) => u.toString().startsWith(`${hub.url}/login`));
  await page.waitForSelector("a.sso-login");
  assert.equal(await me(), null, "signed out of kerf");
  await idp.putUser("ana", { password: PASSWORD, name: "Ana Lima", groups: ["kerf-viewers"] });
  await throughProvider("ana");
  await page.waitForSelector("nav[aria-label='Main']");
  const who = await me();
  assert.equal(who.role, "viewer");
  assert.deepEqual(who.teams, [], "no longer in shop");
  tab.assertClean("signing in again");
});

test("a person the provider disabled, or in no mapped group, gets no session and a page that says why", async () => {
  await page.click("header button:has-text('Log out')");
  await page.waitForSelector("a.sso-login");
  await idp.putUser("bo", { password: PASSWORD, groups: ["kerf-viewers"], disabled: true });
  await throughProvider("bo");
  await page.waitForSelector("text=user is disabled");
  assert.ok(page.url().startsWith(idp.url), "the provider refused at its own page");
  await page.goto(`${hub.url}/`);
  await page.waitForSelector("a.sso-login");
  assert.equal(await me(), null);

  await idp.putUser("cy", { password: PASSWORD, groups: ["contractors"] });
  await throughProvider("cy");
  await page.waitForSelector("[data-sso-error=no_mapped_group]");
  assert.match(await page.textContent("[data-sso-error]"), /You have no access to kerf.*None of your groups at Corp SSO gives a kerf role/s);
  assert.equal(await me(), null);
  await screenshot(page, "sso-refused");
  assert.deepEqual(await violations(page), [], "the refused sign-in's page");
  tab.assertClean("refused sign-ins");
});

test("an admin maps a group in Settings, and sees what to register with the provider", async () => {
  // Another browser: the last one still holds cy's session at the provider.
  tab = await newPage(browser, hub.url);
  page = tab.page;
  await idp.putUser("dee", { password: PASSWORD, groups: ["kerf-admins"] });
  await page.goto(`${hub.url}/`);
  await throughProvider("dee");
  await page.waitForSelector("nav[aria-label='Main']");
  await go(page, "/settings?tab=sso");
  await page.waitForSelector("table[aria-label='Group mappings']");
  const facts = await page.textContent("dl.facts");
  assert.ok(facts.includes(`${hub.url}/v1/auth/oidc/callback`), facts);
  assert.ok(!facts.includes(SECRET));
  const rows = () => page.$$eval("table[aria-label='Group mappings'] tbody tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 3).map((td) => td.textContent.trim())));
  assert.deepEqual(await rows(), [["kerf-admins", "fleet admin", "config file"], ["kerf-viewers", "fleet viewer", "config file"], ["shop-devs", "team-editor in team shop", "this page"]]);
  await page.fill("#sso-group", "sre");
  await page.selectOption("#sso-role", "editor");
  await page.click("form[aria-label='Map a group'] button[type=submit]");
  await page.waitForSelector("table[aria-label='Group mappings'] tbody tr:has-text('sre')");
  assert.deepEqual((await rows()).at(-1), ["sre", "fleet editor", "this page"]);
  await screenshot(page, "sso-settings");
  assert.deepEqual(await violations(page), [], "Settings > Single sign-on");
  const audit = await hub.api("GET", "/v1/audit/config?action=SsoMappingsUpdated");
  assert.equal(audit.body.items[0].actor.name, "dee");
  // The users list says who signs in through the provider.
  await go(page, "/settings?tab=users");
  await page.waitForSelector("tr:has-text('dee') .badge:has-text('single sign-on')");
  await settled(page);
  tab.assertClean("single sign-on settings");
});

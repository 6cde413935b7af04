// One browser session per test file: a hub (`kerf demo` unless `start` says otherwise),
// a headless browser, a page (its own context), signed in with the hub's login, and
// the teardown. `withSignedInPage()` registers the file's before/after hooks and
// returns the session, filled in before the first test runs.
import { before, after } from "node:test";
import { startHub } from "./hub.js";
import { launch, newPage, signIn } from "./browser.js";

/**
 * `start`: makes the hub (default `startHub()`); `beforeSignIn(session)`: runs on the
 * fresh page (permissions, viewport); `signedIn: false` leaves the page at no URL;
 * `ready(session)`: runs last (test data, waiting for the first runs). The session has
 * `hub`, `browser`, `tab` (newPage's handle: page, context, expect, assertClean) and
 * `page`.
 */
export function withSignedInPage({ start = () => startHub(), beforeSignIn, signedIn = true, ready } = {}) {
  const session = {};
  before(async () => {
    session.hub = await start();
    session.browser = await launch();
    session.tab = await newPage(session.browser, session.hub.url);
    session.page = session.tab.page;
    if (beforeSignIn) await beforeSignIn(session);
    if (signedIn) await signIn(session.page, session.hub.url, session.hub.login);
    if (ready) await ready(session);
  });
  after(async () => {
    await session.browser?.close();
    await session.hub?.stop();
  });
  return session;
}

// Headless Debian chromium through playwright-core, with every console error, page error
// and CSP violation collected so a test can assert there were none.
import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), "kerf-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    viewport: { width: 1280, height: 900 },
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    context,
    close: async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); },
  };
}

/** A page whose problems (console errors, uncaught errors, CSP violations) are recorded. */
export async function newPage(context) {
  const page = await context.newPage();
  const problems = [];
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => { if (!r.failure()?.errorText.includes("ERR_ABORTED")) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`); });
  return { page, problems };
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

// axe-core (WCAG 2.1 A and AA rules) on a page, evaluated through the DevTools protocol
// so the hub's CSP stays as strict as in production.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

/** axe-core's WCAG 2.1 A/AA violations on the page as it is now. */
export async function violations(p) {
  if (!(await p.evaluate(() => typeof window.axe === "object"))) await p.evaluate(AXE);
  const result = await p.evaluate((tags) => window.axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] }), WCAG);
  // It really looked: rules passed on this page (color-contrast among them).
  assert.ok(result.passes.length >= 10, `axe ran ${result.passes.length} rules`);
  assert.ok(result.passes.some((r) => r.id === "color-contrast") || result.violations.some((r) => r.id === "color-contrast"), "the contrast rule ran");
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")}${v.nodes.length > 3 ? ` and ${v.nodes.length - 3} more` : ""}`);
}


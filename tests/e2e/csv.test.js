// The UI's CSV export (assets/ui/csv.js) neutralizes spreadsheet formulas in text that
// agents and users wrote, and still quotes per RFC 4180. Plain node, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cell, toCsv } from "../../assets/ui/csv.js";

test("cells a spreadsheet would run as formulas are shown as text", () => {
  for (const hostile of ["=HYPERLINK(\"http://evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]) {
    const out = cell(hostile);
    const unquoted = out.startsWith('"') ? out.slice(1, -1).replace(/""/g, '"') : out;
    assert.equal(unquoted, `'${hostile}`, `${JSON.stringify(hostile)} -> ${out}`);
  }
  assert.equal(cell("a message with, a comma"), '"a message with, a comma"');
  assert.equal(cell("plain"), "plain");
  assert.equal(cell(-3), "-3", "numbers stay numbers");
  assert.equal(cell("-3"), "'-3", "text that looks like a formula does not");
  assert.equal(cell(null), "");
});

test("a whole export keeps its shape", () => {
  const csv = toCsv([["message", (r) => r.m]], [{ m: "=cmd|' /C calc'!A0" }, { m: "ok" }]);
  assert.equal(csv, "message\r\n'=cmd|' /C calc'!A0\r\nok\r\n");
});

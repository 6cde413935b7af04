// CSV export: RFC 4180 quoting, downloaded through a Blob URL (no server round trip).
// Cells come from text agents and users wrote (event messages, reasons, names): one that
// a spreadsheet would run as a formula (=, +, -, @, or a leading tab or CR) is prefixed
// with ' so it is shown as text (OWASP "CSV injection").

const FORMULA = /^[=+\-@\t\r]/;

export function cell(v) {
  if (v === null || v === undefined) return "";
  let s = typeof v === "object" ? JSON.stringify(v) : String(v);
  // Numbers stay numbers: a negative figure is data, not a formula.
  if (typeof v !== "number" && FORMULA.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(columns, rows) {
  const lines = [columns.map(([name]) => cell(name)).join(",")];
  for (const r of rows) lines.push(columns.map(([, get]) => cell(get(r))).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

export function download(filename, text) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// JSON as text for people: pretty-printing that knows on which line each value sits (so
// an API error's path such as `apply.maintenanceWindows[0].cron` can point at a line of
// the editor), and a small line diff of two texts (LCS; policies are a few dozen lines).

/** `a.b[0].c` → ["a", "b", 0, "c"]. */
export function parsePath(path) {
  const out = [];
  for (const m of String(path).matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]);
  return out;
}

/** ["a", "b", 0] → `a.b[0]`. */
export function joinPath(segs) {
  return segs.reduce((s, x) => (typeof x === "number" ? `${s}[${x}]` : s ? `${s}.${x}` : x), "");
}

/**
 * The same text as JSON.stringify(value, null, 2), plus `lines`: the 1-based line of
 * every path (`""` is the root).
 */
export function pretty(value) {
  const lines = [];
  const where = new Map();
  const walk = (v, indent, prefix, path) => {
    where.set(joinPath(path), lines.length + 1);
    const pad = "  ".repeat(indent);
    if (Array.isArray(v) && v.length > 0) {
      lines.push(`${pad}${prefix}[`);
      v.forEach((x, i) => {
        walk(x, indent + 1, "", [...path, i]);
        if (i < v.length - 1) lines[lines.length - 1] += ",";
      });
      lines.push(`${pad}]`);
    } else if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0) {
      lines.push(`${pad}${prefix}{`);
      const keys = Object.keys(v).filter((k) => v[k] !== undefined);
      keys.forEach((k, i) => {
        walk(v[k], indent + 1, `${JSON.stringify(k)}: `, [...path, k]);
        if (i < keys.length - 1) lines[lines.length - 1] += ",";
      });
      lines.push(`${pad}}`);
    } else {
      lines.push(`${pad}${prefix}${JSON.stringify(v)}`);
    }
  };
  walk(value, 0, "", []);
  return { text: lines.join("\n"), lines: where };
}

/** The line of `path` in `pretty(value)`, or of its deepest ancestor that exists. */
export function lineOf(prettyResult, path) {
  const segs = parsePath(path);
  for (let n = segs.length; n >= 0; n--) {
    const line = prettyResult.lines.get(joinPath(segs.slice(0, n)));
    if (line) return line;
  }
  return 1;
}

/** Line diff: [{op: " " | "-" | "+", text, a, b}] with the line numbers in each side. */
export function diffLines(aText, bText) {
  const a = aText.split("\n");
  const b = bText.split("\n");
  const n = a.length;
  const m = b.length;
  // lcs[i][j] = length of the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push({ op: " ", text: a[i], a: ++i, b: ++j }); }
    else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) { out.push({ op: "-", text: a[i], a: ++i, b: null }); }
    else { out.push({ op: "+", text: b[j], a: null, b: ++j }); }
  }
  return out;
}

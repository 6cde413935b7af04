// The usage charts' scales and marks, as pure functions (tested in plain node): the time
// axis spans the data, the CPU axis the usage and the requests, and OOM labels that would
// overlap are merged.

/** The shortest time span an axis shows (seconds): a young workload is not a dot in years. */
export const MIN_SPAN_S = 15 * 60;

/** [min, max] of the time axis (seconds) for sample times `xs`: the data, at least MIN_SPAN_S. */
export function timeRange(xs) {
  if (xs.length === 0) return null;
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs) { if (x < lo) lo = x; if (x > hi) hi = x; }
  if (hi - lo >= MIN_SPAN_S) return [lo, hi];
  // Short data: pad it to the minimum span, ending at the newest sample.
  return [hi - MIN_SPAN_S, hi];
}

/**
 * The value axis: up to `max` (with 10 % room), from the usage peak and the lines that
 * set it. For CPU the limits count only when they are near the rest: a limit many times
 * the usage would squash the usage into a flat line, so it is listed as off the scale.
 * lines: [{label, kind, value}] (kind ends in "request" or "limit").
 */
export function valueRange(resource, usagePeak, lines) {
  const shown = lines.filter((l) => l.value !== null && l.value !== undefined);
  const anchors = [usagePeak, ...shown.filter((l) => resource !== "cpu" || l.kind.endsWith("request")).map((l) => l.value)];
  let top = Math.max(0, ...anchors);
  if (resource === "cpu") {
    // A limit just above the rest is drawn; a far one is not.
    for (const l of shown) if (l.kind.endsWith("limit") && l.value <= top * 1.25) top = Math.max(top, l.value);
  }
  const max = top * 1.1 || 1;
  return { max, offScale: shown.filter((l) => l.value > max) };
}

/**
 * OOM markers at pixel positions `xs` (sorted or not), merged into labels at least
 * `gap` pixels apart: [{x, n}] where n is how many kills the label stands for.
 */
export function oomLabels(xs, gap) {
  const sorted = [...xs].sort((a, b) => a - b);
  const out = [];
  for (const x of sorted) {
    const last = out[out.length - 1];
    if (last && x - last.x0 < gap) { last.n += 1; last.x1 = x; }
    else out.push({ x0: x, x1: x, n: 1 });
  }
  return out.map((g) => ({ x: g.x0, n: g.n }));
}

/** Binary steps for a memory axis (bytes): 1 KiB, 2 KiB, 4 KiB … 1 PiB, so ticks fall on 128 MiB, 256 MiB, not 95.4 MiB. */
export const MEMORY_INCRS = Array.from({ length: 41 }, (_, i) => 2 ** (i + 10));

/**
 * OOM kills at pixel positions `xs`, one mark per pixel column (the count of kills in
 * it): a chart of thousands of kills draws a mark per column, not thousands of lines.
 */
export function oomColumns(xs) {
  const cols = new Map();
  for (const x of xs) { const c = Math.round(x); cols.set(c, (cols.get(c) ?? 0) + 1); }
  return [...cols.entries()].sort((a, b) => a[0] - b[0]).map(([x, n]) => ({ x, n }));
}

/**
 * Labels that do not overlap: `labels` ([{x, n}], sorted) merged while one would start
 * before the previous one's text ends (`width(n)`: its text's width) plus `pad`.
 */
export function unoverlapped(labels, width, pad) {
  const out = [];
  for (const l of labels) {
    const last = out[out.length - 1];
    if (last && l.x < last.x + width(last.n) + pad) last.n += l.n;
    else out.push({ ...l });
  }
  return out;
}

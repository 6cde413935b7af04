// A uPlot time-series chart of one container's usage, with the current and recommended
// request/limit as flat lines and (memory only) OOM kills as red vertical markers. The
// time axis spans the data; the CPU axis scales to usage and requests, and a limit far
// above them is named under the chart instead of flattening the usage.
import { html, useEffect, useRef } from "./lib.js";
import uPlot from "../vendor/uPlot-1.6.32.esm.js";
import { timeRange, valueRange, oomLabels, oomColumns, unoverlapped, MEMORY_INCRS } from "./chartscale.js";
import * as fmt from "./format.js";

const CSS = "/vendor/uPlot-1.6.32.min.css";
/** Pixels (CSS) between two OOM labels. */
const LABEL_GAP = 56;
/** More marked pixel columns than this, and OOM marks become ticks along the top. */
const FULL_HEIGHT_MARKS = 40;
/** The height of those ticks (CSS px). */
const TICK = 10;

/** uPlot's stylesheet, added once by the first chart (pages without charts never load it). */
export function chartStyles() {
  if (document.querySelector(`link[href="${CSS}"]`)) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = CSS;
  document.head.append(link);
}

const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/**
 * points: [{time, value}] (RFC 3339, native units); lines: [{label, value, kind}] where
 * kind is current-request | current-limit | recommended-request | recommended-limit;
 * ooms: [ms timestamps] (pass none for CPU).
 */
export function UsageChart({ resource, points, lines, ooms = [], label }) {
  const box = useRef(null);
  const xs = points.map((p) => new Date(p.time).getTime() / 1000);
  const peak = points.reduce((m, p) => Math.max(m, p.value ?? 0), 0);
  const range = valueRange(resource, peak, lines);
  const drawn = lines.filter((l) => l.value !== null && l.value !== undefined && !range.offScale.includes(l));
  const span = timeRange(xs);
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    chartStyles();
    const data = [xs, points.map((p) => p.value), ...drawn.map((l) => xs.map(() => l.value))];
    const color = {
      usage: cssVar("--chart-usage"),
      "current-request": cssVar("--chart-current"),
      "current-limit": cssVar("--chart-current"),
      "recommended-request": cssVar("--chart-recommended"),
      "recommended-limit": cssVar("--chart-recommended"),
    };
    const axis = { stroke: cssVar("--muted"), grid: { stroke: cssVar("--line") }, ticks: { stroke: cssVar("--line") } };
    const oomColor = cssVar("--bad");
    const opts = {
      width: Math.max(200, el.clientWidth),
      height: 240,
      scales: { x: { time: true, range: () => span }, y: { range: () => [0, range.max] } },
      axes: [axis, { ...axis, size: 70, values: (u, vals) => { el.dataset.yTicks = vals.join(","); return vals.map((v) => fmt.quantity(resource, v)); },
        ...(resource === "memory" ? { incrs: MEMORY_INCRS } : {}) }],
      series: [
        {},
        { label: "usage", stroke: color.usage, width: 1.5, fill: `${color.usage}22`, value: (u, v) => fmt.quantity(resource, v) },
        ...drawn.map((l) => ({
          label: l.label,
          stroke: color[l.kind],
          width: 1.5,
          dash: l.kind.endsWith("limit") ? [6, 4] : undefined,
          value: (u, v) => fmt.quantity(resource, v),
        })),
      ],
      hooks: {
        draw: [(u) => {
          // What the scales came to, for tests and for tools that read the page.
          el.dataset.xMin = String(u.scales.x.min);
          el.dataset.xMax = String(u.scales.x.max);
          el.dataset.yMax = String(u.scales.y.max);
          if (ooms.length === 0) return;
          const ctx = u.ctx;
          const px = devicePixelRatio;
          const inside = ooms.map((t) => u.valToPos(t / 1000, "x", true)).filter((x) => x >= u.bbox.left && x <= u.bbox.left + u.bbox.width);
          const columns = oomColumns(inside.map((x) => x / px)).map((c) => ({ x: c.x * px, n: c.n }));
          ctx.save();
          ctx.strokeStyle = oomColor;
          ctx.fillStyle = oomColor;
          ctx.lineWidth = 2 * px;
          ctx.font = `${11 * px}px system-ui, sans-serif`;
          const text = (n) => (n > 1 ? `OOM ×${n}` : "OOM");
          // Few kills: a line each; many: a tick per pixel column along the top, so the
          // usage stays visible under them.
          const low = columns.length > FULL_HEIGHT_MARKS ? u.bbox.top + TICK * px : u.bbox.top + u.bbox.height;
          for (const c of columns) {
            ctx.beginPath();
            ctx.moveTo(c.x, u.bbox.top);
            ctx.lineTo(c.x, low);
            ctx.stroke();
          }
          const labels = unoverlapped(oomLabels(inside, LABEL_GAP * px), (n) => ctx.measureText(text(n)).width, 6 * px);
          const y = u.bbox.top + (columns.length > FULL_HEIGHT_MARKS ? TICK + 12 : 12) * px;
          for (const l of labels) ctx.fillText(text(l.n), l.x + 3 * px, y);
          ctx.restore();
          el.dataset.oomColumns = String(columns.length);
          el.dataset.oomLabels = String(labels.length);
          el.dataset.oomLabelXs = labels.map((l) => Math.round(l.x / px)).join(",");
        }],
      },
    };
    const last = xs.length - 1;
    opts.hooks.setCursor = [(u) => { if (u.cursor.idx == null && last >= 0) u.setLegend({ idx: last }); }];
    const plot = new uPlot(opts, data, el);
    if (last >= 0) plot.setLegend({ idx: last });
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height: 240 }));
    ro.observe(el);
    return () => { ro.disconnect(); plot.destroy(); };
  }, [points, lines, ooms, resource]);
  const summary = `${label}: ${fmt.count(points.length, "point")}, peak ${fmt.quantity(resource, peak)}` +
    drawn.map((l) => `, ${l.label} ${fmt.quantity(resource, l.value)}`).join("") +
    (ooms.length ? `, ${fmt.count(ooms.length, "OOM kill")}` : "");
  return html`<figure class="chart" data-resource=${resource}>
    <figcaption>${label}</figcaption>
    <div class="chart-box" ref=${box} role="img" aria-label=${summary} data-ooms=${ooms.length} data-peak=${peak}></div>
    ${range.offScale.length > 0 && html`<p class="small muted offscale">Above the scale: ${range.offScale.map((l) => `${l.label} ${fmt.quantity(resource, l.value)}`).join(", ")} ↑</p>`}
    ${ooms.length > 0 && html`<p class="small bad">${fmt.count(ooms.length, "OOM kill")} ${fmt.date(Math.min(...ooms)) === fmt.date(Math.max(...ooms)) ? `on ${fmt.date(ooms[0])}` : `between ${fmt.date(Math.min(...ooms))} and ${fmt.date(Math.max(...ooms))}`} (listed under the memory recommendation).</p>`}
  </figure>`;
}

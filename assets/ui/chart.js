// A uPlot time-series chart of one container's usage, with the current and recommended
// request/limit as flat lines and OOM kills as red vertical markers.
import { html, useEffect, useRef } from "./lib.js";
import uPlot from "../vendor/uPlot-1.6.32.esm.js";
import * as fmt from "./format.js";

const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/**
 * points: [{time, value}] (RFC 3339, native units); lines: [{label, value, kind}] where
 * kind is current-request | current-limit | recommended-request | recommended-limit;
 * ooms: [ms timestamps].
 */
export function UsageChart({ resource, points, lines, ooms, label }) {
  const box = useRef(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = points.map((p) => new Date(p.time).getTime() / 1000);
    const shown = lines.filter((l) => l.value !== null && l.value !== undefined);
    const data = [xs, points.map((p) => p.value), ...shown.map((l) => xs.map(() => l.value))];
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
      width: Math.max(300, el.clientWidth),
      height: 240,
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(max, ...shown.map((l) => l.value)) * 1.1 || 1] } },
      axes: [axis, { ...axis, size: 70, values: (u, vals) => vals.map((v) => fmt.quantity(resource, v)) }],
      series: [
        {},
        { label: "usage", stroke: color.usage, width: 1.5, fill: `${color.usage}22`, value: (u, v) => fmt.quantity(resource, v) },
        ...shown.map((l) => ({
          label: l.label,
          stroke: color[l.kind],
          width: 1.5,
          dash: l.kind.endsWith("limit") ? [6, 4] : undefined,
          value: (u, v) => fmt.quantity(resource, v),
        })),
      ],
      hooks: {
        draw: [(u) => {
          const ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = oomColor;
          ctx.fillStyle = oomColor;
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
          for (const t of ooms) {
            const x = u.valToPos(t / 1000, "x", true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
            ctx.fillText("OOM", x + 3 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
          }
          ctx.restore();
        }],
      },
    };
    const plot = new uPlot(opts, data, el);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(300, el.clientWidth), height: 240 }));
    ro.observe(el);
    return () => { ro.disconnect(); plot.destroy(); };
  }, [points, lines, ooms, resource]);
  const summary = `${label}: ${points.length} points` +
    lines.filter((l) => l.value != null).map((l) => `, ${l.label} ${fmt.quantity(resource, l.value)}`).join("") +
    (ooms.length ? `, ${ooms.length} OOM kill(s)` : "");
  return html`<figure class="chart">
    <figcaption>${label}</figcaption>
    <div class="chart-box" ref=${box} role="img" aria-label=${summary}></div>
    ${ooms.length > 0 && html`<p class="small bad">OOM kills: ${ooms.map((t) => fmt.time(t)).join(", ")}</p>`}
  </figure>`;
}

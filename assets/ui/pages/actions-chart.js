// Workload events over the last 30 days, by type, from GET /v1/audit: per day from the
// first event's day, or per hour when they span two days or less (a young install is not
// one point at the end of a month-long axis).
import { html, useEffect, useRef } from "../lib.js";
import uPlot from "../../vendor/uPlot-1.6.32.esm.js";
import { getAll } from "../api.js";
import { useApi, Async, Empty } from "../components.js";
import { chartStyles } from "../chart.js";

const TYPES = ["applied", "skipped", "blocked", "fallback", "rolled_back", "released", "failed"];
const DAY = 86400;

export function ActionsChart() {
  const since = new Date(Date.now() - 30 * DAY * 1000);
  since.setUTCHours(0, 0, 0, 0);
  const res = useApi(() => getAll("/v1/audit", { since: since.toISOString() }, 5000), []);
  return html`<${Async} res=${res} what="audit events">${({ items, truncated }) => items.length === 0
    ? html`<${Empty}><p>No workload events in the last 30 days: agents have not applied, skipped or blocked anything yet.</p></${Empty}>`
    : html`<${Plot} items=${items} start=${since.getTime() / 1000} />${truncated && html`<p class="small muted">Showing the newest 5,000 events.</p>`}`}</${Async}>`;
}

const HOUR = 3600;

/**
 * The buckets that fit events at `times` (seconds) up to `now`: hours when they span two
 * days or less, else days, from the first event's bucket to the current one.
 */
export function buckets(times, now) {
  const first = Math.min(...times);
  const size = now - first <= 2 * DAY ? HOUR : DAY;
  const from = Math.floor(first / size) * size;
  const n = Math.floor(now / size) - Math.floor(from / size) + 1;
  return { size, starts: Array.from({ length: Math.max(1, n) }, (_, i) => from + i * size) };
}

function Plot({ items, start }) {
  const box = useRef(null);
  const times = items.map((e) => new Date(e.time).getTime() / 1000).filter((t) => t >= start);
  const { size, starts } = buckets(times.length ? times : [start], Date.now() / 1000);
  useEffect(() => {
    const days = starts;
    const counts = TYPES.map(() => days.map(() => 0));
    for (const e of items) {
      const d = Math.floor((new Date(e.time).getTime() / 1000 - days[0]) / size);
      const t = TYPES.indexOf(e.type);
      if (d >= 0 && d < days.length && t >= 0) counts[t][d] += 1;
    }
    chartStyles();
    const css = getComputedStyle(document.documentElement);
    const palette = ["--ok", "--muted", "--warn", "--accent", "--bad", "--chart-current", "--bad"].map((v) => css.getPropertyValue(v).trim());
    const axis = { stroke: css.getPropertyValue("--muted").trim(), grid: { stroke: css.getPropertyValue("--line").trim() } };
    const used = TYPES.map((t, i) => i).filter((i) => counts[i].some((n) => n > 0));
    const plot = new uPlot({
      width: Math.max(200, box.current.clientWidth), height: 200,
      scales: { x: { time: true } },
      axes: [axis, { ...axis, values: (u, v) => v.map((n) => (Number.isInteger(n) ? n : "")) }],
      series: [{}, ...used.map((i) => ({ label: TYPES[i], stroke: palette[i], width: 2, points: { show: true } }))],
    }, [days, ...used.map((i) => counts[i])], box.current);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(200, box.current.clientWidth), height: 200 }));
    ro.observe(box.current);
    return () => { ro.disconnect(); plot.destroy(); };
  }, [items, start]);
  const per = size === HOUR ? "hour" : "day";
  return html`<div class="chart-box actions-chart" ref=${box} data-bucket=${per} data-from=${starts[0]} role="img" aria-label=${`${items.length} workload events since ${new Date(starts[0] * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC, per ${per} and type`}></div>`;
}

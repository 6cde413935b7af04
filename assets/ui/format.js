// Formatting of kerf's native units: CPU in millicores, memory in bytes, money, times.

const MI = 1024 * 1024;
const GI = 1024 * MI;

export function cpu(m) {
  if (m === null || m === undefined || Number.isNaN(m)) return "—";
  if (Math.abs(m) >= 1000) {
    const v = trim(m / 1000, 2);
    return `${v} ${v === "1" ? "core" : "cores"}`;
  }
  return `${trim(m, m < 10 ? 1 : 0)}m`;
}

export function bytes(b) {
  if (b === null || b === undefined || Number.isNaN(b)) return "—";
  const a = Math.abs(b);
  if (a >= GI) return `${trim(b / GI, 2)} GiB`;
  if (a >= MI) return `${trim(b / MI, a >= 100 * MI ? 0 : 1)} MiB`;
  if (a >= 1024) return `${trim(b / 1024, 0)} KiB`;
  return `${Math.round(b)} B`;
}

/** A value of `resource` (cpu millicores or memory bytes). */
export function quantity(resource, v) {
  return resource === "cpu" ? cpu(v) : bytes(v);
}

function trim(v, digits) {
  return Number(v.toFixed(digits)).toLocaleString(undefined, { maximumFractionDigits: digits });
}

export function money(v, currency = "USD") {
  if (v === null || v === undefined) return "—";
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency, maximumFractionDigits: 2 }).format(v);
  } catch {
    return `${v.toFixed(2)} ${currency}`;
  }
}

/** A monthly cost delta: negative is a saving. */
export function delta(v, currency) {
  if (v === null || v === undefined) return "no estimate";
  if (Math.abs(v) < 0.005) return "no change";
  return v < 0 ? `saves ${money(-v, currency)}/mo` : `costs ${money(v, currency)}/mo more`;
}

/** A monthly cost delta as −$12.30/mo or +$4.00/mo. */
export function signedMoney(v, currency) {
  if (v === null || v === undefined) return "no estimate";
  if (Math.abs(v) < 0.005) return "±0";
  return `${v < 0 ? "−" : "+"}${money(Math.abs(v), currency)}/mo`;
}

export function time(t) {
  if (t === null || t === undefined || t === "" || t === 0) return "—";
  const d = typeof t === "number" ? new Date(t) : new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A day: "Nov 20, 2026". */
export function date(t) {
  if (t === null || t === undefined || t === "") return "—";
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleDateString(undefined, { dateStyle: "medium" });
}

export function ago(t) {
  if (!t) return "never";
  const s = Math.round((Date.now() - new Date(t).getTime()) / 1000);
  if (s < 60) return s < 5 ? "just now" : `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${trim(seconds / 3600, 1)} h`;
  return `${trim(seconds / 86400, 1)} days`;
}

export function percent(x, digits = 0) {
  if (x === null || x === undefined) return "—";
  return `${(x * 100).toFixed(digits)} %`;
}

/** `no-material-change` → "no material change". */
export function words(code) {
  return String(code ?? "").replace(/-/g, " ");
}

/** `n` things: "1 OOM kill", "3 OOM kills". */
export function count(n, one, many = `${one}s`) {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

export function workloadName(w) {
  return `${w.namespace}/${w.kind}/${w.name}`;
}

/** "7d", "12h", "30m", "45s" or a plain number of seconds → seconds; null for anything else. */
export function parseDuration(text) {
  const t = String(text ?? "").trim();
  if (/^\d+$/.test(t)) return Number(t);
  const m = /^(\d+)\s*([smhd])$/.exec(t);
  return m ? Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2]] : null;
}

/** Seconds as policies write durations: 604800 → "7d", 5400 → "90m". */
export function durationText(seconds) {
  if (seconds == null) return "";
  for (const [unit, n] of [["d", 86400], ["h", 3600], ["m", 60]]) if (seconds % n === 0 && seconds >= n) return `${seconds / n}${unit}`;
  return `${seconds}s`;
}

/** A suggested value as the agent applies it: whole millicores, whole MiB, rounded up. */
export function asApplied(resource, v) {
  if (v === null || v === undefined) return v;
  return resource === "cpu" ? Math.max(1, Math.ceil(v)) : Math.max(1, Math.ceil(v / MI)) * MI;
}

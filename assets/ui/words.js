// The agents' codes in words, for people: event types and reasons (the code stays as a
// tooltip, and in exports), the containers an event changed, and the times inside agent
// messages (sent in UTC) as the page writes every other time.
import { html } from "./lib.js";
import { reasonWords } from "./guardrails.js";
import * as fmt from "./format.js";

const TYPES = {
  applied: "applied", skipped: "skipped", blocked: "held back", fallback: "fell back",
  rolled_back: "rolled back", released: "released", failed: "failed",
};

/** `rolled_back` → "rolled back". */
export function typeWords(type) {
  return TYPES[type] ?? fmt.words(String(type ?? "").replace(/_/g, "-"));
}

/** A code in words, the code itself as the tooltip. */
export function Code({ code, words }) {
  return html`<span class="code-words" title=${code}>${words(code)}</span>`;
}

/**
 * "CPU request 2 → 76m, memory limit 4Gi → 438Mi" for an event's containers, each named
 * ("app: …; sidecar: …") when there are several.
 */
export function changedText(containers) {
  const list = containers ?? [];
  return list.map((c) => {
    const parts = [];
    for (const group of ["requests", "limits"]) {
      for (const r of ["cpu", "memory"]) {
        const to = c.to?.[group]?.[r];
        if (to == null) continue;
        parts.push(`${r === "cpu" ? "CPU" : "memory"} ${group === "requests" ? "request" : "limit"} ${c.from?.[group]?.[r] ?? "not set"} → ${to}`);
      }
    }
    return list.length > 1 ? `${c.name}: ${parts.join(", ")}` : parts.join(", ");
  }).join("; ");
}

/** On whose word a live change was applied: "approved once by ada", or by the agent. */
export function appliedBy(a) {
  return a.by === "approval" ? `approved once${a.approvedBy ? ` by ${a.approvedBy}` : ""}` : "by the agent, as its policy allows";
}

const ISO = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z\b/g;

/** An agent's message with its UTC timestamps written as the page writes times. */
export function localTimes(message) {
  return String(message ?? "").replace(ISO, (t) => fmt.time(t));
}

export { reasonWords };

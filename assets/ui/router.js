// Client-side routing with history.pushState. The hub serves index.html for any
// extension-less path, so every URL here is a real, shareable link; view state (filters,
// sort, page) lives in the query string.
import { useEffect, useState } from "./lib.js";

const listeners = new Set();
const notify = () => { for (const fn of listeners) fn(); };
window.addEventListener("popstate", notify);

export function navigate(to, { replace = false } = {}) {
  if (to === location.pathname + location.search) return;
  history[replace ? "replaceState" : "pushState"](null, "", to);
  notify();
  if (!replace) window.scrollTo(0, 0);
}

/** The current location; re-renders the caller on every navigation. */
export function useLocation() {
  const [, setTick] = useState(0);
  useEffect(() => {
    const fn = () => setTick((t) => t + 1);
    listeners.add(fn);
    return () => listeners.delete(fn);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** Replaces some query parameters (empty values are removed). */
export function setQuery(patch, { replace = false } = {}) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined || v === null || v === "" || v === false) q.delete(k);
    else q.set(k, String(v));
  }
  const s = q.toString();
  navigate(location.pathname + (s ? `?${s}` : ""), { replace });
}

/** Plain links navigate without a page load (unless modified clicks, downloads, /v1). */
document.addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest?.("a[href]");
  if (!a || a.target || a.hasAttribute("download") || a.getAttribute("href").startsWith("#")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith("/v1") || /\.[a-z0-9]+$/i.test(url.pathname)) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});

/** Matches `path` against patterns like `/workloads/:id`; returns the params or null. */
export function match(pattern, path) {
  const p = pattern.split("/");
  const s = path.replace(/\/+$/, "").split("/");
  if (pattern === "/") return path === "/" ? {} : null;
  if (p.length !== s.length) return null;
  const params = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(":")) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return params;
}

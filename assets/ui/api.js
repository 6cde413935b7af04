// The thin API client: every call goes through `api()`, which sends credentials (session
// cookie, or an API token kept for this tab), the CSRF token on changes, and turns any
// failure into an ApiError carrying the API's own message.

const TOKEN_KEY = "kerf.apiToken";
let csrfToken = null;
const unauthorizedListeners = new Set();

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details ?? null;
  }
  /** The route does not exist on this hub (yet): the API's JSON 404/405 fallback. */
  get missingRoute() {
    return (this.status === 404 && /^no API route/.test(this.message)) || this.status === 405;
  }
}

export function setCsrfToken(t) { csrfToken = t || null; }
export function apiToken() { return sessionStorage.getItem(TOKEN_KEY); }
export function setApiToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}
export function onUnauthorized(fn) {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

/** `?a=1&b=2` from an object, skipping empty values. */
export function queryString(query) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : "";
}

export async function api(method, path, { query, body, signal, headers: extra } = {}) {
  const headers = { Accept: "application/json", ...extra };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const token = apiToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (method !== "GET" && method !== "HEAD" && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  let res;
  try {
    res = await fetch(path + queryString(query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      signal,
    });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, "network", `Cannot reach the kerf hub: ${e.message}`);
  }
  const text = res.status === 204 ? "" : await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const e = data?.error;
    const err = new ApiError(
      res.status,
      e?.code ?? `http_${res.status}`,
      e?.message ?? `The hub answered ${res.status} ${res.statusText || ""}`.trim(),
      e?.details,
    );
    if (res.status === 401 && path !== "/v1/auth/login") {
      for (const fn of unauthorizedListeners) fn(err);
    }
    throw err;
  }
  return data;
}

/** A file the API answers (an export): its Blob and the name the hub gave it. */
export async function fetchFile(path, query) {
  const headers = {};
  const token = apiToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path + queryString(query), { headers, credentials: "same-origin" });
  if (!res.ok) {
    let e = null;
    try { e = (await res.json())?.error; } catch { /* not JSON */ }
    throw new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? `The hub answered ${res.status}`, e?.details);
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") ?? "")?.[1] ?? "kerf-export";
  return { blob: await res.blob(), name };
}

/** Saves `blob` as a download named `name`. */
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export const get = (path, query, opts) => api("GET", path, { ...opts, query });
export const post = (path, body, query, opts) => api("POST", path, { ...opts, body, query });
export const put = (path, body, opts) => api("PUT", path, { ...opts, body });
export const patch = (path, body) => api("PATCH", path, { body });
export const del = (path, query, opts) => api("DELETE", path, { ...opts, query });
/** The `If-Match` header naming the version a change was based on. */
export const ifMatch = (version) => ({ headers: { "If-Match": `"${version}"` } });

/** Every page of a cursor-paginated list, up to `max` items (for exports). */
export async function getAll(path, query, max = 10000) {
  const items = [];
  let next = null;
  do {
    const page = await get(path, { ...query, limit: 500, next });
    items.push(...page.items);
    next = page.next;
  } while (next && items.length < max);
  return { items: items.slice(0, max), truncated: Boolean(next) };
}

// Shared pieces: data loading with its three states, error display, forms, paging.
import { html, useEffect, useState, useRef, useCallback } from "./lib.js";
import { ApiError, get } from "./api.js";

/** Runs `load(signal)` whenever `deps` change: {data, error, loading, reload}. */
export function useApi(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ data: s.data, error: null, loading: true }));
    load(ctl.signal).then(
      (data) => { if (!ctl.signal.aborted) setState({ data, error: null, loading: false }); },
      (error) => { if (!ctl.signal.aborted && error.name !== "AbortError") setState({ data: null, error, loading: false }); },
    );
    return () => ctl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function Loading({ what = "Loading" }) {
  return html`<p class="state loading" role="status"><span class="spinner" aria-hidden="true"></span>${what}…</p>`;
}

export function Empty({ children }) {
  return html`<div class="state empty" role="status">${children}</div>`;
}

/** An API or network error, with the API's message, code and details. */
export function ErrorBox({ error, retry, what }) {
  if (error instanceof ApiError && error.missingRoute) return html`<${Unavailable} what=${what} />`;
  const status = error instanceof ApiError ? error.status : null;
  const hint = status === 403 ? "Your role does not allow this. Ask an administrator." : null;
  return html`<div class="state error" role="alert">
    <strong>${what ? `Could not load ${what}` : "Something went wrong"}</strong>
    <p class="msg">${error.message || String(error)}</p>
    ${hint && html`<p class="muted">${hint}</p>`}
    ${error.code && html`<p class="muted small">code <code>${error.code}</code>${status ? html` · HTTP ${status}` : ""}</p>`}
    ${error.details && html`<details><summary>Details</summary><pre>${JSON.stringify(error.details, null, 2)}</pre></details>`}
    ${retry && html`<button type="button" onClick=${retry}>Try again</button>`}
  </div>`;
}

/** The honest state of a feature whose API this hub does not serve yet. */
export function Unavailable({ what }) {
  return html`<div class="state unavailable" role="status">
    <strong>${what ? `${cap(what)}: not available yet` : "Not available yet"}</strong>
    <p class="muted">This kerf hub does not serve the API for this yet (it answered 404). Nothing is shown rather than made-up data.</p>
  </div>`;
}

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/** Renders loading / error / content for a useApi result. */
export function Async({ res, what, children }) {
  if (res.error) return html`<${ErrorBox} error=${res.error} retry=${res.reload} what=${what} />`;
  if (res.data === null) return html`<${Loading} what=${`Loading ${what}`} />`;
  return children(res.data);
}

export function Field({ id, label, error, hint, children }) {
  return html`<div class=${`field${error ? " invalid" : ""}`}>
    <label for=${id}>${label}</label>
    ${children}
    ${hint && !error && html`<span class="hint" id=${`${id}-hint`}>${hint}</span>`}
    ${error && html`<span class="field-error" id=${`${id}-error`} role="alert">${error}</span>`}
  </div>`;
}

export function Badge({ kind = "", children, title }) {
  return html`<span class=${`badge ${kind}`} title=${title}>${children}</span>`;
}

export function QualityBadge({ status }) {
  if (!status) return html`<${Badge} kind="muted">no data</${Badge}>`;
  const kind = { available: "ok", partial: "warn", unavailable: "bad" }[status] ?? "";
  return html`<${Badge} kind=${kind}>${status}</${Badge}>`;
}

/** Previous/next over a cursor API; `cursors` is the stack of cursors before this page. */
export function Pager({ hasPrev, next, onPrev, onNext, label }) {
  return html`<nav class="pager" aria-label=${label ?? "Pages"}>
    <button type="button" disabled=${!hasPrev} onClick=${onPrev}>← Previous</button>
    <button type="button" disabled=${!next} onClick=${onNext}>Next →</button>
  </nav>`;
}

let dialogSeq = 0;

/**
 * A modal confirmation built on <dialog> (focus trap and Esc come with it). Each has its
 * own title id, so it is announced by its own title; closing it, or unmounting it while
 * open, gives focus back to what had it before.
 */
export function Confirm({ open, title, children, confirmLabel = "Confirm", onConfirm, onCancel, busy, error }) {
  const ref = useRef(null);
  const titleId = useRef(null);
  if (!titleId.current) titleId.current = `dialog-title-${++dialogSeq}`;
  const opener = useRef(null);
  const restore = () => {
    const el = opener.current;
    opener.current = null;
    if (el && el.isConnected && typeof el.focus === "function") el.focus();
  };
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) { opener.current = document.activeElement; d.showModal(); }
    if (!open && d.open) { d.close(); restore(); }
  }, [open]);
  // Unmounted while open (the caller stopped rendering it): focus goes back too.
  useEffect(() => () => { if (opener.current) requestAnimationFrame(restore); }, []);
  return html`<dialog ref=${ref} class="dialog" aria-labelledby=${titleId.current} onCancel=${(e) => { e.preventDefault(); onCancel(); }}>
    <h2 id=${titleId.current}>${title}</h2>
    ${children}
    ${error && html`<${ErrorBox} error=${error} />`}
    <div class="actions">
      <button type="button" onClick=${onCancel}>Cancel</button>
      <button type="button" class="primary" disabled=${busy} onClick=${onConfirm}>${busy ? "Working…" : confirmLabel}</button>
    </div>
  </dialog>`;
}

/** Copies `text` to the clipboard; says so (or why not) where screen readers hear it. */
export function CopyButton({ text, label = "Copy", className = "small", name }) {
  const [state, setState] = useState(null);
  const copy = async () => {
    try { await navigator.clipboard.writeText(text); setState("Copied"); }
    catch (e) { setState(`Copy failed: ${e.message || e}. Select the text and copy it by hand.`); }
    setTimeout(() => setState(null), 2500);
  };
  return html`<span class="copy"><button type="button" class=${className} data-copy=${name} onClick=${copy}>${label}</button><span class="small muted" role="status">${state ?? ""}</span></span>`;
}

let currencyOnce = null;

/** The pricing currency (from the workload summary, which every reader may ask for). */
export function useCurrency() {
  const [c, setC] = useState("USD");
  useEffect(() => {
    currencyOnce ??= get("/v1/workloads/summary").then((s) => s.currency, () => { currencyOnce = null; return "USD"; });
    let live = true;
    currencyOnce.then((v) => { if (live) setC(v); });
    return () => { live = false; };
  }, []);
  return c;
}

/** `value`, once it has not changed for `ms`. */
export function useDebounced(value, ms = 350) {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

/** Names the page in the window title ("catalog · Workloads · kerf"). */
export function useTitle(...parts) {
  const name = parts.filter(Boolean).join(" · ");
  useEffect(() => { if (name) document.title = `${name} · kerf`; }, [name]);
}

/** Tabs that keep the selected tab in the URL (`param`). */
export function Tabs({ tabs, current, onSelect, label }) {
  const onKey = (e, i) => {
    const d = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (!d) return;
    const t = tabs[(i + d + tabs.length) % tabs.length];
    onSelect(t.id);
    requestAnimationFrame(() => document.getElementById(`tab-${t.id}`)?.focus());
  };
  return html`<div class="tabs" role="tablist" aria-label=${label}>
    ${tabs.map((t, i) => html`<button type="button" role="tab" id=${`tab-${t.id}`} aria-selected=${t.id === current}
      tabindex=${t.id === current ? 0 : -1} onClick=${() => onSelect(t.id)} onKeyDown=${(e) => onKey(e, i)}>${t.label}</button>`)}
  </div>`;
}

/** The field error for `name` from a 400 whose details name fields. */
export function fieldError(error, name) {
  if (!(error instanceof ApiError) || !error.details) return null;
  const d = error.details;
  if (d.field === name) return error.message;
  if (Array.isArray(d.errors)) {
    const hit = d.errors.find((x) => x.field === name || x.path === name);
    if (hit) return hit.message ?? hit.reason;
  }
  return null;
}

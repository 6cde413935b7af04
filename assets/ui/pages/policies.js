// Policies: the list (soft-deleted ones hidden unless asked; the clusters' own below, read-only), one policy (what it sets,
// edit, versions with a diff and revert, soft delete) and a new one. Edits go through a
// form for the common fields plus a JSON editor for the whole document; the API's
// `invalid_policy` errors are shown at the form control or the editor line their path
// names. Changes name the version they read (If-Match); a conflict says so.
import { html, useState, useEffect, useRef, useMemo } from "../lib.js";
import { get, post, put, del, ifMatch, ApiError } from "../api.js";
import { useApi, Async, Empty, ErrorBox, Field, Badge, Confirm, Tabs } from "../components.js";
import { navigate, setQuery } from "../router.js";
import { hasRole } from "../session.js";
import { pretty, lineOf, parsePath, diffLines } from "../jsontext.js";
import { PolicyDoc, label, valueText } from "../policyview.js";
import { PresetPicker, BacktestPanel } from "../backtest.js";
import * as fmt from "../format.js";
import { ClusterPolicyList, ClusterPolicyDetail } from "./cluster-policies.js";

const enc = encodeURIComponent;

export function PoliciesPage({ params, query, session }) {
  if (params.id === "new") return html`<${NewPolicy} session=${session} />`;
  if (params.id?.startsWith("cluster-")) return html`<${ClusterPolicyDetail} id=${params.id.slice("cluster-".length)} />`;
  if (params.id) return html`<${PolicyDetail} id=${params.id} query=${query} session=${session} />`;
  return html`<${PolicyList} query=${query} session=${session} />`;
}

function PolicyList({ query, session }) {
  const deleted = query.get("deleted") === "1";
  const res = useApi((signal) => get("/v1/policies", { deleted: deleted ? "true" : "" }, { signal }), [deleted]);
  return html`<section>
    <div class="page-head"><h1>Policies</h1>
      <div class="actions">
        <label class="check"><input type="checkbox" checked=${deleted} onChange=${(e) => setQuery({ deleted: e.target.checked ? "1" : "" })} /> Show deleted</label>
        ${hasRole(session, "editor") && html`<a class="button primary" href="/policies/new">New policy</a>`}
      </div>
    </div>
    <${Async} res=${res} what="policies">${(page) => (page.items ?? []).length === 0
      ? html`<${Empty}><p><strong>No policies yet.</strong> Every workload takes the defaults: audit mode for CPU and memory, the analysis from Settings.</p></${Empty}>`
      : html`<div class="table-wrap"><table class="policies"><thead><tr><th scope="col">Name</th><th scope="col" class="num">Priority</th><th scope="col">Mode</th><th scope="col">Selects</th><th scope="col" class="num">Version</th><th scope="col">Updated</th></tr></thead>
          <tbody>${page.items.map((p) => html`<tr key=${p.id}>
            <td><a href=${`/policies/${p.id}`}>${p.name}</a> ${p.deletedAt && html`<${Badge} kind="muted">deleted</${Badge}>`}
              ${p.spec?.description && html`<br /><span class="small muted">${p.spec.description}</span>`}</td>
            <td class="num">${p.spec?.priority ?? 0}</td>
            <td>${modeText(p.spec?.mode)}</td>
            <td class="small">${selectorText(p.spec?.selector)}</td>
            <td class="num">${p.version}</td>
            <td>${fmt.time(p.updatedAt)}</td>
          </tr>`)}</tbody></table></div>`}
    </${Async}>
    <${ClusterPolicyList} modeText=${modeText} selectorText=${selectorText} />
  </section>`;
}

const modeText = (m) => (m?.cpu || m?.memory ? `CPU ${m.cpu ?? "—"} · memory ${m.memory ?? "—"}` : "—");

function selectorText(s) {
  const parts = [];
  for (const k of ["clusters", "namespaces", "kinds", "names"]) if (s?.[k]?.length) parts.push(`${k} ${s[k].join(", ")}`);
  if (s?.labels && Object.keys(s.labels).length) parts.push(`labels ${valueText("selector.labels", s.labels)}`);
  return parts.length ? parts.join(" · ") : "every workload";
}

function NewPolicy({ session }) {
  if (!hasRole(session, "editor")) return html`<section class="card"><h1>New policy</h1><p class="muted">Creating policies needs the editor role.</p></section>`;
  const save = async (doc, reason) => {
    const p = await post("/v1/policies", { ...doc, reason: reason || undefined });
    navigate(`/policies/${p.id}?saved=${p.version}`);
  };
  return html`<section>
    <nav class="crumbs" aria-label="Breadcrumb"><a href="/policies">Policies</a> › new</nav>
    <div class="page-head"><h1>New policy</h1></div>
    <${PolicyEditor} initial=${{ name: "", mode: { cpu: "audit", memory: "audit" } }} onSave=${save} label="New policy" />
  </section>`;
}

function PolicyDetail({ id, query, session }) {
  const res = useApi((signal) => get(`/v1/policies/${enc(id)}`, {}, { signal }), [id]);
  const tab = query.get("tab") || "view";
  const editor = hasRole(session, "editor");
  return html`<section>
    <nav class="crumbs" aria-label="Breadcrumb"><a href="/policies">Policies</a> › ${res.data?.name ?? id}</nav>
    <${Async} res=${res} what="this policy">${(p) => html`
      <div class="page-head"><h1>${p.name} <span class="muted small">version ${p.version}</span></h1>
        <div class="head-badges">${p.deletedAt && html`<${Badge} kind="bad">deleted ${fmt.time(p.deletedAt)}</${Badge}>`}</div>
      </div>
      ${query.get("saved") && html`<p class="ok" role="status">Saved as version ${query.get("saved")}.</p>`}
      <${Tabs} label="Policy" current=${tab} onSelect=${(t) => setQuery({ tab: t === "view" ? "" : t, saved: "" }, { replace: true })}
        tabs=${[{ id: "view", label: "Settings" }, ...(editor && !p.deletedAt ? [{ id: "edit", label: "Edit" }] : []), { id: "versions", label: "Versions" }]} />
      ${tab === "edit" && editor && !p.deletedAt
        ? html`<${EditPolicy} p=${p} reload=${res.reload} />`
        : tab === "versions" ? html`<${Versions} p=${p} editor=${editor && !p.deletedAt} reload=${res.reload} />`
        : html`<div class="card"><${PolicyDoc} spec=${p.spec} />
            <p class="small muted">Created ${fmt.time(p.createdAt)} · updated ${fmt.time(p.updatedAt)} · id ${p.id}</p>
            ${editor && !p.deletedAt && html`<${DeletePolicy} p=${p} reload=${res.reload} />`}</div>`}
    `}</${Async}>
  </section>`;
}

/** "Someone changed it": a version conflict, with the version the policy is at now. */
function Conflict({ error, reload }) {
  return html`<div class="state error conflict" role="alert">
    <strong>Someone changed this policy since you loaded it.</strong>
    <p class="msg">It is now at version ${error.details?.currentVersion ?? "?"}; nothing was saved. Reload to see the current version, then try again.</p>
    <p class="muted small">${error.message} · code <code>${error.code}</code> · HTTP ${error.status}</p>
    <button type="button" onClick=${reload}>Reload</button>
  </div>`;
}

const isConflict = (e) => e instanceof ApiError && e.code === "version_conflict";

function EditPolicy({ p, reload }) {
  const [conflict, setConflict] = useState(null);
  const save = async (doc, reason) => {
    try {
      const saved = await put(`/v1/policies/${p.id}`, { ...doc, reason: reason || undefined }, ifMatch(p.version));
      setQuery({ tab: "", saved: saved.version }, { replace: true });
      reload();
    } catch (e) {
      if (isConflict(e)) { setConflict(e); return; }
      throw e;
    }
  };
  return html`${conflict && html`<${Conflict} error=${conflict} reload=${() => { setConflict(null); reload(); }} />`}
    <${PolicyEditor} key=${p.version} initial=${p.spec} onSave=${save} label="Edit policy" />`;
}

// ---- The editor: common fields as a form, the whole document as JSON ----

const MODES = ["off", "audit", "auto-patch"];
const FIELDS = [
  { path: "name", kind: "text", hint: "Unique among live policies" },
  { path: "description", kind: "text" },
  { path: "priority", kind: "number", hint: "−1000 … 1000, higher wins (default 0)" },
  { path: "selector.clusters", kind: "list", hint: "Comma-separated, * globs; empty = all" },
  { path: "selector.namespaces", kind: "list", hint: "Comma-separated, * globs; empty = all" },
  { path: "selector.kinds", kind: "list", hint: "Deployment, StatefulSet, DaemonSet, ReplicaSet, Rollout, CronJob, Job" },
  { path: "selector.names", kind: "list", hint: "Comma-separated, * globs" },
  { path: "selector.labels", kind: "labels", hint: "key=value, comma-separated (all must match)" },
  { path: "mode.cpu", kind: "select", options: MODES, hint: "Default audit" },
  { path: "mode.memory", kind: "select", options: MODES, hint: "Default audit" },
  { path: "guardrails.learningPeriod", kind: "text", hint: "Default 7d" },
  { path: "guardrails.minConfidence", kind: "number", hint: "0 – 95 (default 70)" },
  { path: "guardrails.cooldown", kind: "text", hint: "Default 24h" },
  { path: "guardrails.changeTolerance", kind: "number", step: "0.01", hint: "A fraction (default 0.05)" },
  { path: "apply.strategy", kind: "select", options: ["in-place", "rollout", "deferred"], hint: "Default in-place" },
  { path: "apply.fallbackAfter", kind: "text", hint: "Default 10m" },
  { path: "hpaCoordination", kind: "select", options: ["true", "false"], hint: "Default true" },
];
const GROUPS = [["Policy", ["name", "description", "priority"]], ["Selects", ["selector."]], ["Mode", ["mode."]], ["Guardrails", ["guardrails."]], ["Applying changes", ["apply.", "hpaCoordination"]]];

export const controlId = (path) => `pol-${path.replace(/[.[\]]+/g, "-").replace(/-$/, "")}`;

function getPath(doc, path) {
  return parsePath(path).reduce((o, k) => (o == null ? undefined : o[k]), doc);
}

/** A copy of `doc` with `path` set to `value` (removed when undefined; empty parents pruned). */
function setPath(doc, path, value) {
  const segs = parsePath(path);
  const rec = (o, i) => {
    const copy = { ...(o && typeof o === "object" ? o : {}) };
    const k = segs[i];
    if (i === segs.length - 1) { if (value === undefined) delete copy[k]; else copy[k] = value; }
    else {
      const child = rec(copy[k], i + 1);
      if (Object.keys(child).length === 0) delete copy[k]; else copy[k] = child;
    }
    return copy;
  };
  return rec(doc, 0);
}

function toInput(f, v) {
  if (v === undefined || v === null) return "";
  if (f.kind === "list") return Array.isArray(v) ? v.join(", ") : String(v);
  if (f.kind === "labels") return v && typeof v === "object" ? Object.entries(v).map(([k, x]) => `${k}=${x}`).join(", ") : String(v);
  return String(v);
}

function fromInput(f, s) {
  const t = s.trim();
  if (t === "") return undefined;
  if (f.kind === "number") return Number.isFinite(Number(t)) ? Number(t) : t;
  if (f.kind === "list") return t.split(",").map((x) => x.trim()).filter(Boolean);
  if (f.kind === "labels") {
    return Object.fromEntries(t.split(",").map((x) => x.trim()).filter(Boolean).map((x) => { const i = x.indexOf("="); return i < 0 ? [x, ""] : [x.slice(0, i).trim(), x.slice(i + 1).trim()]; }));
  }
  if (f.path === "hpaCoordination") return t === "true";
  return t;
}

/** The field errors of an `invalid_policy` answer. */
const policyErrors = (e) => (e instanceof ApiError && Array.isArray(e.details?.errors) ? e.details.errors.filter((x) => x.path) : []);
/** The form field that shows an error at `path` (itself or something inside it). */
const fieldFor = (path) => FIELDS.find((f) => path === f.path || path.startsWith(`${f.path}.`) || path.startsWith(`${f.path}[`));

export function PolicyEditor({ initial, onSave, label: formLabel }) {
  const [doc, setDoc] = useState(initial);
  const [text, setText] = useState(() => pretty(initial).text);
  const [jsonError, setJsonError] = useState(null);
  const [reason, setReason] = useState("");
  const [state, setState] = useState({ busy: false, error: null });
  // Field inputs keep what was typed (e.g. "a, b,") while the document holds the parsed value.
  const [raw, setRaw] = useState({});
  const area = useRef(null);

  const setField = (f, s) => {
    setRaw({ ...raw, [f.path]: s });
    const next = setPath(doc, f.path, fromInput(f, s));
    setDoc(next);
    setText(pretty(next).text);
    setJsonError(null);
  };
  const setAnalysis = (analysis) => {
    const next = setPath(doc, "analysis", analysis);
    setDoc(next); setText(pretty(next).text); setJsonError(null);
  };
  const onJson = (t) => {
    setText(t);
    try {
      const parsed = JSON.parse(t);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the document must be a JSON object");
      setDoc(parsed); setRaw({}); setJsonError(null);
    } catch (err) { setJsonError(`Not valid JSON: ${err.message}`); }
  };
  const submit = async (e) => {
    e.preventDefault();
    if (jsonError) return;
    // The editor shows what is sent, so an error's line is a line of this text.
    setText(pretty(doc).text);
    setState({ busy: true, error: null });
    try { await onSave(doc, reason); setState({ busy: false, error: null }); }
    catch (err) { setState({ busy: false, error: err }); }
  };

  const errors = policyErrors(state.error);
  const atField = (f) => errors.filter((x) => fieldFor(x.path) === f).map((x) => (x.path === f.path ? x.message : `${x.path}: ${x.message}`)).join("; ") || null;
  const inJson = useMemo(() => {
    const pr = pretty(doc);
    return errors.filter((x) => !fieldFor(x.path)).map((x) => ({ ...x, line: lineOf(pr, x.path) }));
  }, [state.error]);
  const goToLine = (line) => {
    const ta = area.current;
    if (!ta) return;
    const lines = ta.value.split("\n");
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    ta.focus();
    ta.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
    ta.scrollTop = Math.max(0, (line - 3) * (ta.scrollHeight / lines.length));
  };
  const control = (f) => {
    const id = controlId(f.path);
    const value = raw[f.path] ?? toInput(f, getPath(doc, f.path));
    const err = atField(f);
    const aria = { "aria-invalid": err ? "true" : undefined, "aria-describedby": err ? `${id}-error` : f.hint ? `${id}-hint` : undefined };
    return html`<${Field} key=${f.path} id=${id} label=${label(f.path)} hint=${f.hint} error=${err}>
      ${f.kind === "select"
        ? html`<select id=${id} ...${aria} value=${value} onChange=${(e) => setField(f, e.target.value)}>
            <option value="">not set</option>${f.options.map((o) => html`<option value=${o}>${o}</option>`)}</select>`
        : html`<input id=${id} ...${aria} type=${f.kind === "number" ? "number" : "text"} step=${f.step ?? (f.kind === "number" ? "1" : undefined)}
            value=${value} onInput=${(e) => setField(f, e.target.value)} />`}
    </${Field}>`;
  };

  return html`<form class="card policy-form" onSubmit=${submit} aria-label=${formLabel} novalidate>
    ${GROUPS.map(([title, prefixes]) => html`<fieldset><legend>${title}</legend><div class="form-grid">
      ${FIELDS.filter((f) => prefixes.some((p) => (p.endsWith(".") ? f.path.startsWith(p) : f.path === p))).map(control)}
    </div></fieldset>`)}
    <fieldset><legend>Analysis</legend><${PresetPicker} doc=${doc} onPick=${setAnalysis} /></fieldset>
    <div class=${`field${jsonError || inJson.length ? " invalid" : ""}`}>
      <label for="pol-json">The whole document (JSON)</label>
      <span class="hint" id="pol-json-hint">Everything the form shows and more: analysis, rollback thresholds, maintenance and freeze windows. See docs/contracts/policy.md.</span>
      <textarea id="pol-json" ref=${area} rows=${Math.min(30, Math.max(10, text.split("\n").length + 1))} spellcheck="false" class="code"
        aria-invalid=${jsonError || inJson.length ? "true" : undefined} aria-describedby="pol-json-hint pol-json-error" value=${text} onInput=${(e) => onJson(e.target.value)}></textarea>
      ${jsonError && html`<span class="field-error" id="pol-json-error" role="alert">${jsonError}</span>`}
      ${inJson.length > 0 && html`<ul class="json-errors" id="pol-json-error" role="alert">${inJson.map((x) => html`<li data-path=${x.path} data-line=${x.line}>
        <button type="button" class="link" onClick=${() => goToLine(x.line)}>line ${x.line}</button> <code>${x.path}</code>: <span class="field-error">${x.message}</span></li>`)}</ul>`}
    </div>
    <${Field} id="pol-reason" label="Reason (recorded in the audit)"><input id="pol-reason" value=${reason} onInput=${(e) => setReason(e.target.value)} /></${Field}>
    ${state.error && errors.length > 0 && html`<p class="field-error" role="alert">Not saved: ${state.error.message}. Fix the marked field${errors.length > 1 ? "s" : ""}.</p>`}
    ${state.error && errors.length === 0 && html`<${ErrorBox} error=${state.error} />`}
    <div class="actions"><button type="submit" class="primary" disabled=${state.busy || Boolean(jsonError)}>${state.busy ? "Saving…" : "Save"}</button>
      <a href="/policies">Cancel</a></div>
  </form>
  <${BacktestPanel} doc=${doc} />`;
}

// ---- Versions, diff, revert ----

function Versions({ p, editor, reload }) {
  const res = useApi((signal) => get(`/v1/policies/${p.id}/versions`, {}, { signal }), [p.id, p.version]);
  const [sel, setSel] = useState({ a: Math.max(1, p.version - 1), b: p.version });
  useEffect(() => setSel({ a: Math.max(1, p.version - 1), b: p.version }), [p.version]);
  const [revertTo, setRevertTo] = useState(null);
  return html`<${Async} res=${res} what="the versions">${(page) => {
    const items = page.items ?? [];
    const byVersion = new Map(items.map((v) => [v.version, v]));
    return html`<div class="card">
      <h2>Versions</h2>
      <table class="compact versions"><thead><tr><th scope="col" class="num">Version</th><th scope="col">Change</th><th scope="col">Why</th><th scope="col">By</th><th scope="col">When</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>${[...items].reverse().map((v) => html`<tr key=${v.version}>
          <td class="num">${v.version}${v.version === p.version ? html` <${Badge} kind="ok">current</${Badge}>` : ""}</td>
          <td>${v.change}</td><td class="why">${v.reason ?? html`<span class="muted">no reason given</span>`}</td><td>${v.actor?.name ?? "—"} <span class="muted small">${v.actor?.type ?? ""}</span></td><td>${fmt.time(v.createdAt)}</td>
          <td class="row-actions">
            <button type="button" class="small" onClick=${() => setSel({ a: Math.max(1, v.version - 1), b: v.version })}>Show changes</button>
            ${editor && v.version !== p.version && html`<button type="button" class="small" onClick=${() => setRevertTo(v.version)}>Revert to v${v.version}…</button>`}
          </td></tr>`)}</tbody></table>
      <h3>Compare</h3>
      <div class="inline-add">
        <label class="filter inline">From <select id="diff-from" value=${sel.a} onChange=${(e) => setSel({ ...sel, a: Number(e.target.value) })}>${items.map((v) => html`<option value=${v.version}>v${v.version}</option>`)}</select></label>
        <label class="filter inline">to <select id="diff-to" value=${sel.b} onChange=${(e) => setSel({ ...sel, b: Number(e.target.value) })}>${items.map((v) => html`<option value=${v.version}>v${v.version}</option>`)}</select></label>
      </div>
      <${Diff} a=${byVersion.get(sel.a)?.spec} b=${byVersion.get(sel.b)?.spec} labelA=${`v${sel.a}`} labelB=${`v${sel.b}`} />
      ${revertTo !== null && html`<${RevertDialog} p=${p} to=${byVersion.get(revertTo)} current=${byVersion.get(p.version)} reload=${reload} onClose=${() => setRevertTo(null)} />`}
    </div>`;
  }}</${Async}>`;
}

export function Diff({ a, b, labelA, labelB }) {
  if (!a || !b) return html`<p class="muted">Pick two versions.</p>`;
  const lines = diffLines(pretty(a).text, pretty(b).text);
  const changed = lines.filter((l) => l.op !== " ").length;
  return html`<div class="diff-box">
    <p class="small muted">${changed === 0 ? `${labelA} and ${labelB} are the same.` : `${lines.filter((l) => l.op === "-").length} line(s) removed, ${lines.filter((l) => l.op === "+").length} added from ${labelA} to ${labelB}.`}</p>
    <pre class="diff-lines" aria-label=${`Changes from ${labelA} to ${labelB}`}>${lines.map((l) => html`<span class=${l.op === "+" ? "add" : l.op === "-" ? "del" : "same"}>${l.op === "+" ? "+ " : l.op === "-" ? "- " : "  "}${l.text}</span>`)}</pre>
  </div>`;
}

function RevertDialog({ p, to, current, reload, onClose }) {
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const revert = async () => {
    setBusy(true); setError(null);
    try {
      await post(`/v1/policies/${p.id}/revert`, { version: to.version, reason: reason || undefined }, undefined, ifMatch(p.version));
      onClose();
      reload();
    } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return html`<${Confirm} open=${true} title=${`Revert ${p.name} to version ${to.version}?`} confirmLabel="Revert" busy=${busy}
    error=${error && !isConflict(error) ? error : null} onConfirm=${revert} onCancel=${onClose}>
    <p>This appends version ${p.version + 1} with the content of version ${to.version}. These lines change:</p>
    <${Diff} a=${current?.spec ?? p.spec} b=${to.spec} labelA=${`v${p.version} (current)`} labelB=${`v${to.version}`} />
    ${error && isConflict(error) && html`<${Conflict} error=${error} reload=${() => { onClose(); reload(); }} />`}
    <${Field} id="revert-reason" label="Reason (recorded in the audit)"><input id="revert-reason" value=${reason} onInput=${(e) => setReason(e.target.value)} /></${Field}>
  </${Confirm}>`;
}

function DeletePolicy({ p, reload }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const remove = async () => {
    setBusy(true); setError(null);
    try {
      await del(`/v1/policies/${p.id}`, { reason }, ifMatch(p.version));
      setOpen(false);
      navigate("/policies");
    } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return html`<div class="actions">
    <button type="button" class="danger" onClick=${() => setOpen(true)}>Delete…</button>
    ${open && html`<${Confirm} open=${true} title=${`Delete ${p.name}?`} confirmLabel="Delete" busy=${busy} error=${error && !isConflict(error) ? error : null}
      onConfirm=${remove} onCancel=${() => { setOpen(false); setError(null); }}>
      <p>The policy stops taking part in resolution at once; the workloads it selects fall back to the next matching policy or the defaults. Its history is kept (soft delete), and its name can be reused.</p>
      ${error && isConflict(error) && html`<${Conflict} error=${error} reload=${() => { setOpen(false); reload(); }} />`}
      <${Field} id="delete-reason" label="Reason (recorded in the audit)"><input id="delete-reason" value=${reason} onInput=${(e) => setReason(e.target.value)} /></${Field}>
    </${Confirm}>`}
  </div>`;
}

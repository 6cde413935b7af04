// Recommender settings and pricing: forms over GET/PUT /v1/admin/settings/*, with the
// API's validation error shown at the field it names.
import { html, useState, useEffect } from "../lib.js";
import { get, put } from "../api.js";
import { useApi, Async, Field, ErrorBox, fieldError } from "../components.js";
import * as fmt from "../format.js";

/** A duration field written as policies write them ("7d", "1m"), kept in seconds. */
function DurationInput({ id, value, onValue, onBad }) {
  const [text, setText] = useState(fmt.durationText(value));
  useEffect(() => setText(fmt.durationText(value)), [value]);
  return html`<input id=${id} value=${text} onInput=${(e) => {
    setText(e.target.value);
    const v = fmt.parseDuration(e.target.value);
    if (v === null) onBad(); else onValue(v);
  }} />`;
}

function useForm(res) {
  const [form, setForm] = useState(null);
  useEffect(() => { if (res.data) setForm(res.data); }, [res.data]);
  return [form, setForm];
}

function SaveBar({ busy, saved, error, fields }) {
  const general = error && !fields.some((f) => fieldError(error, f)) ? error : null;
  return html`${general && html`<${ErrorBox} error=${general} />`}
    ${error && !general && html`<p class="field-error" role="alert">Not saved: fix the marked field.</p>`}
    <div class="actions"><button type="submit" class="primary" disabled=${busy}>${busy ? "Saving…" : "Save"}</button>
    ${saved && html`<span class="ok" role="status">Saved.</span>`}</div>`;
}

function useSave(path, setForm) {
  const [state, setState] = useState({ busy: false, saved: false, error: null });
  const save = async (body) => {
    setState({ busy: true, saved: false, error: null });
    try { setForm(await put(path, body)); setState({ busy: false, saved: true, error: null }); }
    catch (e) { setState({ busy: false, saved: false, error: e }); }
  };
  return [state, save];
}

export function RecommenderSettings() {
  const res = useApi((signal) => get("/v1/admin/settings/recommender", {}, { signal }), []);
  const [form, setForm] = useForm(res);
  const [policyText, setPolicyText] = useState("");
  const [policyError, setPolicyError] = useState(null);
  useEffect(() => { if (res.data) setPolicyText(JSON.stringify(res.data.policy ?? {}, null, 2)); }, [res.data]);
  const [state, save] = useSave("/v1/admin/settings/recommender", setForm);
  const num = (k) => (e) => setForm({ ...form, [k]: e.target.value === "" ? undefined : Number(e.target.value) });
  const [badDuration, setBadDuration] = useState({});
  const duration = (k) => ({ value: form[k], onValue: (v) => { setBadDuration({ ...badDuration, [k]: false }); setForm({ ...form, [k]: v }); }, onBad: () => setBadDuration({ ...badDuration, [k]: true }) });
  const submit = (e) => {
    e.preventDefault();
    let policy;
    try { policy = JSON.parse(policyText || "{}"); setPolicyError(null); } catch (err) { setPolicyError(`Not valid JSON: ${err.message}`); return; }
    if (Object.values(badDuration).some(Boolean)) return;
    save({ ...form, policy });
  };
  const err = (f) => (badDuration[f] ? "Write it as 7d, 12h, 30m, 45s or a number of seconds." : null) ?? fieldError(state.error, f) ?? (f === "policy" ? policyError ?? policyFieldError(state.error) : null);
  return html`<${Async} res=${res} what="the recommender settings">${() => form && html`<form onSubmit=${submit} aria-label="Recommender settings">
    <h2>Recommender</h2>
    <div class="form-grid">
      <${Field} id="schedule" label="Schedule (cron, UTC)" hint="e.g. 0 * * * * (hourly)" error=${err("schedule")}>
        <input id="schedule" value=${form.schedule ?? ""} onInput=${(e) => setForm({ ...form, schedule: e.target.value })} /></${Field}>
      <${Field} id="lookbackSeconds" label="Lookback window" hint="1h – 90d, as policies write durations (7d)" error=${err("lookbackSeconds")}>
        <${DurationInput} id="lookbackSeconds" ...${duration("lookbackSeconds")} /></${Field}>
      <${Field} id="stepSeconds" label="Query step" hint="10s – 1h (1m)" error=${err("stepSeconds")}>
        <${DurationInput} id="stepSeconds" ...${duration("stepSeconds")} /></${Field}>
      <${Field} id="retentionDays" label="History retention (days)" hint="0 keeps only the latest" error=${err("retentionDays")}>
        <input id="retentionDays" type="number" value=${form.retentionDays ?? ""} onInput=${num("retentionDays")} /></${Field}>
    </div>
    <${Field} id="excludedNamespaces" label="Namespaces left out" hint="Comma-separated, * globs. Runs skip them; Kubernetes' own by default. Empty analyzes every namespace." error=${err("excludedNamespaces") ?? excludedError(state.error)}>
      <input id="excludedNamespaces" value=${(form.excludedNamespaces ?? []).join(", ")}
        onInput=${(e) => setForm({ ...form, excludedNamespaces: e.target.value.split(",").map((x) => x.trim()).filter(Boolean) })} /></${Field}>
    <${PresetSelect} onPick=${(analysis) => setPolicyText(JSON.stringify(analysis, null, 2))} />
    <${Field} id="policy" label="Default analysis policy (JSON)" hint="What a workload gets when no policy sets its analysis. The engine's Policy; fields left out take defaults." error=${err("policy")}>
      <textarea id="policy" rows="14" spellcheck="false" class="code" value=${policyText} onInput=${(e) => setPolicyText(e.target.value)}></textarea></${Field}>
    <${SaveBar} ...${state} fields=${["schedule", "lookbackSeconds", "stepSeconds", "retentionDays", "excludedNamespaces", "policy"]} />
  </form>`}</${Async}>`;
}

/** Errors of one entry name a path like `excludedNamespaces[2]`. */
function excludedError(error) {
  const f = error?.details?.field;
  return typeof f === "string" && f.startsWith("excludedNamespaces") ? error.message : null;
}

/** Fills the default analysis from a preset (saved with the form). */
function PresetSelect({ onPick }) {
  const res = useApi((signal) => get("/v1/policies/presets", {}, { signal }), []);
  const presets = res.data?.items ?? [];
  const [chosen, setChosen] = useState("");
  const hint = presets.find((p) => p.name === chosen)?.description ?? "Replaces the JSON below with a preset; save to use it.";
  return html`<${Field} id="policy-preset" label="Start from a preset" hint=${hint}>
    <select id="policy-preset" value=${chosen} onChange=${(e) => { setChosen(e.target.value); const p = presets.find((x) => x.name === e.target.value); if (p) onPick(p.analysis); }}>
      <option value="">—</option>${presets.map((p) => html`<option value=${p.name}>${p.name}${p.fleetDefault ? " (fleet default)" : ""}</option>`)}
    </select></${Field}>`;
}

/** Errors inside the policy name a path like `policy.cpu.percentile`. */
function policyFieldError(error) {
  const f = error?.details?.field;
  return typeof f === "string" && f.startsWith("policy") ? error.message : null;
}

export function PricingSettings() {
  const res = useApi((signal) => get("/v1/admin/settings/pricing", {}, { signal }), []);
  const [form, setForm] = useForm(res);
  const [state, save] = useSave("/v1/admin/settings/pricing", setForm);
  const [newCluster, setNewCluster] = useState("");
  const setCluster = (name, k, v) => setForm({ ...form, clusters: { ...form.clusters, [name]: { ...form.clusters[name], [k]: v === "" ? undefined : Number(v) } } });
  const removeCluster = (name) => { const c = { ...form.clusters }; delete c[name]; setForm({ ...form, clusters: c }); };
  const err = (f) => fieldError(state.error, f);
  return html`<${Async} res=${res} what="the pricing">${() => form && html`<form onSubmit=${(e) => { e.preventDefault(); save(form); }} aria-label="Pricing">
    <h2>Pricing</h2>
    <p class="muted small">Used for the estimated monthly cost change of recommendations made from now on.</p>
    <div class="form-grid">
      <${Field} id="currency" label="Currency" error=${err("currency")}><input id="currency" value=${form.currency} onInput=${(e) => setForm({ ...form, currency: e.target.value })} /></${Field}>
      <${Field} id="cpuPerVcpuHour" label="Price per vCPU-hour" error=${err("cpuPerVcpuHour")}><input id="cpuPerVcpuHour" type="number" step="any" min="0" value=${form.cpuPerVcpuHour} onInput=${(e) => setForm({ ...form, cpuPerVcpuHour: Number(e.target.value) })} /></${Field}>
      <${Field} id="memoryPerGibHour" label="Price per GiB-hour" error=${err("memoryPerGibHour")}><input id="memoryPerGibHour" type="number" step="any" min="0" value=${form.memoryPerGibHour} onInput=${(e) => setForm({ ...form, memoryPerGibHour: Number(e.target.value) })} /></${Field}>
    </div>
    <h3>Per-cluster prices</h3>
    ${Object.keys(form.clusters ?? {}).length === 0 && html`<p class="muted small">No overrides: every cluster uses the prices above.</p>`}
    ${Object.entries(form.clusters ?? {}).map(([name, p]) => html`<div class="form-grid" key=${name}>
      <${Field} id=${`cpu-${name}`} label=${`${name}: vCPU-hour`}><input id=${`cpu-${name}`} type="number" step="any" min="0" value=${p.cpuPerVcpuHour ?? ""} onInput=${(e) => setCluster(name, "cpuPerVcpuHour", e.target.value)} /></${Field}>
      <${Field} id=${`mem-${name}`} label=${`${name}: GiB-hour`}><input id=${`mem-${name}`} type="number" step="any" min="0" value=${p.memoryPerGibHour ?? ""} onInput=${(e) => setCluster(name, "memoryPerGibHour", e.target.value)} /></${Field}>
      <div class="field"><span class="label-space"></span><button type="button" class="small" onClick=${() => removeCluster(name)}>Remove ${name}</button></div>
    </div>`)}
    <div class="inline-add"><label for="new-cluster">Add a cluster override</label>
      <input id="new-cluster" value=${newCluster} onInput=${(e) => setNewCluster(e.target.value)} placeholder="cluster name" />
      <button type="button" class="small" disabled=${!newCluster} onClick=${() => { setForm({ ...form, clusters: { ...form.clusters, [newCluster]: {} } }); setNewCluster(""); }}>Add</button></div>
    <${SaveBar} ...${state} fields=${["currency", "cpuPerVcpuHour", "memoryPerGibHour"]} />
  </form>`}</${Async}>`;
}

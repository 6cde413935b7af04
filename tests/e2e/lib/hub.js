// Starts the real kerf binary for a browser test: `kerf demo` (the built-in demo fleet;
// it prints a UI login and an admin API token) on port 0 with a temp data dir, ready
// when its `--ready-file` appears (it names the bound address). `serve(dataDir)` starts
// `kerf serve` on a data dir an earlier demo filled. E2E_URL + E2E_USER + E2E_PASSWORD +
// E2E_TOKEN target a hub that already runs.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BIN = process.env.E2E_KERF_BIN ?? "kerf";

/** `kerf demo` in a fresh data dir, plus a cluster `e2e` whose agent token posts events. */
export async function startHub({ keepDataDir = false } = {}) {
  if (process.env.E2E_URL) {
    const url = process.env.E2E_URL.replace(/\/$/, "");
    return hubHandle({ url, token: process.env.E2E_TOKEN, login: { username: process.env.E2E_USER ?? "admin", password: process.env.E2E_PASSWORD }, stop: async () => {} });
  }
  const dataDir = mkdtempSync(join(tmpdir(), "kerf-e2e-"));
  const env = { ...process.env, KERF_LOG: process.env.KERF_LOG ?? "info" };
  const clusterOut = execFileSync(BIN, ["clusters", "create", "e2e", "--data-dir", dataDir], { encoding: "utf8", env });
  const clusterToken = clusterOut.match(/kerf_ct_[A-Za-z0-9_]+/)?.[0];
  const started = await spawnKerf(["demo", "--listen", "127.0.0.1:0", "--data-dir", dataDir], (logs) => {
    const token = logs.match(/admin token: (kerf_at_\S+)/)?.[1];
    const login = logs.match(/ui login: (\S+) \/ (\S+)/);
    return token && login ? { token, login: { username: login[1], password: login[2] } } : null;
  });
  return hubHandle({ ...started, dataDir, clusterToken, stop: async () => { await started.stop(); if (!keepDataDir) rmSync(dataDir, { recursive: true, force: true }); } });
}

/**
 * `kerf serve` on a fresh data dir, as a first install is: no cluster, no datasource; an
 * admin user (the returned login) and an admin API token made with the CLI first.
 * `config(dataDir)` returns the text of a config file to serve with (`--config`), and
 * `env` adds variables (secrets the config names by variable).
 */
export async function startEmptyHub({ config, env: extraEnv = {} } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "kerf-e2e-serve-"));
  const env = { ...process.env, KERF_LOG: process.env.KERF_LOG ?? "info" };
  const password = "first-contact-harbour-92";
  writeFileSync(join(dataDir, "admin.pw"), `${password}\n`, { mode: 0o600 });
  execFileSync(BIN, ["users", "create", "ada", "--admin", "--password-file", join(dataDir, "admin.pw"), "--data-dir", dataDir], { encoding: "utf8", env });
  const token = execFileSync(BIN, ["token", "create", "--name", "e2e", "--role", "admin", "--data-dir", dataDir], { encoding: "utf8", env }).trim();
  const withConfig = [];
  if (config) {
    writeFileSync(join(dataDir, "kerf.toml"), config(dataDir), { mode: 0o600 });
    withConfig.push("--config", join(dataDir, "kerf.toml"));
  }
  const started = await spawnKerf([...withConfig, "serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir], () => ({}), extraEnv);
  return hubHandle({ ...started, token, login: { username: "ada", password }, dataDir, stop: async () => { await started.stop(); rmSync(dataDir, { recursive: true, force: true }); } });
}

/** `kerf serve` on an existing data dir; `creds` are the login and token made there before. */
export async function serve(dataDir, creds) {
  const started = await spawnKerf(["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir], () => ({}));
  return hubHandle({ ...started, ...creds, dataDir, stop: async () => { await started.stop(); rmSync(dataDir, { recursive: true, force: true }); } });
}

/**
 * Spawns `kerf ARGS --ready-file FILE` and waits (up to 30 s) for FILE, then for
 * `parse(stdout + stderr)` to find what the test needs in what kerf printed.
 */
async function spawnKerf(args, parse, extraEnv = {}) {
  const env = { ...process.env, KERF_LOG: process.env.KERF_LOG ?? "info", ...extraEnv };
  const readyDir = mkdtempSync(join(tmpdir(), "kerf-e2e-ready-"));
  const readyFile = join(readyDir, "ready.json");
  const child = spawn(BIN, [...args, "--ready-file", readyFile], { env, stdio: ["ignore", "pipe", "pipe"] });
  let logs = "";
  let exited = null;
  child.stdout.on("data", (chunk) => { logs += chunk; });
  child.stderr.on("data", (chunk) => { logs += chunk; });
  child.on("exit", (code) => { exited = code; });
  const ready = await until("kerf's ready file", 30000, () => {
    if (exited !== null) throw new Error(`kerf exited with ${exited}:\n${logs}`);
    return existsSync(readyFile) && JSON.parse(readFileSync(readyFile, "utf8"));
  }, { every: 20 });
  // The demo prints its banner before it writes the file; the pipe may lag behind.
  const parsed = await until("what kerf printed", 30000, () => parse(logs), { every: 20 });
  return {
    url: `http://${ready.addr}`,
    ...parsed,
    logs: () => logs,
    stop: async () => {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await gone;
      }
      rmSync(readyDir, { recursive: true, force: true });
    },
  };
}

function hubHandle({ url, token, login, clusterToken, dataDir, logs = () => "", stop }) {
  /** The API as the demo's admin token (test setup and direct checks, not the UI). */
  const api = async (method, path, body, bearer = token) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  return {
    url, token, login, dataDir, logs, stop, api,
    /**
     * Waits (up to 60 s) until every registered cluster (but `e2e`, whose agent is the test)
     * has finished a run and none is in progress, e.g. the demo's first runs.
     */
    runsDone: () => until("the recommendation runs to be done", 60000, async () => {
      const running = await api("GET", "/v1/runs?status=running&limit=1");
      const clusters = await api("GET", "/v1/clusters");
      const runs = await api("GET", "/v1/runs?limit=500");
      const names = clusters.status === 200 ? clusters.body.items.filter((c) => c.state !== "retired" && c.name !== "e2e").map((c) => c.name) : [];
      const finished = (n) => runs.status === 200 && runs.body.items.some((r) => r.cluster === n && r.status !== "running");
      return running.status === 200 && running.body.items.length === 0 && names.every(finished);
    }, { every: 200 }),
    /** Stores workload events as the e2e cluster's agent would. */
    postEvents: clusterToken ? async (events) => {
      const r = await api("POST", "/v1/clusters/e2e/events", events, clusterToken);
      if (r.status !== 200) throw new Error(`events refused: ${r.status} ${JSON.stringify(r.body)}`);
    } : null,
  };
}

/** The /v1 paths and methods the hub serves, from its OpenAPI document. */
export async function routes(url) {
  const text = await (await fetch(`${url}/v1/openapi.yaml`)).text();
  const set = new Set();
  let path = null;
  for (const line of text.split("\n")) {
    const p = line.match(/^ {2}(\/\S*):\s*$/);
    if (p) { path = p[1]; continue; }
    const m = line.match(/^ {4}(get|put|post|patch|delete):/);
    if (m && path) set.add(`${m[1].toUpperCase()} ${path}`);
  }
  return set;
}

/**
 * Polls `check` (every 2 s, or `every` ms) until it returns a value, at most `ms`; then
 * fails naming `what` and the last value seen.
 */
export async function until(what, ms, check, { every = 2000 } = {}) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(ms / 1000)} s waiting for ${what} (last seen: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, every));
  }
}

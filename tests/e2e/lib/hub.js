// Starts the real kerf binary for a browser test: `kerf demo` when the binary has it
// (synthetic fleet, admin token printed), else `kerf serve` with an admin token made by
// `kerf token create`. Port 0 and a temp data dir; the address is read from the
// `listening addr=` log line. E2E_URL + E2E_TOKEN target a hub that already runs.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BIN = process.env.E2E_KERF_BIN ?? "kerf";

function hasCommand(name) {
  try { return execFileSync(BIN, ["--help"], { encoding: "utf8" }).split("\n").some((l) => l.trim().startsWith(`${name} `) || l.trim() === name); }
  catch { return false; }
}

export async function startHub() {
  if (process.env.E2E_URL) {
    return { url: process.env.E2E_URL.replace(/\/$/, ""), token: process.env.E2E_TOKEN, demo: true, logs: () => "", stop: async () => {}, postEvents: null, runsDone: async () => {} };
  }
  const dataDir = mkdtempSync(join(tmpdir(), "kerf-e2e-"));
  const demo = hasCommand("demo");
  const env = { ...process.env, KERF_LOG: process.env.KERF_LOG ?? "info" };
  let token = null;
  // A cluster of our own whose agent token lets the test report workload events.
  const clusterOut = execFileSync(BIN, ["clusters", "create", "e2e", "--data-dir", dataDir], { encoding: "utf8", env });
  const clusterToken = clusterOut.match(/kerf_ct_[A-Za-z0-9_]+/)?.[0];
  if (!demo) {
    const out = execFileSync(BIN, ["token", "create", "--name", "e2e", "--data-dir", dataDir], { encoding: "utf8", env });
    token = out.match(/kerf_at_[A-Za-z0-9_]+/)?.[0];
  }
  const args = [demo ? "demo" : "serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir];
  const child = spawn(BIN, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let logs = "";
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kerf did not start within 30 s:\n${logs}`)), 30000);
    const onData = (chunk) => {
      logs += chunk;
      token ??= logs.match(/admin token: (kerf_at_\S+)/)?.[1] ?? null;
      const addr = logs.match(/listening addr=(\S+)/)?.[1];
      if (addr && token) { clearTimeout(timer); resolve(`http://${addr}`); }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`kerf exited with ${code}:\n${logs}`)); });
  });
  const url = await ready;
  return {
    url,
    token,
    demo,
    /** Waits (up to 60 s) until no recommendation run is in progress, e.g. the demo's first. */
    runsDone: async () => {
      const deadline = Date.now() + 60000;
      while (Date.now() < deadline) {
        const r = await fetch(`${url}/v1/runs?status=running&limit=1`, { headers: { Authorization: `Bearer ${token}` } });
        if (r.status === 404 || (r.ok && (await r.json()).items.length === 0)) return;
        await new Promise((res) => setTimeout(res, 200));
      }
      throw new Error("a recommendation run is still in progress after 60 s");
    },
    /** Stores workload events as the e2e cluster's agent would. */
    postEvents: async (events) => {
      const r = await fetch(`${url}/v1/clusters/e2e/events`, {
        method: "POST", headers: { Authorization: `Bearer ${clusterToken}`, "Content-Type": "application/json" }, body: JSON.stringify(events),
      });
      if (!r.ok) throw new Error(`events refused: ${r.status} ${await r.text()}`);
    },
    logs: () => logs,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
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

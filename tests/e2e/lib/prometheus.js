// A real Prometheus for a browser test: kube-state-metrics and cAdvisor series written
// here as OpenMetrics, backfilled with `promtool tsdb create-blocks-from openmetrics`,
// served on loopback at a free port from a temp dir; stopped (and removed) by `stop()`.
// Needs `prometheus` and `promtool` (scripts/ensure-prometheus.sh installs them).
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "./hub.js";

const STEP = 60_000;

/** OpenMetrics text built per metric family (a family's samples stay together). */
export class OpenMetrics {
  constructor() { this.families = new Map(); }
  /** Samples of one series at each time in `times` (ms), value from `value(t)`. */
  series(name, labels, times, value) {
    const l = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(",");
    const lines = this.families.get(name) ?? [];
    for (const t of times) lines.push(`${name}{${l}} ${value(t)} ${(t / 1000).toFixed(3)}`);
    this.families.set(name, lines);
  }
  text() {
    return `${[...this.families.values()].map((l) => l.join("\n")).join("\n")}\n# EOF\n`;
  }
}

/** Times every minute from `from` to `to` (ms, inclusive). */
export const minutes = (from, to) => {
  const out = [];
  for (let t = from - (from % STEP); t <= to; t += STEP) if (t >= from) out.push(t);
  return out;
};

const MIB = 1024 * 1024;

/**
 * One Deployment of `replicas` pods, alive from `from` to `to` (ms): its
 * kube-state-metrics series (owners, created, requests, limits, labels, replicas) and
 * each pod's cAdvisor usage (`cores` of CPU, `memMib` MiB working set).
 */
export function deployment(om, { ns, name, replicas, from, to, cpuRequest, memRequestMib, memLimitMib, cores, memMib }) {
  const t = minutes(from, to);
  const rs = `${name}-7d9f8c6b5`;
  om.series("kube_deployment_created", { namespace: ns, deployment: name }, t, () => Math.floor(from / 1000));
  om.series("kube_deployment_spec_replicas", { namespace: ns, deployment: name }, t, () => replicas);
  om.series("kube_replicaset_owner", { namespace: ns, replicaset: rs, owner_kind: "Deployment", owner_name: name, owner_is_controller: "true" }, t, () => 1);
  om.series("kube_replicaset_created", { namespace: ns, replicaset: rs }, t, () => Math.floor(from / 1000));
  for (let i = 0; i < replicas; i++) {
    const pod = `${rs}-p${i}x${name.length}`;
    const uid = `${ns}-${pod}-uid`;
    const base = { namespace: ns, pod, uid };
    om.series("kube_pod_owner", { ...base, owner_kind: "ReplicaSet", owner_name: rs, owner_is_controller: "true" }, t, () => 1);
    om.series("kube_pod_created", base, t, () => Math.floor(from / 1000));
    om.series("kube_pod_labels", { ...base, label_app: name, label_pod_template_hash: "7d9f8c6b5" }, t, () => 1);
    om.series("kube_pod_container_resource_requests", { ...base, container: "app", resource: "cpu", unit: "core" }, t, () => cpuRequest);
    om.series("kube_pod_container_resource_requests", { ...base, container: "app", resource: "memory", unit: "byte" }, t, () => memRequestMib * MIB);
    om.series("kube_pod_container_resource_limits", { ...base, container: "app", resource: "memory", unit: "byte" }, t, () => memLimitMib * MIB);
    const c = { namespace: ns, pod, container: "app", id: `/kubepods/pod${uid}/app` };
    // A counter: `cores` seconds of CPU per second, with a little seeded wobble.
    let counter = 0;
    let last = t[0];
    om.series("container_cpu_usage_seconds_total", c, t, (x) => {
      counter += cores * (1 + 0.2 * Math.sin(x / 600_000 + i)) * (x - last) / 1000;
      last = x;
      return counter.toFixed(4);
    });
    om.series("container_memory_working_set_bytes", c, t, (x) => Math.round(memMib * MIB * (1 + 0.05 * Math.sin(x / 900_000 + i))));
  }
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/** Backfills `om` into a fresh TSDB and serves it; resolves once `/-/ready` answers. */
export async function startPrometheus(om) {
  const dir = mkdtempSync(join(tmpdir(), "kerf-e2e-prom-"));
  writeFileSync(join(dir, "data.om"), om.text());
  execFileSync("promtool", ["tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=24h", join(dir, "data.om"), join(dir, "tsdb")], { stdio: "pipe" });
  writeFileSync(join(dir, "prometheus.yml"), "global:\n  scrape_interval: 1h\nscrape_configs: []\n");
  const port = await freePort();
  const child = spawn("prometheus", [
    `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "tsdb")}`,
    "--storage.tsdb.retention.time=100y", `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn",
  ], { stdio: ["ignore", "ignore", "pipe"] });
  let logs = "";
  child.stderr.on("data", (c) => { logs += c; });
  const url = `http://127.0.0.1:${port}`;
  await until("prometheus to be ready", 60_000, async () => {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${logs}`);
    try { return (await fetch(`${url}/-/ready`)).status === 200; } catch { return false; /* not listening yet */ }
  }, { every: 100 }).catch((e) => { throw new Error(`${e.message}:\n${logs}`); });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

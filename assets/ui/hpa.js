// A workload scaled by a HorizontalPodAutoscaler (from kube-state-metrics): on CPU
// utilization, a new CPU request moves the point where it scales; the note shows the
// target that keeps today's scaling point (what the agent sets when `hpaCoordination`
// is on).
import { html } from "./lib.js";
import { Badge } from "./components.js";

export function HpaNote({ hpa }) {
  if (!hpa) return null;
  const t = hpa.cpuTargetUtilization;
  const n = hpa.coordinatedCpuTarget;
  const bounds = hpa.minReplicas != null || hpa.maxReplicas != null ? ` (${hpa.minReplicas ?? "?"}–${hpa.maxReplicas ?? "?"} replicas)` : "";
  return html`<p class="hpa-note"><${Badge} kind="warn">HPA</${Badge}> Scaled by <code>${hpa.name}</code>${bounds}${t != null ? html` on CPU at ${t} % of the request.
    ${n != null && n !== t ? html` With the recommended requests, a target of <strong>${n} %</strong> keeps today's scaling point.` : n === t ? " The recommended requests keep its scaling point." : " A container's CPU request is unknown, so the target that keeps its scaling point is too."}` : "."}
    ${(hpa.otherMetrics ?? []).length > 0 && html` <span class="small muted">Also on ${hpa.otherMetrics.join(", ")}.</span>`}</p>`;
}

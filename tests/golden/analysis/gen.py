import json, copy, os, sys
T0 = 1800000000000
MIN = 60000
MIB = 1048576
EVAL = T0 + 60*MIN

def minutes(rng, value):
    return [{"timestamp": T0 + m*MIN, "value": value} for m in rng]

def series(id, samples, kind="gauge", release="A", pod=None):
    s = {"id": id, "podUID": pod or id, "workloadUID": "uid", "release": release, "kind": kind, "samples": samples}
    return s

def sig(value, ts=EVAL, **kw):
    d = {"available": True, "timestamp": ts, "value": value}
    d.update(kw)
    return d

def base():
    return {
        "schemaVersion": "resource-analysis-input/v2",
        "evaluationTime": EVAL,
        "windowStart": T0,
        "containers": [{
            "target": {"namespace": "shop", "kind": "Deployment", "name": "api", "container": "app", "workloadUID": "uid", "release": "A"},
            "identity": {"available": True, "workloadUID": "uid", "release": "A", "timestamp": EVAL, "releaseStartedAt": T0},
            "inventory": {"available": True, "timestamp": EVAL, "eligible": 1, "observed": 1, "excluded": 0},
            "cpu": {"series": [series("pod-1", minutes(range(0, 61), 50))],
                    "currentRequest": sig(1000), "currentLimit": sig(4000)},
            "memory": {"series": [series("pod-1", minutes(range(0, 61), 100*MIB))],
                       "currentRequest": sig(256*MIB), "currentLimit": sig(512*MIB)},
        }],
    }

cases = {}
def case(name, probes, mutate=None, policy=None, expect=None):
    inp = base()
    c = inp["containers"][0]
    if mutate: mutate(inp, c)
    cases[name] = (probes, inp, policy, expect or {})

M, C = "results.0", "results.1"
REQ_MEM, LIM_MEM = 125829120, 377487360

case("baseline-recommends", "Healthy hour of minute scrapes: both resources recommend requests and limits at confidence 95.", None, None,
     {f"{M}.recommendations.0.suggestedValue": REQ_MEM, f"{M}.recommendations.1.suggestedValue": LIM_MEM,
      f"{M}.recommendations.0.confidence": 95, f"{C}.recommendations.0.suggestedValue": 150,
      f"{C}.recommendations.1.suggestedValue": 750, f"{M}.dataQuality.status": "available", f"{M}.dataQuality.reasons": [],
      f"{M}.dataQuality.observationCount": 61, f"{C}.decisionTrace.source.percentile": 95})

def stale(i, c):
    for r in ("cpu", "memory"):
        c[r]["series"][0]["samples"] = minutes(range(0, 55), c[r]["series"][0]["samples"][0]["value"])
case("stale-usage", "Last sample 6 minutes old: stale-usage blocks sizing (history relaxed to isolate it); the stale pod is not a fresh observed pod, so inventory is incomplete too.", stale,
     {"evidence": {"minimumHistorySeconds": 600}},
     {f"{M}.dataQuality.reasons": ["stale-usage", "incomplete-inventory"], f"{M}.dataQuality.status": "unavailable", f"{M}.noActionReason": "stale-usage",
      f"{M}.decisionTrace.settings.0.disposition": "unavailable"})

case("insufficient-history", "Two-hour history minimum against one hour of data: insufficient-history, no fallback candidates.", None,
     {"evidence": {"minimumHistorySeconds": 7200}},
     {f"{M}.dataQuality.reasons": ["insufficient-history"], f"{M}.noActionReason": "insufficient-history", f"{C}.dataQuality.status": "unavailable"})

case("insufficient-samples", "minimumSamples 100 against 61 observations: insufficient-samples.", None,
     {"evidence": {"minimumSamples": 100}},
     {f"{M}.dataQuality.reasons": ["insufficient-samples"], f"{M}.noActionReason": "insufficient-samples"})

def sparse(i, c):
    for r in ("cpu", "memory"):
        v = c[r]["series"][0]["samples"][0]["value"]
        c[r]["series"][0]["samples"] = minutes([m for m in range(61) if m % 6 != 3], v)
case("sparse-coverage", "Ten missing minute scrapes in an hour: coverage 0.85 < 0.9 gives sparse-coverage.", sparse, None,
     {f"{M}.dataQuality.reasons": ["sparse-coverage"], f"{M}.dataQuality.coverage": 0.85, f"{M}.noActionReason": "sparse-coverage"})

case("missing-identity", "identity.available false: missing-identity blocks both resources.",
     lambda i, c: c["identity"].update(available=False), None,
     {f"{M}.dataQuality.reasons.0": "missing-identity", f"{M}.noActionReason": "missing-identity", f"{C}.noActionReason": "missing-identity"})

case("ambiguous-identity", "The adapter flags the identity ambiguous: ambiguous-identity.",
     lambda i, c: c["identity"].update(ambiguous=True), None,
     {f"{M}.dataQuality.reasons.0": "ambiguous-identity", f"{M}.noActionReason": "ambiguous-identity"})

case("identity-release-mismatch", "Identity names release B while the target is A: ambiguous-identity.",
     lambda i, c: c["identity"].update(release="B"), None,
     {f"{M}.dataQuality.reasons.0": "ambiguous-identity"})

case("stale-identity", "Identity observed 10 minutes before evaluation: stale-identity.",
     lambda i, c: c["identity"].update(timestamp=EVAL - 10*MIN), None,
     {f"{M}.dataQuality.reasons.0": "stale-identity", f"{M}.noActionReason": "stale-identity"})

def unknown_start(i, c):
    c["identity"]["releaseStartedAt"] = 0
    c["cpu"]["series"] = []
    c["memory"]["series"] = []
case("unknown-release-start", "No activation boundary and nothing to infer it from: releaseStartedAt stays 0, unknown-release-start.", unknown_start, None,
     {f"{M}.dataQuality.reasons.0": "unknown-release-start", f"{M}.evidence.identity.releaseStartInferred": True,
      f"{M}.evidence.identity.releaseStartedAt": 0, f"{M}.noActionReason": "unknown-release-start"})

case("inferred-release-start", "releaseStartedAt 0 is inferred from the first selected sample; sizing proceeds with a partial status.",
     lambda i, c: c["identity"].update(releaseStartedAt=0), None,
     {f"{M}.evidence.identity.releaseStartedAt": T0, f"{M}.evidence.identity.releaseStartInferred": True,
      f"{M}.dataQuality.reasons": ["inferred-release-start"], f"{M}.dataQuality.status": "partial",
      f"{M}.recommendations.0.suggestedValue": REQ_MEM})

def rollback(i, c):
    c["identity"]["releaseStartedAt"] = T0
    c["memory"]["series"] = [series("pod-1", minutes(range(0, 10), 300*MIB)),
                             series("pod-b", minutes(range(10, 20), 400*MIB), release="B"),
                             series("pod-2", minutes(range(20, 61), 100*MIB))]
case("rollback-boundary", "A→B→A visible in memory series: the start moves past B's last sample, so A's first lifetime (300 MiB) is excluded.", rollback,
     {"evidence": {"minimumHistorySeconds": 600}},
     {f"{M}.evidence.identity.releaseStartedAt": T0 + 20*MIN, f"{M}.evidence.identity.releaseStartInferred": True,
      f"{M}.evidence.aggregatedUsage.value": 100*MIB, f"{M}.dataQuality.reasons": ["inferred-release-start"]})

case("missing-current-request", "Request unknown: missing-current-request blocks the resource.",
     lambda i, c: c["memory"].update(currentRequest={"available": False}), None,
     {f"{M}.dataQuality.reasons": ["missing-current-request"], f"{M}.noActionReason": "missing-current-request",
      f"{M}.evidence.currentRequest": {"available": False, "value": 0, "timestamp": 0}})

case("stale-current-request", "Request observed 10 minutes ago: stale-current-request blocks the resource.",
     lambda i, c: c["memory"]["currentRequest"].update(timestamp=EVAL - 10*MIN), None,
     {f"{M}.dataQuality.reasons": ["stale-current-request"], f"{M}.noActionReason": "stale-current-request"})

case("missing-current-limit", "Limit unknown: only the request is recommended; the limit setting is unavailable.",
     lambda i, c: c["memory"].update(currentLimit={"available": False}), None,
     {f"{M}.dataQuality.reasons": ["missing-current-limit"], f"{M}.recommendations.0.setting": "requests",
      f"{M}.decisionTrace.settings.1.disposition": "unavailable", f"{M}.decisionTrace.settings.1.reasons": ["missing-current-limit"]})

case("stale-current-limit", "Limit older than releaseStartedAt: stale-current-limit; request still recommended.",
     lambda i, c: c["memory"]["currentLimit"].update(timestamp=T0 - 1), None,
     {f"{M}.dataQuality.reasons": ["stale-current-limit"], f"{M}.decisionTrace.settings.1.disposition": "unavailable",
      f"{M}.recommendations.0.suggestedValue": REQ_MEM})

for name, mut, reason in [
    ("unknown-inventory", lambda i, c: c["inventory"].update(available=False), "unknown-inventory"),
    ("stale-inventory", lambda i, c: c["inventory"].update(timestamp=EVAL - 10*MIN), "stale-inventory"),
    ("excluded-containers", lambda i, c: c["inventory"].update(excluded=1), "excluded-containers"),
    ("incomplete-inventory", lambda i, c: c["inventory"].update(eligible=2, observed=2), "incomplete-inventory")]:
    case(name, f"{reason} blocks the material reductions of both resources; it becomes the no-action reason.", mut, None,
         {f"{M}.dataQuality.reasons": [reason], f"{M}.noActionReason": reason, f"{C}.noActionReason": reason,
          f"{M}.decisionTrace.settings.0.reasons": [reason], f"{M}.dataQuality.status": "partial"})

def inventory_growth(i, c):
    c["inventory"]["available"] = False
    c["memory"]["currentRequest"]["value"] = 50*MIB
    c["memory"]["currentLimit"]["value"] = 100*MIB
case("unknown-inventory-allows-growth", "Unknown inventory does not block increases: memory grows to 120/360 MiB.", inventory_growth, None,
     {f"{M}.dataQuality.reasons": ["unknown-inventory"], f"{M}.recommendations.0.suggestedValue": REQ_MEM,
      f"{M}.recommendations.1.suggestedValue": LIM_MEM})

def no_change(i, c):
    c["memory"]["currentRequest"]["value"] = 120*MIB
    c["memory"]["currentLimit"]["value"] = 360*MIB
case("no-material-change", "Current settings equal the suggestion: no recommendation, status stays available while reasons lists no-material-change.", no_change, None,
     {f"{M}.dataQuality.status": "available", f"{M}.dataQuality.reasons": ["no-material-change"],
      f"{M}.noActionReason": "no-material-change", f"{M}.decisionTrace.settings.0.disposition": "retained"})

def bound(i, c):
    c["cpu"]["series"][0]["samples"] = minutes(range(61), 3)
    c["cpu"]["currentRequest"]["value"] = 69
    c["cpu"]["currentLimit"]["available"] = False
case("bound-applied", "CPU 3 m × 3 = 9 m is clamped to the 20 m minimum; 69→9 would be material, 69→20 is not: bound-applied.", bound, None,
     {f"{C}.noActionReason": "bound-applied", f"{C}.dataQuality.reasons": ["missing-current-limit", "bound-applied"],
      f"{C}.decisionTrace.settings.0.steps.1.values.candidate": 20})

case("requests-only", "memory.requestsOnly: limit-changes-disabled, limit trace disabled, only the request recommended.", None,
     {"memory": {"requestsOnly": True}},
     {f"{M}.dataQuality.reasons": ["limit-changes-disabled"], f"{M}.decisionTrace.settings.1.disposition": "disabled",
      f"{M}.recommendations.0.setting": "requests", f"{M}.dataQuality.status": "partial"})

def unset(i, c):
    c["memory"]["currentRequest"] = sig(0, unset=True)
    c["memory"]["currentLimit"] = sig(0, unset=True)
case("unset-initialization", "Request and limit known to be unset: both initialized with currentUnset, traced as initialize unset setting.", unset, None,
     {f"{M}.recommendations.0.currentUnset": True, f"{M}.recommendations.1.currentUnset": True,
      f"{M}.recommendations.0.suggestedValue": REQ_MEM, f"{M}.decisionTrace.settings.0.steps.2.rule": "initialize unset setting"})

def oom(limit, **kw):
    k = {"id": "pod-1/app/1", "podUID": "pod-1", "workloadUID": "uid", "release": "A", "timestamp": T0 + 30*MIN}
    if limit: k["memoryLimitBytes"] = limit
    k.update(kw)
    return k

case("oom-known-limit", "OOM at a 512 MiB limit: floor 768 MiB beats the 120 MiB baseline; notice oom-kill-detected.",
     lambda i, c: c.update(oomKills=[oom(512*MIB), oom(512*MIB)]), None,
     {f"{M}.notices": ["oom-kill-detected"], f"{M}.oomAdjustment.oomRequestFloorBytes": 768*MIB,
      f"{M}.oomAdjustment.baselineRequestBytes": REQ_MEM, f"{M}.recommendations.0.suggestedValue": 768*MIB,
      f"{M}.recommendations.1.suggestedValue": 3*768*MIB, f"{M}.dataQuality.reasons": []})

case("oom-current-limit-fallback", "Timestamp-only OOM: the current 512 MiB limit is the base (floor 768 MiB), unknown-oom-memory-limit blocks reductions only.",
     lambda i, c: c.update(oomKills=[oom(0)]), None,
     {f"{M}.oomAdjustment.oomRequestFloorBytes": 768*MIB, f"{M}.oomAdjustment.usedCurrentFallback": True,
      f"{M}.dataQuality.reasons": ["unknown-oom-memory-limit"], f"{M}.recommendations.0.suggestedValue": 768*MIB})

def oom_req(i, c):
    c["oomKills"] = [oom(0)]
    c["memory"]["currentLimit"] = {"available": False}
    c["memory"]["currentRequest"]["value"] = 400*MIB
case("oom-request-fallback", "Timestamp-only OOM without a known limit: the 400 MiB request is the base (floor 600 MiB).", oom_req, None,
     {f"{M}.oomAdjustment.oomRequestFloorBytes": 600*MIB, f"{M}.oomAdjustment.usedCurrentFallback": True,
      f"{M}.recommendations.0.suggestedValue": 600*MIB})

def oom_usage(i, c):
    c["oomKills"] = [oom(0)]
    c["memory"]["currentRequest"] = sig(0, unset=True)
    c["memory"]["currentLimit"] = sig(0, unset=True)
case("oom-usage-fallback", "Timestamp-only OOM with unset settings: usage × headroom is the base (floor 180 MiB); the limit is not introduced because the OOM limit is unknown.", oom_usage, None,
     {f"{M}.oomAdjustment.usedUsageFallback": True, f"{M}.oomAdjustment.oomRequestFloorBytes": REQ_MEM * 3 // 2,
      f"{M}.recommendations.0.suggestedValue": REQ_MEM * 3 // 2, f"{M}.decisionTrace.settings.1.reasons": ["unknown-oom-memory-limit"]})

def oom_only(i, c):
    c["oomKills"] = [oom(512*MIB)]
    c["memory"]["series"] = []
case("oom-only-growth", "No memory samples but a current-release OOM at 512 MiB: memory grows to 768 MiB with confidence 0 and a partial status.", oom_only, None,
     {f"{M}.recommendations.0.suggestedValue": 768*MIB, f"{M}.recommendations.0.confidence": 0,
      f"{M}.dataQuality.status": "partial", f"{M}.dataQuality.reasons.0": "missing-usage",
      f"{M}.decisionTrace.source.method": "OOM kill", f"{M}.decisionTrace.settings.0.steps.0.rule": "OOM sizing without usage history"})

def oom_other(i, c):
    c["oomKills"] = [oom(512*MIB, release="B", id="b"), oom(512*MIB, timestamp=T0 - 1, id="early")]
case("oom-outside-selection", "OOMs from another release or before the window are not selected: no notice, usage-based sizing.", oom_other, None,
     {f"{M}.recommendations.0.suggestedValue": REQ_MEM, f"{M}.dataQuality.reasons": []})

def fallback(i, c):
    start = EVAL
    i["evaluationTime"] = EVAL + 5*MIN
    c["target"]["release"] = "B"
    c["identity"].update(release="B", releaseStartedAt=start, timestamp=EVAL + 5*MIN)
    c["inventory"]["timestamp"] = EVAL + 5*MIN
    for r in ("cpu", "memory"):
        v = c[r]["series"][0]["samples"][0]["value"]
        prev = c[r]["series"]
        c[r]["series"] = [series("pod-b", minutes(range(60, 66), v * 2), release="B")]
        for s in ("currentRequest", "currentLimit"):
            c[r][s]["timestamp"] = EVAL + 5*MIN
    c["previousReleases"] = [
        {"release": "B", "evaluationTime": EVAL, "cpu": [], "memory": []},
        {"release": "Z", "evaluationTime": EVAL, "cpu": [], "memory": []},
        {"release": "A", "releaseStartedAt": T0, "evaluationTime": EVAL,
         "cpu": [series("pod-1", minutes(range(61), 50))], "memory": [series("pod-1", minutes(range(61), 100*MIB))]}]
case("previous-release-fallback", "Release B has 5 minutes of data; the skipped duplicate B, the empty Z (missing-usage) and then A are tried; A supplies the usage.", fallback, None,
     {f"{M}.notices": ["previous-release-usage"], f"{M}.rolloutFallback.release": "A",
      f"{M}.rolloutFallback.currentDataQuality.status": "unavailable",
      f"{M}.rolloutFallback.currentDataQuality.reasons": ["insufficient-history", "insufficient-samples"],
      f"{M}.decisionTrace.fallbacks": [{"release": "Z", "selected": False, "reasons": ["missing-usage"]}, {"release": "A", "selected": True}],
      f"{M}.recommendations.0.suggestedValue": REQ_MEM, f"{M}.decisionTrace.source.release": "A"})

def counters(i, c):
    samples, total = [], 0.0
    for m in range(61):
        if m == 30: total = 0.0
        else: total += 0.06 * 5 if m else 0
        samples.append({"timestamp": T0 + m*MIN, "value": round(total, 6)})
    c["cpu"]["series"] = [series("pod-1", samples, kind="cpu-counter-seconds")]
case("counter-resets", "CPU counter at 5 m with a reset at minute 30: 60 rates, the reset interval rate is the post-reset value (0 m).", counters,
     {"cpu": {"strategy": "max"}},
     {f"{C}.dataQuality.sampleCount": 60, f"{C}.decisionTrace.source.method": "maximum"})

def dups(i, c):
    s = c["memory"]["series"][0]["samples"]
    c["memory"]["series"][0]["samples"] = list(reversed(s + s[:10]))
case("duplicate-samples", "Repeated equal samples (and reversed order) count once: sampleCount 61.", dups, None,
     {f"{M}.dataQuality.sampleCount": 61, f"{M}.dataQuality.observationCount": 61, f"{M}.recommendations.0.suggestedValue": REQ_MEM})

def pct(i, c):
    c["cpu"]["series"] = [series("pod-1", [{"timestamp": T0 + m*MIN, "value": m} for m in range(61)])]
case("percentile-vs-max-percentile", "CPU values 0..60: p50 picks 30 (0-based rank ⌈30.5⌉−1) at minute 30.", pct,
     {"cpu": {"percentile": 50}},
     {f"{C}.evidence.aggregatedUsage.value": 30, f"{C}.evidence.aggregatedUsage.timestamp": T0 + 30*MIN,
      f"{C}.decisionTrace.source.percentile": 50})
case("percentile-vs-max-max", "Same data with cpu.strategy max picks 60 at minute 60.", pct,
     {"cpu": {"strategy": "max"}},
     {f"{C}.evidence.aggregatedUsage.value": 60, f"{C}.decisionTrace.source.method": "maximum"})

def replicas(i, c):
    c["inventory"].update(eligible=2, observed=2)
    c["cpu"]["series"].append(series("pod-2", minutes(range(61), 200)))
    c["memory"]["series"].append(series("pod-2", minutes(range(61), 50*MIB)))
case("busy-replica-wins", "Two replicas: the busy one (200 m) sizes CPU; replicas are never summed.", replicas, None,
     {f"{C}.evidence.aggregatedUsage.value": 200, f"{C}.decisionTrace.source.seriesID": "pod-2",
      f"{M}.evidence.aggregatedUsage.value": 100*MIB, f"{C}.dataQuality.sampleCount": 122, f"{C}.dataQuality.observationCount": 61})

def two(i, c):
    other = copy.deepcopy(c)
    other["target"]["name"] = "aaa"
    i["containers"].append(other)
case("container-order", "Containers are sorted by target key (aaa before api), memory before cpu.", two, None,
     {"results.0.target.name": "aaa", "results.0.resource": "memory", "results.1.resource": "cpu", "results.2.target.name": "api"})

def conflict(i, c):
    c["cpu"]["series"][0]["samples"].append({"timestamp": T0 + MIN, "value": 99})
case("error-conflicting-samples", "Two values at one timestamp: an input error naming the series and the contract text.", conflict, None,
     {"error": "invalid input: containers[0].cpu.series[0]: api cpu: conflicting samples at one source timestamp 1800000060000"})

case("error-schema-v1", "A v1 document is rejected with the contract's schema message.",
     lambda i, c: i.update(schemaVersion="resource-analysis-input/v1"), None,
     {"error": "invalid input: unsupported input schema version \"resource-analysis-input/v1\" (expected \"resource-analysis-input/v2\")"})

case("error-duplicate-target", "The same logical container twice is rejected.",
     lambda i, c: i["containers"].append(copy.deepcopy(c)), None,
     {"error": "invalid input: containers[1]: duplicate logical container target \"shop\\x00Deployment\\x00api\\x00app\""})

root = sys.argv[1]
readme = ["# Analysis golden cases", "",
          "Each directory holds `input.json`, optional `policy.json` (omitted = defaults), the engine's",
          "`output.json` and `expect.json`: key facts (dotted paths, `results.0` = memory, `results.1` = cpu)",
          "derived by hand from `shared/spec/analysis-contract.md`. The runner",
          "(`tests/it/analysis_golden.rs`) checks both; `KERF_BLESS=1` rewrites `output.json` only,",
          "so a wrong blessed output still fails on its facts. Generated by `gen.py` in this folder.", "",
          "| case | probes |", "| --- | --- |"]
for name, (probes, inp, policy, expect) in cases.items():
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    json.dump(inp, open(os.path.join(d, "input.json"), "w"), indent=2)
    if policy is not None:
        json.dump(policy, open(os.path.join(d, "policy.json"), "w"), indent=2)
    elif os.path.exists(os.path.join(d, "policy.json")):
        os.remove(os.path.join(d, "policy.json"))
    json.dump(expect, open(os.path.join(d, "expect.json"), "w"), indent=2)
    readme.append(f"| `{name}` | {probes} |")
readme += ["", "Leak-detection cases (`memoryLeak` statuses) are added by the leak detector's owner."]
open(os.path.join(root, "README.md"), "w").write("\n".join(readme) + "\n")
print(len(cases), "cases")

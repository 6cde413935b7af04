#!/usr/bin/env python3
"""Regenerates input.json and policy.json of every analysis-leak golden case.

Deterministic, standard library only: `python3 gen.py` from this folder.
expect.json files are written by hand (see README.md); this script never touches them.
"""
import json
import os

MIB = 1024 * 1024
MIN = 60_000
HOUR = 60 * MIN
T0 = 1_800_000_000_000          # window start and release start of most containers
EVAL = T0 + 24 * HOUR           # evaluation time: one day later
HERE = os.path.dirname(os.path.abspath(__file__))


def gc_peaks(minute):
    """0-90 MiB sawtooth repeating every 10 minutes (GC-reclaimable peaks)."""
    return (minute % 10) * 10 * MIB


def leaking(minute):
    """Lower baseline grows 20 MiB/h from 200 MiB, GC peaks on top."""
    return 200 * MIB + round(20 * MIB * minute / 60) + gc_peaks(minute)


def flat(minute):
    """Flat 300 MiB baseline with the same GC peaks."""
    return 300 * MIB + gc_peaks(minute)


def plateau(minute):
    """Grows like `leaking` for 17 hours, then stays flat (a filled cache)."""
    return leaking(min(minute, 17 * 60))


def series(sid, pod, start, end, value, release="A", restart_at=None):
    """One sample a minute in [start, end]; `value` gets minutes since the lifetime start."""
    samples = []
    t, born = start, start
    while t <= end:
        if restart_at is not None and born < restart_at < t:
            born = t
        samples.append({"timestamp": t, "value": value((t - born) // MIN)})
        t += MIN
    return {"id": sid, "podUID": pod, "workloadUID": "uid-" + sid.split("-")[0],
            "release": release, "kind": "gauge", "samples": samples}


def signal(value):
    return {"available": True, "timestamp": EVAL, "value": value}


def container(name, memory_series, oom_kills=(), release_start=T0, ambiguous=False, pods=None):
    uid = memory_series[0]["workloadUID"]
    cpu = [dict(s, samples=[{"timestamp": x["timestamp"], "value": 100} for x in s["samples"]])
           for s in memory_series]
    pods = pods if pods is not None else len(memory_series)
    c = {
        "target": {"namespace": "shop", "kind": "Deployment", "name": name, "container": "app",
                   "workloadUID": uid, "release": "A"},
        "identity": {"available": True, "workloadUID": uid, "release": "A", "timestamp": EVAL,
                     "releaseStartedAt": release_start, "ambiguous": ambiguous},
        "inventory": {"available": True, "timestamp": EVAL, "eligible": pods, "observed": pods,
                      "excluded": 0},
        "cpu": {"series": cpu, "currentRequest": signal(250), "currentLimit": signal(1000)},
        "memory": {"series": memory_series, "currentRequest": signal(512 * MIB),
                   "currentLimit": signal(1024 * MIB)},
    }
    if oom_kills:
        c["oomKills"] = list(oom_kills)
    return c


def write_case(case, containers, policy):
    folder = os.path.join(HERE, case)
    os.makedirs(folder, exist_ok=True)
    doc = {"schemaVersion": "resource-analysis-input/v2", "evaluationTime": EVAL,
           "windowStart": T0, "containers": containers}
    with open(os.path.join(folder, "input.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    with open(os.path.join(folder, "policy.json"), "w") as f:
        json.dump(policy, f, indent=2)
        f.write("\n")


LEAK_ON = {"memory": {"leakDetection": {}}}


def main():
    write_case("linear-growth", [
        container("api", [series("api-0", "api-pod-0", T0, EVAL, leaking)]),
    ], LEAK_ON)

    write_case("flat-and-plateau", [
        container("web", [series("web-0", "web-pod-0", T0, EVAL, flat),
                          series("web-1", "web-pod-1", T0, EVAL, plateau)]),
    ], LEAK_ON)

    oom_at = T0 + 12 * HOUR + 30_000
    write_case("oom-split-and-stale", [
        container("worker", [
            series("worker-0", "worker-pod-0", T0, EVAL, leaking, restart_at=oom_at),
            series("worker-1", "worker-pod-1", T0, EVAL - 2 * HOUR, flat),
        ], oom_kills=[{"id": "oom-1", "podUID": "worker-pod-0", "workloadUID": "uid-worker",
                       "release": "A", "timestamp": oom_at,
                       "memoryLimitBytes": 1024 * MIB}], pods=1),
    ], LEAK_ON)

    young = EVAL - 4 * HOUR
    write_case("young-and-ambiguous", [
        container("young", [series("young-0", "young-pod-0", young, EVAL, leaking)],
                  release_start=young),
        container("zambiguous", [series("zambiguous-0", "zambiguous-pod-0", T0, EVAL, leaking)],
                  ambiguous=True),
    ], {"memory": {"leakDetection": {}}, "evidence": {"minimumHistorySeconds": 600}})


if __name__ == "__main__":
    main()

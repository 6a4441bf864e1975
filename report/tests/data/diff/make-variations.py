#!/usr/bin/env python3
"""Edited copies of a recorded run for the diff tests (see README.md).
Run from this folder: python3 make-variations.py

Each copy changes one thing of ../runs/pure-v2-6.1-oom-throttled-io.json
(recorded on a quiet machine: nothing else ran) and leaves the rest as
recorded. The `stepmon.summary` / `stepmon.verdicts` copies inside are not
updated: stepmon-report recomputes both from the samples.
"""

import copy
import datetime
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "runs", "pure-v2-6.1-oom-throttled-io.json")


def write(name, value):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")


def parse(ts):
    head, frac = ts.rstrip("Z").split(".")
    t = datetime.datetime.fromisoformat(head).replace(tzinfo=datetime.UTC)
    return t + datetime.timedelta(microseconds=int(frac[:6].ljust(6, "0")))


def cpu_plus_50(run):
    """Every CPU-time counter of every sample × 1.5 (the step did 50 % more
    CPU work in the same wall time)."""
    run = copy.deepcopy(run)
    for sample in run["resourceUsage"]["samples"]:
        cpu = sample["cpuStat"]
        for key in ("usageNanos", "userNanos", "systemNanos"):
            cpu[key] = cpu[key] * 3 // 2
    return run


def stretch(ts, start, factor):
    t = start + (parse(ts) - start) * factor
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def wall_plus_30(run):
    """The same work 30 % slower: the end and every sample's timestamp (step
    and machine samples) moved away from the start by × 1.3; counters as
    recorded."""
    run = copy.deepcopy(run)
    info = run["stepmon"]
    start = parse(info["start"])
    info["summary"]["wallSeconds"] *= 1.3
    info["end"] = stretch(info["end"], start, 1.3)
    for sample in run["resourceUsage"]["samples"] + run["sysUsage"]:
        sample["timestamp"] = stretch(sample["timestamp"], start, 1.3)
    return run


def busy(run):
    """Other work ran on the machine during the step: 15 s more user time in
    the per-step /proc/stat delta (`sysCPUStat`), so others used ≈54 % of
    all CPU time."""
    run = copy.deepcopy(run)
    run["resourceUsage"]["sysCPUStat"]["user"] += 15.0
    return run


def no_memory(run):
    """The memory controller was not enabled for the step: no memoryStat,
    no stepmon memory fields."""
    run = copy.deepcopy(run)
    for sample in run["resourceUsage"]["samples"]:
        sample.pop("memoryStat", None)
        ext = sample["stepmon"]
        for key in ("memoryCurrent", "memorySwapPeak", "memoryEvents", "memoryMax", "memoryHigh"):
            ext[key] = None
    info = run["stepmon"]
    info["controllers"] = [c for c in info["controllers"] if c != "memory"]
    info["controllersNotEnabled"] = [{"controller": "memory", "reason": "edited copy: memory controller removed"}]
    return run


def main():
    with open(SOURCE) as f:
        run = json.load(f)
    write("pure-v2-cpu-plus-50.json", cpu_plus_50(run))
    write("pure-v2-wall-plus-30.json", wall_plus_30(run))
    write("pure-v2-wall-plus-30-busy.json", busy(wall_plus_30(run)))
    write("pure-v2-no-memory.json", no_memory(run))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the BuildKit provenance fixtures of this folder from the recorded
stepmon runs in ../runs (see README.md). Run from this folder:

    python3 make-fixtures.py

Only the assembly is constructed: every sample value comes from a recorded
run, with stepmon's additions (`stepmon` keys) removed and stepmon's start
sample (taken at t = 0, all counters 0) dropped, since BuildKit takes none.
"""

import copy
import datetime
import hashlib
import json
import os

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runs")
HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    with open(os.path.join(RUNS, name)) as f:
        return json.load(f)


def strip_stepmon(value):
    """BuildKit's shape: no `stepmon` key anywhere."""
    if isinstance(value, dict):
        return {k: strip_stepmon(v) for k, v in value.items() if k != "stepmon"}
    if isinstance(value, list):
        return [strip_stepmon(v) for v in value]
    return value


def buildkit_usage(run):
    """`resourceUsage` as BuildKit writes it: no start sample, and no
    `kernel`/`vmalloc` in memoryStat (declared in BuildKit's MemoryStat but
    never filled: https://github.com/moby/buildkit/blob/master/executor/resources/memory.go
    sets neither)."""
    usage = strip_stepmon(run["resourceUsage"])
    for sample in usage["samples"]:
        for key in ("kernel", "vmalloc"):
            sample.get("memoryStat", {}).pop(key, None)
    start = run["stepmon"]["start"]
    samples = usage["samples"]
    first = samples[0]
    # stepmon's start sample: taken at the step's start, every counter 0.
    assert first["cpuStat"]["usageNanos"] == 0, "start sample expected"
    assert first["timestamp"][:19] == start[:19]
    usage["samples"] = samples[1:]
    return usage


def sys_usage(*runs):
    out = []
    for run in runs:
        out.extend(strip_stepmon(run["sysUsage"]))
    return sorted(out, key=lambda s: s["timestamp"])


def with_offset(ts, hours):
    """The same instant written with a local UTC offset, as Go's time.Time
    marshals it on a daemon whose zone is not UTC."""
    head, frac = ts.rstrip("Z").split(".") if "." in ts else (ts.rstrip("Z"), "")
    t = datetime.datetime.fromisoformat(head) + datetime.timedelta(hours=hours)
    sign = "+" if hours >= 0 else "-"
    frac = f".{frac}" if frac else ""
    return f"{t.isoformat()}{frac}{sign}{abs(hours):02d}:00"


def offset_timestamps(value, hours):
    if isinstance(value, dict):
        return {k: (with_offset(v, hours) if k == "timestamp" else offset_timestamps(v, hours)) for k, v in value.items()}
    if isinstance(value, list):
        return [offset_timestamps(v, hours) for v in value]
    return value


PLATFORM = {"Architecture": "amd64", "OS": "linux"}
ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]


def exec_op(args, platform=PLATFORM):
    # solver/pb/json.go: the oneof is wrapped as {"Op": {"exec": ...}}.
    return {
        "Op": {
            "exec": {
                "meta": {"args": args, "env": ENV, "cwd": "/"},
                "mounts": [{"dest": "/", "output": 0}, {"input": 1, "dest": "/guest", "readonly": True}],
            }
        },
        "platform": platform,
        "constraints": {},
    }


def source_op(identifier, platform=PLATFORM):
    return {"Op": {"source": {"identifier": identifier}}, "platform": platform, "constraints": {}}


def file_op():
    return {
        "Op": {
            "file": {
                "actions": [
                    {"Action": {"copy": {"src": "/tmp/capture", "dest": "/out", "mode": -1}}, "input": 0, "secondaryInput": -1, "output": 0}
                ]
            }
        },
        "platform": PLATFORM,
        "constraints": {},
    }


def digest_of(step):
    # Stand-in for the LLB op digest (sha256 of the marshalled op): the real
    # digest is of the protobuf bytes, which these fixtures do not have.
    return "sha256:" + hashlib.sha256(json.dumps(step["op"], sort_keys=True).encode()).hexdigest()


def build_config(steps):
    return {"llbDefinition": steps, "digestMapping": {digest_of(s): s["id"] for s in steps}}


def steps_main(pure, cpu3):
    capture = pure["stepmon"]["command"]
    python = cpu3["stepmon"]["command"]
    steps = [
        {"id": "step0", "op": source_op("docker-image://docker.io/library/debian:bookworm")},
        {"id": "step1", "op": source_op("local://context")},
        # Ran: its usage is the pure-v2 run (OOM kill of a child, cpu.max throttling, IO).
        {"id": "step2", "op": exec_op(capture), "inputs": ["step0:0", "step1:0"], "resourceUsage": buildkit_usage(pure)},
        # Ran: the 3 s CPU spinner (only BuildKit's final sample: it had no periodic one).
        {"id": "step3", "op": exec_op(python), "inputs": ["step2:0", "step1:0"], "resourceUsage": buildkit_usage(cpu3)},
        # Cached: BuildKit records no resourceUsage.
        {"id": "step4", "op": exec_op(["/bin/sh", "-c", "make install"]), "inputs": ["step3:0", "step1:0"]},
        # The container never started: an empty Samples object.
        {"id": "step5", "op": exec_op(["/bin/sh", "-c", "./never-started"]), "inputs": ["step4:0", "step1:0"], "resourceUsage": {}},
        {"id": "step6", "op": file_op(), "inputs": ["step5:0"]},
        # The final vertex: no op, one input.
        {"id": "step7", "op": {"Op": {}}, "inputs": ["step6:0"]},
    ]
    return steps


def slsa1_predicate(steps, sys):
    return {
        "buildDefinition": {
            "buildType": "https://github.com/moby/buildkit/blob/master/docs/attestations/slsa-definitions.md",
            "externalParameters": {
                "configSource": {"path": "Dockerfile"},
                "request": {"frontend": "dockerfile.v0", "args": {}, "locals": [{"name": "context"}, {"name": "dockerfile"}]},
            },
            "internalParameters": {"buildConfig": build_config(steps), "builderPlatform": "linux/amd64"},
            "resolvedDependencies": [
                {"uri": "pkg:docker/debian@bookworm?platform=linux%2Famd64", "digest": {"sha256": "0" * 64}}
            ],
        },
        "runDetails": {
            "builder": {"id": ""},
            "metadata": {
                "invocationID": "fixture0invocation0id",
                "startedOn": sys[0]["timestamp"],
                "finishedOn": sys[-1]["timestamp"],
                "buildkit_metadata": {"sysUsage": sys},
                "buildkit_completeness": {"request": True, "resolvedDependencies": False},
            },
        },
    }


def slsa02_predicate(steps, sys):
    return {
        "builder": {"id": ""},
        "buildType": "https://mobyproject.org/buildkit@v1",
        "materials": [{"uri": "pkg:docker/debian@bookworm?platform=linux%2Famd64", "digest": {"sha256": "0" * 64}}],
        "invocation": {
            "configSource": {"entryPoint": "Dockerfile"},
            "parameters": {"frontend": "dockerfile.v0", "locals": [{"name": "context"}, {"name": "dockerfile"}]},
            "environment": {"platform": "linux/amd64"},
        },
        "buildConfig": build_config(steps),
        "metadata": {
            "buildInvocationID": "fixture0invocation0id",
            "buildStartedOn": sys[0]["timestamp"],
            "buildFinishedOn": sys[-1]["timestamp"],
            "completeness": {"parameters": True, "environment": True, "materials": False},
            "reproducible": False,
            "https://mobyproject.org/buildkit@v1#metadata": {"sysUsage": sys},
        },
    }


def statement(predicate_type, predicate):
    return {
        "_type": "https://in-toto.io/Statement/v0.1",
        "predicateType": predicate_type,
        "subject": [{"name": "pkg:docker/stepmon/fixture@latest?platform=linux%2Famd64", "digest": {"sha256": "1" * 64}}],
        "predicate": predicate,
    }


def write(name, value):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")


def main():
    pure = load("pure-v2-6.1-oom-throttled-io.json")
    cpu3 = load("hybrid-cpu-3s.json")
    net = load("hybrid-net-isolated.json")

    steps = steps_main(pure, cpu3)
    sys = sys_usage(pure, cpu3)
    write("slsa1-statement.json", statement("https://slsa.dev/provenance/v1", slsa1_predicate(steps, sys)))
    # What `docker buildx history inspect attachment --type provenance` prints: the bare predicate.
    write("slsa1-predicate.json", slsa1_predicate(steps, sys))

    # SLSA v0.2, timestamps with the daemon's local offset (+01:00), plus the network step.
    steps02 = copy.deepcopy(steps)
    net_step = {
        "id": "step8",
        "op": exec_op(net["stepmon"]["command"]),
        "inputs": ["step3:0", "step1:0"],
        "resourceUsage": buildkit_usage(net),
    }
    steps02.insert(7, net_step)
    sys02 = sys_usage(pure, cpu3, net)
    predicate02 = offset_timestamps(slsa02_predicate(steps02, sys02), 1)
    write("slsa02-statement.json", statement("https://slsa.dev/provenance/v0.2", predicate02))

    # buildx --metadata-file with BUILDX_METADATA_PROVENANCE=max, two platforms:
    # buildx converts to v0.2 and decodes the base64 into a JSON object.
    arm = {"Architecture": "arm64", "OS": "linux"}
    amd_steps = [steps[0], steps[1], steps[2], {"id": "step3", "op": {"Op": {}}, "inputs": ["step2:0"]}]
    arm_steps = [
        {"id": "step0", "op": source_op("docker-image://docker.io/library/debian:bookworm", arm)},
        {"id": "step1", "op": source_op("local://context", arm)},
        {"id": "step2", "op": exec_op(cpu3["stepmon"]["command"], arm), "inputs": ["step0:0", "step1:0"], "resourceUsage": buildkit_usage(cpu3)},
        {"id": "step3", "op": {"Op": {}}, "inputs": ["step2:0"]},
    ]
    metadata = {
        "buildx.build.ref": "default/default/fixture0ref",
        "containerimage.digest": "sha256:" + "2" * 64,
        "image.name": "docker.io/stepmon/fixture:latest",
        "buildx.build.provenance/linux/amd64": slsa02_predicate(amd_steps, sys_usage(pure, cpu3)),
        "buildx.build.provenance/linux/arm64": slsa02_predicate(arm_steps, sys_usage(pure, cpu3)),
    }
    write("buildx-metadata.json", metadata)


if __name__ == "__main__":
    main()

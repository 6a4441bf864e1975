#!/usr/bin/env python3
"""Whole commands timed side by side: each round runs every command once, in
turn, so that a drift of the machine's speed reaches all of them alike.

Usage: interleave.py ROUNDS 'label=command args' ... [--warmup N] [--cpu]

Each run is spawned with posix_spawn (no shell unless the command is one)
and timed from the spawn to the reap (perf_counter_ns), its status checked.
A command's leading NAME=VALUE words are set in its environment, as a
shell would (`'rec=STEPMON_JOB=/tmp/j.jsonl stepmon wrap true'`).
Prints, per label, the median, the quartiles and the extremes of the wall
time in milliseconds, and the median's difference to the first label's;
with --cpu, the same of its CPU time (user + system of the command and
everything it waited for: wait4's rusage).
"""

import os
import shlex
import statistics
import sys
import time


def run_once(argv: list[str], env: dict[str, str]) -> tuple[int, float]:
    """Nanoseconds from spawn to reap, and CPU seconds; a command that fails
    ends the run."""
    start = time.perf_counter_ns()
    pid = os.posix_spawnp(argv[0], argv, env)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter_ns() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"interleave: {shlex.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return elapsed, usage.ru_utime + usage.ru_stime


def split_env(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """The environment with a command's leading NAME=VALUE words, and the rest."""
    env = dict(os.environ)
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        name, value = words[0].split("=", 1)
        env[name] = value
        words = words[1:]
    return env, words


def table(rounds: dict[str, list[float]], labels: list[str], unit: str) -> None:
    first = statistics.median(rounds[labels[0]])
    print(f"| command | median {unit} | quartiles {unit} | min–max {unit} | vs first |")
    print("|---|---:|---:|---:|---:|")
    for label in labels:
        samples = rounds[label]
        low, _, high = statistics.quantiles(samples, n=4)
        median = statistics.median(samples)
        print(
            f"| {label} | {median:.3f} | {low:.3f}–{high:.3f} | "
            f"{min(samples):.3f}–{max(samples):.3f} | {median - first:+.3f} |",
        )


def main() -> None:
    args = sys.argv[1:]
    warmup = 5
    if "--warmup" in args:
        at = args.index("--warmup")
        warmup = int(args[at + 1])
        del args[at : at + 2]
    cpu = "--cpu" in args
    if cpu:
        args.remove("--cpu")
    if len(args) < 2 or not args[0].isdigit():
        sys.exit(__doc__)
    rounds = int(args[0])
    commands = []
    for spec in args[1:]:
        label, sep, command = spec.partition("=")
        if not sep or not command:
            sys.exit(f"interleave: {spec!r} is not 'label=command'")
        env, argv = split_env(shlex.split(command))
        commands.append((label, env, argv))
    times: dict[str, list[float]] = {label: [] for label, _, _ in commands}
    cpus: dict[str, list[float]] = {label: [] for label, _, _ in commands}
    for index in range(warmup + rounds):
        for label, env, argv in commands:
            elapsed, cpu_seconds = run_once(argv, env)
            if index >= warmup:
                times[label].append(elapsed / 1e6)
                cpus[label].append(cpu_seconds * 1e3)
    labels = [label for label, _, _ in commands]
    print(f"{rounds} rounds, {warmup} warm-up, load {os.getloadavg()[0]:.2f}")
    print("\nWall time:\n")
    table(times, labels, "ms")
    if cpu:
        print("\nCPU time:\n")
        table(cpus, labels, "ms")


if __name__ == "__main__":
    main()

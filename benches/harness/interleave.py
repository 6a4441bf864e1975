#!/usr/bin/env python3
"""Whole commands timed side by side: each round runs every command once, in
turn, so that a drift of the machine's speed reaches all of them alike.

Usage: interleave.py ROUNDS 'label=command args' ... [--warmup N]

Each run is spawned with posix_spawn (no shell unless the command is one)
and timed from the spawn to the reap (perf_counter_ns), its status checked.
Prints, per label, the median, the quartiles and the extremes of the wall
time in milliseconds, and the median's difference to the first label's.
"""

import os
import shlex
import statistics
import sys
import time


def run_once(argv: list[str]) -> int:
    """Nanoseconds from spawn to reap; a command that fails ends the run."""
    start = time.perf_counter_ns()
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter_ns() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"interleave: {shlex.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return elapsed


def main() -> None:
    args = sys.argv[1:]
    warmup = 5
    if "--warmup" in args:
        at = args.index("--warmup")
        warmup = int(args[at + 1])
        del args[at : at + 2]
    if len(args) < 2 or not args[0].isdigit():
        sys.exit(__doc__)
    rounds = int(args[0])
    commands = []
    for spec in args[1:]:
        label, sep, command = spec.partition("=")
        if not sep or not command:
            sys.exit(f"interleave: {spec!r} is not 'label=command'")
        commands.append((label, shlex.split(command)))
    times: dict[str, list[float]] = {label: [] for label, _ in commands}
    for index in range(warmup + rounds):
        for label, argv in commands:
            elapsed = run_once(argv)
            if index >= warmup:
                times[label].append(elapsed / 1e6)
    first = statistics.median(times[commands[0][0]])
    print(f"{rounds} rounds, {warmup} warm-up, load {os.getloadavg()[0]:.2f}")
    print("| command | median ms | quartiles ms | min–max ms | vs first |")
    print("|---|---:|---:|---:|---:|")
    for label, _ in commands:
        samples = times[label]
        low, _, high = statistics.quantiles(samples, n=4)
        median = statistics.median(samples)
        print(
            f"| {label} | {median:.3f} | {low:.3f}–{high:.3f} | "
            f"{min(samples):.3f}–{max(samples):.3f} | {median - first:+.3f} |",
        )


if __name__ == "__main__":
    main()

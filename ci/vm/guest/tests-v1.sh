# shellcheck shell=sh disable=SC2016 # jq and sh programs in single quotes
# The cgroup v1-only boot's tests, sourced by /init (busybox sh;
# pass/fail/finish come from there), which mounted the v1 hierarchies and
# no cgroup2. stepmon creates a cgroup of the step's own in each v1
# hierarchy it measures with (memory, pids, cpu,cpuacct, blkio), below its
# own, and labels what it read from them `cgroupV1`. The test binaries do
# not run here (most of them test cgroup v2 paths and would skip); this
# boot runs
#  1. `stepmon doctor --json`: the layout is `v1-only`;
#  2. the `stepmon run` workloads of workloads.sh, checked against what v1
#     counts, plus a fork loop under --pids-max 4, and stepmon ended by
#     SIGTERM and by SIGKILL (then `stepmon gc`) during a step;
# and at the end no cgroup may be left in any v1 hierarchy.

# shellcheck source=checks.sh
. /guest/checks.sh
# shellcheck source=workloads.sh
. /guest/workloads.sh

# Cgroup v1 has no pressure files (they are cgroup2's). Its block IO
# counters (blkio.throttle.io_service_bytes_recursive, io_serviced_recursive)
# stay 0 on this kernel unless the cgroup has a throttle rule on the device,
# which stepmon never sets: measured here, 32 MiB written with O_DIRECT in a
# v1 cgroup count 0 bytes and 0 IOs without a rule, 33554432 bytes and 32
# IOs with a write_bps_device rule of 1 TiB/s. The step's IO comes from its
# process tree then (task IO accounting), labelled so.
STEP_PSI=0
STEP_IO=0

# The hierarchies a step gets a cgroup of its own in, as their controller
# lists appear in /proc/PID/cgroup.
# (No blkio: its counters count only devices with a throttle rule, which
# stepmon never sets; the step's IO comes from its process tree.)
STEP_HIERARCHIES="memory pids cpu,cpuacct"

# The checks every step of the v1-only boot gets: the layout, each group's
# source, and a reason for every absent field.
step_checks() {
    check "$1" '.stepmon.host.cgroupLayout' '== "v1-only"'
    for group in cpu memory pids; do
        check "$1" ".stepmon.sources.$group.rung" '== "cgroupV1"'
    done
    check "$1" '.stepmon.sources.io.rung' '== "processTree"'
    # No cgroup's pressure exists in v1: at most the machine's, said so.
    check "$1" '.stepmon.sources.pressure.rung // "notMeasured"' '| IN("machine", "notMeasured")'
    # The step shares the guest's network namespace.
    check "$1" '.stepmon.sources.network.rung // "notMeasured"' '== "notMeasured"'
    check "$1" '[.resourceUsage.samples[].stepmon.missing[]? | select((.reason // "") == "")] | length' '== 0'
    check "$1" '.resourceUsage.samples | length' '>= 2'
}

# v1_cgroup PID HIERARCHY: the cgroup of PID (or `self`) in the v1
# hierarchy whose controllers are HIERARCHY (`cpu,cpuacct`).
v1_cgroup() {
    awk -F: -v h="$2" '$2 == h { print $3 }' "/proc/$1/cgroup"
}

# no_leftovers WHEN: passes when no v1 hierarchy has a cgroup below its
# root (init creates none).
no_leftovers() {
    left=$(awk '$3 == "cgroup" { print $2 }' /proc/mounts | while read -r mount; do
        find "$mount" -mindepth 1 -type d
    done | tr '\n' ' ')
    if [ -z "$left" ]; then
        pass "$1: no cgroup left in any v1 hierarchy"
    else
        fail "$1: cgroups left behind: $left"
    fi
}

# started COMMAND_LINE: prints the PID of the process running exactly
# COMMAND_LINE once there is one (10 s at most; busybox has no pgrep here).
started() {
    i=0
    while [ $i -lt 100 ]; do
        for dir in /proc/[0-9]*; do
            if [ "$(tr '\0' ' ' <"$dir/cmdline" 2>/dev/null)" = "$1 " ]; then
                echo "${dir#/proc/}"
                return 0
            fi
        done
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# in_own_cgroups NAME PID: PID is in a cgroup below the test shell's own in
# each of STEP_HIERARCHIES.
in_own_cgroups() {
    for h in $STEP_HIERARCHIES; do
        mine=$(v1_cgroup self "$h")
        its=$(v1_cgroup "$2" "$h")
        case $its in
            "${mine%/}"/?*) pass "$1: the step runs in a $h cgroup of its own, $its" ;;
            *) fail "$1: the step is in the $h cgroup '$its', not in one of its own below '$mine'" ;;
        esac
    done
}

# killed_run NAME SIGNAL N: `stepmon run -- sleep N` in the background (N
# tells the runs apart), checks that the step is in cgroups of its own,
# sends SIGNAL to stepmon after 2 s and waits for it. Sets STEP_PID (empty
# if the step never started) and STEPMON_RC.
killed_run() {
    echo
    echo "==> step $1: stepmon run -o /tmp/$1.json -- sleep $3, SIG$2 to stepmon while it runs"
    stepmon run -o "/tmp/$1.json" -- sleep "$3" >"/tmp/$1.log" 2>&1 &
    stepmon_pid=$!
    if STEP_PID=$(started "sleep $3"); then
        in_own_cgroups "$1" "$STEP_PID"
    else
        fail "$1: the step (sleep $3) did not start within 10 s"
    fi
    sleep 2
    kill "-$2" "$stepmon_pid"
    wait "$stepmon_pid"
    STEPMON_RC=$?
    cat "/tmp/$1.log"
}

# running PID: PID exists and is not a zombie.
running() {
    [ -r "/proc/$1/stat" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# A fork loop that stops at the first failed fork: exit status 3 and the
# error on stderr when one fails, 0 when all 16 succeed. It holds its
# children for 3 s, so that samples see the tasks at the limit.
cat >/tmp/fork-loop.py <<'PY'
import os, sys, time
children = []
status = 0
try:
    for _ in range(16):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children.append(pid)
except OSError as e:
    print(f"fork-loop: fork number {len(children) + 1} failed: {e}", file=sys.stderr)
    status = 3
time.sleep(3)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
sys.exit(status)
PY

v1_workloads() {
    # pids.max 4: python and 3 children; the 4th fork fails with EAGAIN
    # (Documentation/admin-guide/cgroup-v1/pids.rst), counted in
    # pids.events `max`.
    step pidsmax4 3 --pids-max 4 -- python3 /tmp/fork-loop.py
    if grep -q '^fork-loop: fork number 4 failed: \[Errno 11\]' /tmp/pidsmax4.log; then
        pass "pidsmax4: the 4th fork failed with EAGAIN"
    else
        fail "pidsmax4: no 'fork number 4 failed: [Errno 11]' in the step's output"
    fi
    check pidsmax4 "$LAST.stepmon.pidsMax" '== 4'
    check pidsmax4 '.stepmon.summary.pidsPeak' '== 4'
    check pidsmax4 "$LAST.stepmon.pidsEvents.max" '>= 1'
    verify pidsmax4

    # SIGTERM to stepmon: forwarded to the step, which dies of it; stepmon
    # reports it and removes the step's cgroups.
    killed_run sigterm TERM 31
    if [ "$STEPMON_RC" -eq 143 ]; then pass "sigterm: stepmon exited 143"; else fail "sigterm: stepmon exited $STEPMON_RC, expected 143"; fi
    : >/tmp/sigterm.checks
    check sigterm '.stepmon.signal' '== 15'
    check sigterm '.stepmon.sources.memory.rung' '== "cgroupV1"'
    verify sigterm
    no_leftovers "after SIGTERM to stepmon"

    # SIGKILL to stepmon: the step lives on in its cgroups; `stepmon gc`
    # kills it and removes them.
    killed_run sigkill KILL 32
    left=$(for h in $STEP_HIERARCHIES; do [ -n "$STEP_PID" ] && v1_cgroup "$STEP_PID" "$h"; done | grep -v '^/$' | tr '\n' ' ')
    if [ -n "$left" ]; then
        pass "sigkill: the step's cgroups outlive stepmon: $left"
    else
        fail "sigkill: the step is in no cgroup of its own after SIGKILL to stepmon (nothing for gc to collect)"
    fi
    echo "==> stepmon gc"
    stepmon gc >/tmp/gc.log 2>&1
    rc=$?
    cat /tmp/gc.log
    if [ "$rc" -eq 0 ]; then pass "gc: stepmon gc exited 0"; else fail "gc: stepmon gc exited $rc"; fi
    if [ -n "$STEP_PID" ] && running "$STEP_PID"; then
        fail "gc: the step of the killed stepmon (sleep 32, PID $STEP_PID) still runs"
        kill -KILL "$STEP_PID"
    else
        pass "gc: the step of the killed stepmon is gone"
    fi
    no_leftovers "after SIGKILL to stepmon and stepmon gc"
}

echo
echo "==> v1 hierarchies: $(awk '$3 == "cgroup" { printf "%s (%s) ", $2, $4 }' /proc/mounts)"
for h in memory pids blkio cpu,cpuacct; do
    # shellcheck disable=SC2012 # names shown to a reader, not parsed
    echo "guest: files of the $h root: $(ls "/sys/fs/cgroup/$h" | tr '\n' ' ')"
done

echo
echo "==> stepmon doctor --json"
stepmon doctor --json >/tmp/doctor.json
rc=$?
if [ "$rc" -eq 0 ]; then pass "doctor: exited 0"; else fail "doctor: exited $rc"; fi
: >/tmp/doctor.checks
check doctor '.layout' '== "v1-only"'
check doctor '[.controllers.cgroupV1[].controller] | unique' '| contains(["blkio", "cpu", "cpuacct", "memory", "pids"])'
check doctor '[.rungs[] | select(.resource | IN("cpu", "memory", "pids")) | .rung] | unique' '== ["cgroupV1"]'
verify doctor

run_rounds v1_workloads

echo
echo "==> leftovers"
no_leftovers "at the end"

# shellcheck shell=sh disable=SC2016,SC2013 # jq and sh programs in single quotes; test names have no spaces
# The pure cgroup v2 boot's tests, sourced by /init (busybox sh;
# pass/fail/finish come from there). Two parts:
#  1. every test binary in /tests/list (the crates' live tests and unit
#     tests): must exit 0, run at least one test, and never print SKIPPED —
#     on a pure v2 machine with every controller enabled, nothing may be
#     skipped;
#  2. `stepmon run` on workloads with known costs (workloads.sh, shared with
#     the v1-only boot), its JSON checked with jq against the checks below.
# At the end no cgroup or network namespace of a test may be left.

# shellcheck source=checks.sh
. /guest/checks.sh
# shellcheck source=workloads.sh
. /guest/workloads.sh

# The SKIPPED lines of log $1 that are not explained by this kernel. One
# is: Debian's kernel is built without CONFIG_IRQ_TIME_ACCOUNTING, so there
# is no /proc/pressure/irq (nor irq.pressure) to read; that skip is accepted
# only while the file is really absent, and is listed as a NOTE.
unexpected_skips() {
    if [ -e /proc/pressure/irq ]; then
        grep -a SKIPPED "$1"
    else
        grep -a SKIPPED "$1" | grep -v '^SKIPPED /proc/pressure/irq: '
    fi
}

run_test_binaries() {
    for t in $(cat /tests/list); do
        log=/tmp/test.$t.log
        echo
        echo "==> test binary $t"
        # --nocapture: what a test prints (its SKIPPED line, its measured
        # numbers) shows on the console even when it passes.
        # The guest has no compiler: of build_live, the tests of real
        # builds (cargo, make, CMake) stay on the host; the nesting of an
        # action's cgroup in the build's, which pure cgroup v2 decides,
        # runs here.
        only=""
        case $t in
            stepmon.build_live) only="--skip cargo --skip make --skip rustc_wrapper --skip failing_build" ;;
        esac
        # shellcheck disable=SC2086 # $only is meant to split
        timeout 300 "/tests/$t" --nocapture --test-threads=2 $only >"$log" 2>&1
        rc=$?
        cat "$log"
        result=$(grep -a '^test result:' "$log" | tail -n 1)
        passed=$(echo "$result" | sed -n 's/.* \([0-9]*\) passed.*/\1/p')
        ignored=$(echo "$result" | sed -n 's/.* \([0-9]*\) ignored.*/\1/p')
        if [ "$rc" -ne 0 ]; then
            fail "$t: exit status $rc ($result)"
        elif [ -n "$(unexpected_skips "$log")" ]; then
            fail "$t: a test skipped itself inside the pure v2 guest: $(unexpected_skips "$log" | tr '\n' ' ')"
        elif [ -z "$passed" ] || [ "$passed" -eq 0 ]; then
            fail "$t: ran no test ($result)"
        else
            pass "$t: $passed tests passed, ${ignored:-0} ignored"
            grep -a '^SKIPPED /proc/pressure/irq: ' "$log" | sed "s|^|NOTE $t: accepted skip (no CONFIG_IRQ_TIME_ACCOUNTING): |"
            TESTS_PASSED=$((TESTS_PASSED + passed))
        fi
    done
}

# The step's own cgroup has cpu.pressure, memory.pressure and io.pressure,
# and io.stat.
STEP_PSI=1
STEP_IO=1

# The checks every step of the pure v2 boot gets: the full controller
# path, every controller enabled, and nothing missing but what this kernel
# lacks (irq.pressure, memory.swap.peak) and the network (the step shares
# the guest's namespace).
step_checks() {
    check "$1" '.stepmon.host.cgroupLayout' '== "unified"'
    check "$1" '.stepmon.controllers | sort' '== ["cpu", "io", "memory", "pids"]'
    check "$1" '.stepmon.controllersNotEnabled' '== []'
    allowed='"netStat", "stepmon.irqPressure", "stepmon.memorySwapPeak"'
    check "$1" "[.resourceUsage.samples[].stepmon.missing[]?.field | select(IN($allowed) | not)] | unique" '== []'
    check "$1" '.resourceUsage.samples | length' '>= 2'
}

# A container's view: stepmon in a cgroup of its own that holds another
# process (the container's other tasks; every controller enabled there by
# the root), with every cgroup mount bound read-only in a private mount
# namespace. The step gets no cgroup of its own; its CPU and IO come from
# its process tree, memory, pids and stall from the enclosing cgroup,
# labelled so. (busybox unshare has no -C: the namespace keeps the
# host's cgroup paths, as a container without a cgroup namespace does.)
container_step() {
    ctr=/sys/fs/cgroup/container-sim
    mkdir "$ctr"
    sh -c 'echo $$ >/sys/fs/cgroup/container-sim/cgroup.procs; exec sleep 120' &
    other=$!
    name=container64
    echo
    echo "==> step $name: stepmon run inside a read-only cgroupfs, in $ctr with another process"
    sh -c 'echo $$ >/sys/fs/cgroup/container-sim/cgroup.procs
        exec unshare -m --propagation private sh -c "mount --bind /sys/fs/cgroup /sys/fs/cgroup &&
            mount -o remount,bind,ro /sys/fs/cgroup && exec stepmon run -o /tmp/container64.json -- \
            sh -c \"dd if=/dev/zero bs=64M count=1 2>/dev/null | sleep 5; exit 3\""'
    rc=$?
    if [ "$rc" -eq 3 ]; then pass "$name: stepmon exited 3 (the step's status)"; else fail "$name: stepmon exited $rc, expected 3"; fi
    : >"/tmp/$name.checks"
    check $name '.stepmon.placement' '| startswith("no cgroup of its own")'
    check $name '.resourceUsage.samples | length' '== 0'
    check $name '.stepmon.sources.cpu.rung' '== "processTree"'
    check $name '.stepmon.sources.io.rung' '== "processTree"'
    check $name '.stepmon.sources.memory.rung' '== "enclosingCgroup"'
    check $name '.stepmon.sources.pids.rung' '== "enclosingCgroup"'
    check $name '.stepmon.sources.pressure.rung' '== "enclosingCgroup"'
    check $name '.stepmon.enclosingCgroup.cgroup' '== "/sys/fs/cgroup/container-sim"'
    check $name '.stepmon.enclosingCgroup.otherProcessesAtStart' '>= 1'
    check $name '.stepmon.enclosingCgroup.samples | length' '>= 2'
    check $name '.stepmon.summary.memory.peakBytes' ">= 64 * $MIB"
    check $name '.stepmon.summary.pidsPeak' '>= 3'
    check $name '.stepmon.processTree.processesReaped' '>= 1'
    check $name '.stepmon.summary.cpu.usageSeconds' '> 0'
    verify $name
    left=$(find "$ctr" -mindepth 1 -type d | tr '\n' ' ')
    if [ -z "$left" ]; then pass "$name: nothing was created in the read-only cgroupfs"; else fail "$name: created $left"; fi

    # The same cgroup with a writable cgroupfs (a privileged container, a
    # service): the step gets a cgroup of its own below it, but the
    # no-internal-process rule keeps controllers off (the enclosing cgroup
    # holds processes), so CPU and stall come from the step's cgroup
    # (cpu.stat core keys, PSI) and memory and pids from the enclosing one.
    name=writable64
    echo
    echo "==> step $name: stepmon run in $ctr (writable, another process in it)"
    sh -c 'echo $$ >/sys/fs/cgroup/container-sim/cgroup.procs
        exec stepmon run -o /tmp/writable64.json -- sh -c "dd if=/dev/zero bs=64M count=1 2>/dev/null | sleep 5"'
    rc=$?
    if [ "$rc" -eq 0 ]; then pass "$name: stepmon exited 0"; else fail "$name: stepmon exited $rc, expected 0"; fi
    : >"/tmp/$name.checks"
    check $name '.stepmon.controllers' '== []'
    check $name '.stepmon.sources.cpu.rung' '== "cgroupV2"'
    check $name '.stepmon.sources.pressure.rung' '== "cgroupV2"'
    check $name '.stepmon.sources.memory.rung' '== "enclosingCgroup"'
    check $name '.stepmon.sources.pids.rung' '== "enclosingCgroup"'
    check $name '.stepmon.sources.io.rung' '== "processTree"'
    check $name '.stepmon.summary.memory.peakBytes' ">= 64 * $MIB"
    check $name '.stepmon.summary.cpu.usageSeconds' '> 0'
    verify $name
    left=$(find "$ctr" -mindepth 1 -type d | tr '\n' ' ')
    if [ -z "$left" ]; then pass "$name: its cgroups were removed"; else fail "$name: left $left"; fi

    kill "$other"
    wait "$other" 2>/dev/null
    rmdir "$ctr"
}

TESTS_PASSED=0
run_test_binaries
run_rounds container_step
# shellcheck source=tests-processes.sh
. /guest/tests-processes.sh
# shellcheck source=tests-parent.sh
. /guest/tests-parent.sh
# shellcheck source=tests-runc.sh
. /guest/tests-runc.sh
# shellcheck source=tests-cost.sh
. /guest/tests-cost.sh

echo
echo "==> leftovers"
left=$(find /sys/fs/cgroup -mindepth 1 -type d | grep -v '^/sys/fs/cgroup/init$' | tr '\n' ' ')
if [ -z "$left" ]; then
    pass "no cgroup left behind (only the root remains)"
else
    fail "cgroups left behind: $left"
fi
if [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
    pass "no network namespace left behind"
else
    fail "network namespaces left behind: $(ls /run/netns)"
fi
echo "guest: $TESTS_PASSED tests passed in the test binaries"

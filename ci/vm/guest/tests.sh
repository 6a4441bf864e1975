# shellcheck shell=sh disable=SC2016,SC2013 # jq and sh programs in single quotes; test names have no spaces
# The test tier proper, sourced by /init (busybox sh; pass/fail/finish come
# from there). Two parts:
#  1. every test binary in /tests/list (the crates' live tests and unit
#     tests): must exit 0, run at least one test, and never print SKIPPED —
#     on a pure v2 machine with every controller enabled, nothing may be
#     skipped;
#  2. `stepmon run` on workloads with known costs, its JSON checked with jq.
# At the end no cgroup or network namespace of a test may be left.

MIB=1048576

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
        timeout 300 "/tests/$t" --nocapture --test-threads=2 >"$log" 2>&1
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

# step NAME EXPECTED_STATUS STEPMON_RUN_ARGS... : runs `stepmon run -o
# /tmp/NAME.json STEPMON_RUN_ARGS...` (its summary goes to the console),
# checks its exit status and queues the checks every step gets; the step's
# own checks follow with `check`, and `verify` evaluates them all.
step() {
    name=$1
    expected=$2
    shift 2
    echo
    echo "==> step $name: stepmon run $*"
    stepmon run -o "/tmp/$name.json" "$@"
    rc=$?
    if [ "$rc" -eq "$expected" ]; then
        pass "$name: stepmon exited $rc"
    else
        fail "$name: stepmon exited $rc, expected $expected"
    fi
    : >"/tmp/$name.checks"
    # The full controller path: every controller enabled, and nothing
    # missing but what this kernel lacks (irq.pressure, memory.swap.peak)
    # and the network (the step shares the guest's namespace).
    check "$name" '.stepmon.host.cgroupLayout' '== "unified"'
    check "$name" '.stepmon.controllers | sort' '== ["cpu", "io", "memory", "pids"]'
    check "$name" '.stepmon.controllersNotEnabled' '== []'
    allowed='"netStat", "stepmon.irqPressure", "stepmon.memorySwapPeak"'
    check "$name" "[.resourceUsage.samples[].stepmon.missing[]?.field | select(IN($allowed) | not)] | unique" '== []'
    check "$name" '.resourceUsage.samples | length' '>= 2'
}

# check NAME JQ_EXPR CONDITION: queues "(JQ_EXPR) CONDITION" (CONDITION may
# name the value as $v) for `verify NAME`. One line each (no tab, no newline).
check() {
    printf '%s\t%s\n' "$2" "$3" >>"/tmp/$1.checks"
}

# verify NAME: evaluates the queued checks on /tmp/NAME.json in one jq run
# (starting jq costs about 0.3 s of emulated CPU), printing each value.
verify() {
    name=$1
    tab=$(printf '\t')
    program=
    i=0
    while IFS=$tab read -r expr cond; do
        i=$((i + 1))
        program="$program (try (($expr) as \$v | [$i, (\$v != null and (\$v $cond)), (\$v | tojson)])
            catch [$i, false, \"jq: \\(.)\"]),"
    done <"/tmp/$name.checks"
    jq -r "${program%,} | @tsv" "/tmp/$name.json" >"/tmp/$name.verdicts" 2>&1
    i=0
    fails_before=$FAILS
    while IFS=$tab read -r expr cond; do
        i=$((i + 1))
        verdict=$(awk -F '\t' -v i="$i" '$1 == i { print $2 "\t" $3 }' "/tmp/$name.verdicts")
        case $verdict in
            "true$tab"*) pass "$name: $expr = ${verdict#*"$tab"} ($cond)" ;;
            "false$tab"*) fail "$name: $expr = ${verdict#*"$tab"}, expected $cond" ;;
            *) fail "$name: $expr: no verdict (no JSON report? jq said: $(head -c 300 "/tmp/$name.verdicts"))" ;;
        esac
    done <"/tmp/$name.checks"
    if [ "$FAILS" -gt "$fails_before" ]; then
        # What a failed step measured, kept with the FAIL lines (finish
        # prints them again at the end of the console).
        detail="DETAIL $name: $(jq -c "{summary: .stepmon.summary, samples: [.resourceUsage.samples[] | {t: .timestamp, pids: .pidsStat.current, mem: .stepmon.memoryCurrent, peak: .memoryStat.peak, cpu: .cpuStat.usageNanos, missing: [.stepmon.missing[]? | .field + \": \" + .reason]}]}" "/tmp/$name.json" 2>&1 | head -c 4000)"
        echo "$detail"
        echo "$detail" >>"$FAIL_LIST"
    fi
}

LAST='.resourceUsage.samples[-1]'

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

run_workloads() {
    # 64 MiB of anonymous memory, held for 5 s (dd's buffer, while its
    # write blocks on a pipe that sleep never reads) so that samples see it.
    step anon64 0 -- sh -c 'dd if=/dev/zero bs=64M count=1 2>/dev/null | sleep 5'
    check anon64 "$LAST.memoryStat.peak" ">= 64 * $MIB"
    check anon64 '.stepmon.summary.memory.peakBytes' ">= 64 * $MIB"
    check anon64 '.stepmon.summary.memory.anonAtPeakBytes' ">= 61 * $MIB and \$v <= 72 * $MIB"
    check anon64 '[.resourceUsage.samples[].memoryStat.anon] | max' ">= 61 * $MIB"
    verify anon64

    # 32 MiB written with O_DIRECT, then 32 MiB buffered + fsync, to the
    # virtio disk (ext4).
    step direct32 0 -- dd if=/dev/zero of=/mnt/scratch/direct bs=1M count=32 oflag=direct
    check direct32 "$LAST.ioStat.writeBytes" ">= 32 * $MIB"
    check direct32 '.stepmon.summary.io.writeBytes' ">= 32 * $MIB"
    check direct32 "[$LAST.stepmon.ioDevices[] | select(.writeBytes >= 32 * $MIB)] | length" '== 1'
    check direct32 "$LAST.ioStat.writeIOs" '>= 32'
    # O_DIRECT bypasses the page cache: no file pages were charged.
    check direct32 '[.resourceUsage.samples[].memoryStat.file] | max' "< 4 * $MIB"
    verify direct32

    step fsync32 0 -- dd if=/dev/zero of=/mnt/scratch/buffered bs=1M count=32 conv=fsync
    check fsync32 "$LAST.ioStat.writeBytes" ">= 32 * $MIB"
    check fsync32 '.stepmon.summary.io.writeBytes' ">= 32 * $MIB"
    verify fsync32

    # 4096 synchronous 4 KiB O_DIRECT writes: the step's task waits for each
    # (in iowait), so its IO pressure must grow. (The big writes above can
    # finish inside the emulated disk's cache too fast to register.)
    step iowait4k 0 -- dd if=/dev/zero of=/mnt/scratch/small bs=4k count=4096 oflag=direct
    check iowait4k "$LAST.ioStat.writeIOs" '>= 4096'
    check iowait4k "$LAST.ioStat.pressure.some.total" '> 0'
    check iowait4k '.stepmon.summary.ioStall.someSeconds' '> 0'
    verify iowait4k
    rm -f /mnt/scratch/direct /mnt/scratch/buffered /mnt/scratch/small

    # 8 children at once (plus their shell: 9 tasks), for 5 s so that the
    # periodic samples (every 2 s) see them too.
    step children8 0 -- sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 5 & done; wait'
    check children8 '.stepmon.summary.pidsPeak' '>= 9'
    check children8 "[.resourceUsage.samples[].stepmon.pidsPeak] | max" '>= 9'
    check children8 "[.resourceUsage.samples[].pidsStat.current] | max" '>= 9'
    verify children8

    # 64 MiB under memory.max 16M: the OOM killer ends it (SIGKILL, 137),
    # and the usage up to then is still reported.
    step oom16 137 --memory-max 16M -- dd if=/dev/zero of=/dev/null bs=64M count=1
    check oom16 '.stepmon.signal' '== 9'
    check oom16 "$LAST.memoryStat.oomKillEvents" '>= 1'
    check oom16 '.stepmon.summary.memory.oomKills' '>= 1'
    check oom16 "$LAST.stepmon.memoryMax" "== 16 * $MIB"
    # The peak is the usage up to the kill: above half the limit, and at
    # the limit give or take what cgroup-v2.rst (memory.max) allows: "Under
    # certain circumstances, the usage may go over the limit temporarily"
    # (forced charges in mm/memcontrol.c); 1 MiB of slack for those.
    check oom16 '.stepmon.summary.memory.peakBytes' "> 8 * $MIB and \$v <= 17 * $MIB"
    check oom16 "$LAST.cpuStat.usageNanos" '> 0'
    check oom16 "$LAST.memoryStat.pressure.some.total" '> 0'
    verify oom16

    # A busy loop under cpu.max (0.2 cores) for 3 s: throttled.
    step cpumax 0 --cpus 0.2 -- sh -c 'sh -c "while :; do :; done" & sleep 3; kill $!'
    check cpumax "$LAST.stepmon.cpuMaxQuotaUsec" '== 20000'
    check cpumax "$LAST.cpuStat.nrThrottled" '> 0'
    check cpumax "$LAST.cpuStat.throttledNanos" '> 0'
    check cpumax '.stepmon.summary.cpu.averageCores' '> 0.05 and $v <= 0.3'
    verify cpumax

    container_step

    # 4 busy loops on 2 vCPUs for 4 s: CPU pressure stall.
    step contention 0 -- sh -c 'p=; for i in 1 2 3 4; do sh -c "while :; do :; done" & p="$p $!"; done; sleep 4; kill $p'
    check contention "$LAST.cpuStat.pressure.some.total" '> 0'
    check contention '.stepmon.summary.cpuStall.someSeconds' '> 0'
    check contention '.stepmon.summary.cpu.averageCores' '> 1'
    verify contention
}

TESTS_PASSED=0
run_test_binaries
rounds=$(sed -n 's/.*stepmon\.rounds=\([0-9]*\).*/\1/p' /proc/cmdline)
round=1
while [ "$round" -le "${rounds:-1}" ]; do
    [ "${rounds:-1}" -gt 1 ] && echo && echo "==> workloads, round $round of $rounds"
    run_workloads
    round=$((round + 1))
done

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

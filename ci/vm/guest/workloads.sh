# shellcheck shell=sh disable=SC2016 # jq programs in single quotes
# The `stepmon run` workloads with known costs that both boots run, with the
# checks that hold on both cgroup layouts (sourced after checks.sh). What
# differs per boot comes from that boot's file: `step_checks` (every step's
# layout, sources and what may be missing), STEP_PSI (1 when the step's
# cgroup has pressure files: cgroup2 only, Documentation/accounting/psi.rst
# "Cgroup2 interface") and STEP_IO (1 when the step's samples count its
# block IO per device).

# stall_check NAME JQ_EXPR: JQ_EXPR > 0, on boots where the step's cgroup
# has pressure files.
stall_check() {
    [ "$STEP_PSI" = 1 ] || return 0
    check "$1" "$2" '> 0'
}

# io_check NAME JQ_EXPR CONDITION: `check`, on boots where the step's
# samples count its block IO.
io_check() {
    [ "$STEP_IO" = 1 ] || return 0
    check "$@"
}

run_workloads() {
    # 64 MiB of anonymous memory, held for 5 s (dd's buffer, while its
    # write blocks on a pipe that sleep never reads) so that samples see it.
    step anon64 0 -- sh -c 'dd if=/dev/zero bs=64M count=1 2>/dev/null | sleep 5'
    check anon64 "$LAST.memoryStat.peak" ">= 64 * $MIB"
    check anon64 '.stepmon.summary.memory.peakBytes' ">= 64 * $MIB and \$v <= 80 * $MIB"
    check anon64 '.stepmon.summary.memory.anonAtPeakBytes' ">= 61 * $MIB and \$v <= 72 * $MIB"
    check anon64 '[.resourceUsage.samples[].memoryStat.anon] | max' ">= 61 * $MIB"
    verify anon64

    # 32 MiB written with O_DIRECT, then 32 MiB buffered + fsync, to the
    # virtio disk (ext4).
    step direct32 0 -- dd if=/dev/zero of=/mnt/scratch/direct bs=1M count=32 oflag=direct
    io_check direct32 "$LAST.ioStat.writeBytes" ">= 32 * $MIB"
    check direct32 '.stepmon.summary.io.writeBytes' ">= 32 * $MIB and \$v <= 40 * $MIB"
    io_check direct32 "[$LAST.stepmon.ioDevices[] | select(.writeBytes >= 32 * $MIB)] | length" '== 1'
    io_check direct32 "$LAST.ioStat.writeIOs" '>= 32'
    # O_DIRECT bypasses the page cache: no file pages were charged.
    check direct32 '[.resourceUsage.samples[].memoryStat.file] | max' "< 4 * $MIB"
    verify direct32

    step fsync32 0 -- dd if=/dev/zero of=/mnt/scratch/buffered bs=1M count=32 conv=fsync
    io_check fsync32 "$LAST.ioStat.writeBytes" ">= 32 * $MIB"
    check fsync32 '.stepmon.summary.io.writeBytes' ">= 32 * $MIB and \$v <= 40 * $MIB"
    verify fsync32

    # 4096 synchronous 4 KiB O_DIRECT writes: the step's task waits for each
    # (in iowait), so its IO pressure must grow. (The big writes above can
    # finish inside the emulated disk's cache too fast to register.)
    step iowait4k 0 -- dd if=/dev/zero of=/mnt/scratch/small bs=4k count=4096 oflag=direct
    io_check iowait4k "$LAST.ioStat.writeIOs" '>= 4096'
    check iowait4k '.stepmon.summary.io.writeBytes' ">= 16 * $MIB and \$v <= 24 * $MIB"
    stall_check iowait4k "$LAST.ioStat.pressure.some.total"
    stall_check iowait4k '.stepmon.summary.ioStall.someSeconds'
    verify iowait4k
    rm -f /mnt/scratch/direct /mnt/scratch/buffered /mnt/scratch/small

    # 8 children at once (plus their shell: 9 tasks), for 5 s so that the
    # periodic samples (every 2 s) see them too.
    step children8 0 -- sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 5 & done; wait'
    check children8 '.stepmon.summary.pidsPeak' '>= 9'
    check children8 "[.resourceUsage.samples[].stepmon.pidsPeak] | max" '>= 9'
    check children8 "[.resourceUsage.samples[].pidsStat.current] | max" '>= 9'
    verify children8

    # 64 MiB under a 16 MiB memory limit: the OOM killer ends it (SIGKILL,
    # 137), and the usage up to then is still reported.
    step oom16 137 --memory-max 16M -- dd if=/dev/zero of=/dev/null bs=64M count=1
    check oom16 '.stepmon.signal' '== 9'
    check oom16 "$LAST.memoryStat.oomKillEvents" '>= 1'
    check oom16 '.stepmon.summary.memory.oomKills' '>= 1'
    check oom16 "$LAST.stepmon.memoryMax" "== 16 * $MIB"
    # The peak is the usage up to the kill: above half the limit, and at
    # the limit give or take what cgroup-v2.rst (memory.max) allows: "Under
    # certain circumstances, the usage may go over the limit temporarily"
    # (forced charges in mm/memcontrol.c, which v1's memory.limit_in_bytes
    # goes through too); 1 MiB of slack for those.
    check oom16 '.stepmon.summary.memory.peakBytes' "> 8 * $MIB and \$v <= 17 * $MIB"
    check oom16 "$LAST.cpuStat.usageNanos" '> 0'
    stall_check oom16 "$LAST.memoryStat.pressure.some.total"
    verify oom16

    # A busy loop under a CPU quota of 0.2 cores (20000 µs per 100000 µs
    # period) for 3 s: throttled.
    step cpumax 0 --cpus 0.2 -- sh -c 'sh -c "while :; do :; done" & sleep 3; kill $!'
    check cpumax "$LAST.stepmon.cpuMaxQuotaUsec" '== 20000'
    check cpumax "$LAST.cpuStat.nrThrottled" '> 0'
    check cpumax "$LAST.cpuStat.throttledNanos" '> 0'
    check cpumax '.stepmon.summary.cpu.throttledSeconds' '> 0'
    check cpumax '.stepmon.summary.cpu.averageCores' '> 0.05 and $v <= 0.3'
    verify cpumax

    # 4 busy loops on 2 vCPUs for 4 s: more than one core, and CPU stall.
    step contention 0 -- sh -c 'p=; for i in 1 2 3 4; do sh -c "while :; do :; done" & p="$p $!"; done; sleep 4; kill $p'
    stall_check contention "$LAST.cpuStat.pressure.some.total"
    stall_check contention '.stepmon.summary.cpuStall.someSeconds'
    check contention '.stepmon.summary.cpu.averageCores' '> 1'
    verify contention
}

# run_rounds EXTRA: run_workloads and then the boot's own function EXTRA,
# as many times as stepmon.rounds= on the kernel command line says (1 by
# default; more to hunt a check that fails once in many runs).
run_rounds() {
    rounds=$(sed -n 's/.*stepmon\.rounds=\([0-9]*\).*/\1/p' /proc/cmdline)
    round=1
    while [ "$round" -le "${rounds:-1}" ]; do
        [ "${rounds:-1}" -gt 1 ] && echo && echo "==> workloads, round $round of $rounds"
        run_workloads
        "$1"
        round=$((round + 1))
    done
}

# shellcheck shell=sh disable=SC2016 # jq programs in single quotes
# Per-process accounting (taskstats) in the pure cgroup v2 boot, sourced by
# tests.sh after its workloads: with delay accounting switched on in the
# guest's kernel (kernel.task_delayacct=1; the host is never touched), the
# processes' exact CPU adds up to the step cgroup's cpu.stat usage within
# 5%, the CPU-contention workload shows CPU delay and the synchronous IO
# workload block IO delay.

processes_checks() {
    echo
    echo "==> per-process accounting (taskstats)"
    if ! echo 1 >/proc/sys/kernel/task_delayacct; then
        fail "processes: cannot switch on kernel.task_delayacct in the guest"
        return
    fi

    # 16 shells each counting to 100,000: CPU-bound, one process each.
    step proc_cpu 0 -- sh -c 'for i in $(seq 16); do sh -c "i=0; while [ \$i -lt 100000 ]; do i=\$((i + 1)); done"; done'
    check proc_cpu '.stepmon.processes.source' '== "taskstats"'
    check proc_cpu '.stepmon.processes.lostAtMost' '== 0'
    check proc_cpu '.stepmon.processes.delayAccounting' '== true'
    check proc_cpu '.stepmon.processes.cpuTime' '== "exact"'
    check proc_cpu '[.stepmon.processes.commands[] | select(.command == "sh") | .count] | add' '>= 17'
    check proc_cpu '([.stepmon.processes.commands[].cpuSeconds] | add) / .stepmon.summary.cpu.usageSeconds' '>= 0.95 and $v <= 1.05'
    verify proc_cpu
    # Which records lack the exact run time, when any does (the aggregate's
    # cpuTime is "exact" only if all have it; seen once: "tickSampled").
    echo "guest: proc_cpu records without the exact CPU time: $(jq -c '[.stepmon.processes | (.topByCpu // [])[], (.topByPeakRss // [])[] | select(.cpuTime != "exact") | {command, pid, ppid, cpuSeconds, userSeconds, systemSeconds, runningAtEnd}] | unique' /tmp/proc_cpu.json 2>&1)"

    # 4 busy loops on 2 vCPUs for 4 s: each waits for a CPU about half the time.
    step proc_contention 0 -- sh -c 'p=; for i in 1 2 3 4; do sh -c "while :; do :; done" & p="$p $!"; done; sleep 4; kill $p'
    check proc_contention '[.stepmon.processes.commands[].delays.cpuSeconds // 0] | add' '> 1'
    verify proc_contention

    # 4096 synchronous 4 KiB O_DIRECT writes: dd waits for each.
    step proc_iowait 0 -- dd if=/dev/zero of=/mnt/scratch/small bs=4k count=4096 oflag=direct
    check proc_iowait '[.stepmon.processes.commands[] | select(.command == "dd") | .delays.blkioSeconds] | add' '> 0'
    check proc_iowait '[.stepmon.processes.commands[] | select(.command == "dd") | .writeBytes] | add' ">= 16 * $MIB"
    verify proc_iowait
    rm -f /mnt/scratch/small

    echo 0 >/proc/sys/kernel/task_delayacct
}

processes_checks

# shellcheck shell=sh disable=SC2016 # jq programs in single quotes
# The pure cgroup v2 boot without systemd (sourced by tests.sh): stepmon as
# root in /svc.slice/runner.service, a non-root cgroup that holds another
# process (a CI runner's service on a host whose init is not systemd);
# svc.slice enables cpu, memory, io and pids for its children.
#  * plain: the step's cgroup below runner.service can get no controller
#    (the no-internal-process rule): memory and pids from the enclosing
#    cgroup, IO from the process tree, labelled so, and a notice naming the
#    shape;
#  * --cgroup-parent /sys/fs/cgroup/svc.slice (an ancestor that distributes
#    the controllers): every controller, and a notice that the step escapes
#    runner.service.

parent_steps() {
    svc=/sys/fs/cgroup/svc.slice
    mkdir "$svc" "$svc/runner.service"
    echo "+cpu +memory +io +pids" >"$svc/cgroup.subtree_control"
    sh -c "echo \$\$ >$svc/runner.service/cgroup.procs; exec sleep 120" &
    other=$!
    work='dd if=/dev/zero bs=64M count=1 2>/dev/null | sleep 3; dd if=/dev/zero of=/mnt/scratch/p8 bs=1M count=8 oflag=direct 2>/dev/null'

    name=parent-none
    echo
    echo "==> step $name: stepmon run in $svc/runner.service beside another process"
    sh -c "echo \$\$ >$svc/runner.service/cgroup.procs; exec stepmon run -o /tmp/$name.json -- sh -c '$work'" \
        >"/tmp/$name.log" 2>&1
    rc=$?
    cat "/tmp/$name.log"
    if [ "$rc" -eq 0 ]; then pass "$name: stepmon exited 0"; else fail "$name: stepmon exited $rc"; fi
    if grep -q 'whose children can get no controller' "/tmp/$name.log" && grep -q 'runner.service' "/tmp/$name.log"; then
        pass "$name: the notice names the shape"
    else
        fail "$name: no notice naming the shape"
    fi
    : >"/tmp/$name.checks"
    check $name '.stepmon.controllers' '== []'
    check $name '.stepmon.sources.memory.rung' '== "enclosingCgroup"'
    check $name '.stepmon.sources.pids.rung' '== "enclosingCgroup"'
    check $name '.stepmon.sources.io.rung' '== "processTree"'
    check $name '.stepmon.enclosingCgroup.cgroup' "== \"$svc/runner.service\""
    check $name '.stepmon.enclosingCgroup.otherProcessesAtStart' '>= 1'
    check $name '.stepmon.summary.memory.peakBytes' ">= 64 * $MIB"
    check $name '.stepmon.summary.io.writeBytes' ">= 8 * $MIB"
    verify $name

    name=parent-ancestor
    echo
    echo "==> step $name: stepmon run in $svc/runner.service with --cgroup-parent $svc"
    sh -c "echo \$\$ >$svc/runner.service/cgroup.procs
        exec stepmon run --cgroup-parent $svc -o /tmp/$name.json -- sh -c '$work'" >"/tmp/$name.log" 2>&1
    rc=$?
    cat "/tmp/$name.log"
    if [ "$rc" -eq 0 ]; then pass "$name: stepmon exited 0"; else fail "$name: stepmon exited $rc"; fi
    if grep -q 'outside stepmon.s own cgroup' "/tmp/$name.log"; then
        pass "$name: the notice says the step escapes runner.service"
    else
        fail "$name: no notice that the step runs outside runner.service"
    fi
    : >"/tmp/$name.checks"
    check $name '.stepmon.controllers | sort' '== ["cpu", "io", "memory", "pids"]'
    check $name '.stepmon.cgroup' "| startswith(\"$svc/stepmon-run.\")"
    for group in cpu memory io pids; do
        check $name ".stepmon.sources.$group.rung" '== "cgroupV2"'
    done
    check $name "[.resourceUsage.samples[].memoryStat.peak] | max" ">= 64 * $MIB"
    check $name "$LAST.ioStat.writeBytes" ">= 8 * $MIB"
    verify $name

    rm -f /mnt/scratch/p8
    kill "$other"
    wait "$other" 2>/dev/null
    left=$(find "$svc" -mindepth 1 -type d ! -path "$svc/runner.service" | tr '\n' ' ')
    if [ -z "$left" ]; then pass "parent: nothing left under $svc"; else fail "parent: left $left"; fi
    rmdir "$svc/runner.service" "$svc"
}
parent_steps

# shellcheck shell=sh disable=SC2016 # jq and sh programs in single quotes
# The systemd boot's tests (Debian's /bin/sh), run by stepmon-tests.service
# once systemd (PID 1) has brought the Debian minimal system up; output on
# the serial console. stepmon runs as root the way CI runs it on a systemd
# host, in a cgroup that holds other processes, which by the
# no-internal-process rule can enable no controller for a cgroup below it:
#  1. in a service (a CI runner's shape: /ci.slice/ci-runner.service with
#     another process in it): the step gets a transient scope from systemd,
#     with memory, IO and pids measured in the step's leaf <scope>/step
#     (a keeper process holds the scope in <scope>/keeper until the final
#     sample is taken: CPU and IO exact, the last sample's IO bytes all of
#     the 8 MiB written); the scope is gone afterwards;
#  2. in a session-like scope (systemd-run --scope): the same;
#  3. stopping the caller's service while the step runs stops the step;
#  4. with the bus socket and /run/systemd/private hidden (a private mount
#     namespace): no scope; the notice says why, the enclosing cgroup and
#     the process tree measure the step.
# Prints the result marker the host reads and powers off.

export PATH=/usr/local/bin:/usr/bin:/usr/sbin:/bin:/sbin LANG=C
FAILS=0
PASSES=0
FAIL_LIST=/tmp/guest-failures
: >"$FAIL_LIST"
pass() { PASSES=$((PASSES + 1)); echo "PASS $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; echo "FAIL $*" >>"$FAIL_LIST"; }

# shellcheck source=checks.sh
. /guest/checks.sh

echo "guest: systemd $(systemctl --version | head -n 1), $(systemctl is-system-running 2>&1)"
echo "guest: cgroup2 root controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
mount -t ext4 /dev/vda /mnt/scratch || fail "set-up: mount the scratch disk"

# 64 MiB of anonymous memory held for 3 s, 8 MiB written with O_DIRECT,
# two more processes.
WORKLOAD='dd if=/dev/zero bs=64M count=1 2>/dev/null | sleep 3
    dd if=/dev/zero of=/mnt/scratch/direct8 bs=1M count=8 oflag=direct 2>/dev/null
    sleep 1 & sleep 1 & wait'

# beside NAME COMMAND: writes /tmp/NAME.sh, which runs COMMAND (sh) beside
# another process, logs to /tmp/NAME.log and exits with COMMAND's status.
# A file, not `sh -c`: systemd expands $VAR in a unit's command line.
beside() {
    cat >"/tmp/$1.sh" <<SCRIPT
sleep 300 &
other=\$!
$2 >>/tmp/$1.log 2>&1
rc=\$?
kill \$other
exit \$rc
SCRIPT
}

# run_caller NAME SYSTEMD-RUN-ARGS...: systemd-run (at most 240 s), then its
# log; on a timeout, what stepmon was doing (for the FAIL's diagnosis).
run_caller() {
    n=$1
    shift
    timeout 240 systemd-run --quiet "$@" /bin/sh "/tmp/$n.sh"
    rc=$?
    if [ "$rc" -eq 124 ]; then
        echo "guest: $n timed out; processes (pid, cgroup, command; stepmon's threads with their wchan):"
        for p in /proc/[0-9]*; do
            cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | head -c 120)
            [ -n "$cmd" ] || continue
            echo "  ${p#/proc/} $(cut -d: -f3 "$p/cgroup" 2>/dev/null) $cmd"
            if [ "$(cat "$p/comm" 2>/dev/null)" = stepmon ]; then
                for t in "$p"/task/*; do echo "    thread ${t##*/} $(cat "$t/comm") $(cat "$t/wchan")"; done
            fi
        done
        systemctl list-units --all --plain --no-legend 'stepmon-run.*' 'ci-*'
    fi
    cat "/tmp/$n.log"
    return "$rc"
}

# no_scope_left NAME: no stepmon-run.*.scope unit is loaded and no such
# cgroup exists.
no_scope_left() {
    units=$(systemctl list-units --all --plain --no-legend 'stepmon-run.*' | awk '{ print $1 }' | tr '\n' ' ')
    dirs=$(find /sys/fs/cgroup -type d -name 'stepmon-run.*' | tr '\n' ' ')
    if [ -z "$units$dirs" ]; then
        pass "$1: the step's scope is gone"
    else
        fail "$1: left behind: units [$units] cgroups [$dirs]"
    fi
}

# scope_checks NAME SLICE: the step measured from its own transient scope
# in SLICE.
scope_checks() {
    : >"/tmp/$1.checks"
    for group in cpu memory io pids pressure; do
        check "$1" ".stepmon.sources.$group.rung" '== "systemdScope"'
    done
    check "$1" '.stepmon.controllers | sort' '== ["cpu", "io", "memory", "pids"]'
    check "$1" '.stepmon.cgroup' "| test(\"^/sys/fs/cgroup/$2/stepmon-run\\\\.[0-9.]+\\\\.scope/step$\")"
    check "$1" '.stepmon.placement' '| startswith("its own transient systemd scope stepmon-run.")'
    check "$1" '.stepmon.summary.memory.peakBytes' ">= 64 * $MIB"
    check "$1" "[.resourceUsage.samples[].memoryStat.peak] | max" ">= 64 * $MIB"
    # The final sample is the step's last (systemd has not removed the
    # scope before it): IO written in full, no source a lower bound.
    check "$1" "$LAST.ioStat.writeBytes" ">= 8 * $MIB"
    check "$1" "$LAST.cpuStat.usageNanos" '> 0'
    for group in cpu io; do
        check "$1" ".stepmon.sources.$group.bound" '== "exact"'
    done
    check "$1" '.stepmon.summary.io.writeBytes' ">= 8 * $MIB"
    check "$1" '.stepmon.summary.pidsPeak' '>= 3'
    check "$1" '.stepmon.enclosingCgroup == null' '== true'
    verify "$1"
}

# 1. A CI runner's service: another process beside stepmon.
name=service64
echo
echo "==> step $name: stepmon run in ci-runner.service (ci.slice) beside another process"
beside $name "stepmon run -o /tmp/$name.json -- sh -c '$WORKLOAD'"
run_caller $name --wait --unit=ci-runner --slice=ci.slice -p Type=exec
rc=$?
if [ "$rc" -eq 0 ]; then pass "$name: stepmon exited 0"; else fail "$name: stepmon exited $rc"; fi
if grep -q 'transient scope stepmon-run' "/tmp/$name.log"; then
    pass "$name: the notice names the shape and the scope"
else
    fail "$name: no notice of the scope"
fi
scope_checks $name ci.slice
no_scope_left $name

# 2. A session-like scope.
name=scope64
echo
echo "==> step $name: stepmon run in a scope (systemd-run --scope) beside another process"
beside $name "stepmon run -o /tmp/$name.json -- sh -c '$WORKLOAD'"
run_caller $name --scope --unit=session-sim
rc=$?
if [ "$rc" -eq 0 ]; then pass "$name: stepmon exited 0"; else fail "$name: stepmon exited $rc"; fi
scope_checks $name system.slice
no_scope_left $name

# 3. Stopping the caller's service (a cancelled CI job) stops the step.
name=cancel
echo
echo "==> step $name: systemctl stop of the caller's service while the step runs"
beside $name "stepmon run -o /tmp/$name.json -- sleep 600"
systemd-run --quiet --unit=ci-cancel --slice=ci.slice -p Type=exec /bin/sh /tmp/$name.sh
step_pid=
i=0
while [ -z "$step_pid" ] && [ $i -lt 300 ]; do
    step_pid=$(cat /sys/fs/cgroup/ci.slice/stepmon-run.*.scope/step/cgroup.procs 2>/dev/null | head -n 1)
    sleep 0.1
    i=$((i + 1))
done
if [ -n "$step_pid" ]; then
    pass "$name: the step (pid $step_pid) runs in its scope"
    systemctl stop ci-cancel
    i=0
    while kill -0 "$step_pid" 2>/dev/null && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 "$step_pid" 2>/dev/null; then
        fail "$name: the step still runs 10 s after its caller's service was stopped"
    else
        pass "$name: stopping ci-cancel.service stopped the step"
    fi
else
    fail "$name: the step never showed up in a scope under ci.slice"
fi
cat "/tmp/$name.log"
no_scope_left $name

# 4. systemd unreachable: both sockets hidden in a private mount namespace.
name=hidden64
echo
echo "==> step $name: stepmon run in ci-hidden.service with /run/systemd and /run/dbus hidden"
beside $name "unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run/systemd &&
    mount -t tmpfs tmpfs /run/dbus && exec stepmon run -o /tmp/$name.json -- sh -c \"dd if=/dev/zero bs=64M count=1 2>/dev/null | sleep 3\"'"
run_caller $name --wait --unit=ci-hidden --slice=ci.slice -p Type=exec
rc=$?
if [ "$rc" -eq 0 ]; then pass "$name: stepmon exited 0"; else fail "$name: stepmon exited $rc"; fi
if grep -q 'systemd cannot be reached' "/tmp/$name.log" && grep -q '/run/systemd/private' "/tmp/$name.log"; then
    pass "$name: the notice says why there is no scope"
else
    fail "$name: no notice saying why systemd was not used"
fi
: >"/tmp/$name.checks"
check $name '.stepmon.sources.memory.rung' '== "enclosingCgroup"'
check $name '.stepmon.sources.io.rung' '== "processTree"'
check $name '.stepmon.enclosingCgroup.cgroup' '== "/sys/fs/cgroup/ci.slice/ci-hidden.service"'
check $name '.stepmon.enclosingCgroup.otherProcessesAtStart' '>= 1'
check $name '.stepmon.summary.memory.peakBytes' ">= 64 * $MIB"
verify $name
no_scope_left $name

rm -f /mnt/scratch/direct8
echo
if [ "$FAILS" -gt 0 ]; then
    echo "guest: what failed (each FAIL line again):"
    cat "$FAIL_LIST"
fi
echo "guest: kernel $(uname -r), cgroup boot systemd"
echo "guest checks: $PASSES passed, $FAILS failed"
if [ "$FAILS" -eq 0 ] && [ "$PASSES" -gt 0 ]; then
    echo "STEPMON-VM-RESULT: PASS"
else
    echo "STEPMON-VM-RESULT: FAIL"
fi
sync
systemctl poweroff --force --force

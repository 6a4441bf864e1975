# shellcheck shell=sh disable=SC2016 # jq programs in single quotes
# stepmon inside real containers (Debian's runc) on the pure cgroup v2
# guest, sourced by tests.sh. The bundles come from ci/vm/lib/runc.sh; each
# container runs `stepmon doctor`, then `stepmon run` of the 100 MiB tree (a
# parent of 10 MiB whose three children hold 20, 30 and 40 MiB at once)
# with exit status 7, beside another process. One line per container:
# `runc <name>: PASS` or `runc <name>: FAIL: why`.

# runc_container BUNDLE LABEL [RUNTIME]: runs the container with runc (or
# RUNTIME, crun), checks the runtime's status (the step's 7) and queues the
# checks every container gets; returns 1 when the runtime did not run it
# (its output is then in the FAIL line).
runc_container() {
    bundle=$1
    label=$2
    runtime=${3:-runc}
    name=$runtime-$bundle
    out=/tmp/runc-$bundle
    echo
    echo "==> $runtime $label: $runtime run --bundle /runc/$bundle ($(jq -c '[.linux.namespaces[].type]' "/runc/$bundle/config.json") namespaces)"
    rm -rf "$out"
    mkdir -p "$out"
    # --no-pivot: the guest's root is the initramfs, which pivot_root refuses.
    timeout 300 "$runtime" run --no-pivot --bundle "/runc/$bundle" "stepmon-$bundle" >"/tmp/$name.log" 2>&1 </dev/null
    rc=$?
    cat "/tmp/$name.log"
    echo "--- stepmon doctor --json in the $label container (its checks and rungs)"
    cat "$out/doctor.err" 2>/dev/null
    jq -r '(.checks[] | "\(.status)\t\(.name): \(.detail // .reason)\(if .hint then " — hint: \(.hint)" else "" end)"),
        (.rungs[] | "rung\t\(.resource) from \(.rung): \(.why)")' "$out/doctor.json" 2>&1
    echo "--- stepmon run in the $label container"
    cat "$out/run.log" 2>/dev/null
    fails_before_container=$FAILS
    : >"/tmp/$name.checks"
    if [ ! -s "$out/run.json" ]; then
        fail "$name: $runtime exited $rc without stepmon's document: $(tail -n 5 "/tmp/$name.log" | tr '\n' ' ')"
        echo "$runtime $label: FAIL: $runtime exited $rc: $(tail -n 3 "/tmp/$name.log" | tr '\n' ' ')"
        return 1
    fi
    cp "$out/run.json" "/tmp/$name.json"
    if [ "$rc" -eq 7 ]; then pass "$name: $runtime exited 7 (the step's status)"; else fail "$name: $runtime exited $rc, expected 7"; fi
    check "$name" '.stepmon.exitCode' '== 7'
    check "$name" '.stepmon.summary.cpu.usageSeconds' '> 0'
    check "$name" '.stepmon.host.cgroupLayout' '== "unified"'
    return 0
}

# runc_verdict LABEL: verifies the queued checks (of run and doctor) and
# prints the container's line (`runc read-only: PASS`).
runc_verdict() {
    run=$name
    verify "$run"
    verify "$run-doctor"
    if [ "$FAILS" -eq "$fails_before_container" ]; then
        echo "$runtime $1: PASS"
    else
        echo "$runtime $1: FAIL: $(tail -n "$((FAILS - fails_before_container))" "$FAIL_LIST" | grep -v '^DETAIL' | head -n 3 | tr '\n' ' ')"
    fi
}

# doctor_checks NAME ALLOWS: `stepmon doctor --json` names the container
# and what it allows (ALLOWS, a regex); its own checks follow.
doctor_checks() {
    cp "/tmp/runc-$1/doctor.json" "/tmp/$name-doctor.json" 2>/dev/null
    : >"/tmp/$name-doctor.checks"
    check "$name-doctor" '.checks[] | select(.name == "container") | .detail' "| test(\"^inside a container .*: $2\")"
    check "$name-doctor" '.shape.kind' '== "containerNamespace"'
    check "$name-doctor" '.checks[] | select(.name == "memory controller") | .status' "== \"$3\""
}
CONTAINER_HINT='.checks[] | select(.name == "container") | .hint // ""'


# The memory checks of a container without a cgroup of the step's own: the
# container's cgroup, its memory.peak (never reset: no per-fd reset before
# Linux 6.12, and the cgroupfs is read-only) an upper bound over the usage at
# the start; stall from the container's cgroup.
enclosing_checks() {
    check "$name" '.stepmon.placement' '| startswith("no cgroup of its own")'
    check "$name" '.stepmon.enclosingCgroup.cgroup' '== "/sys/fs/cgroup"'
    check "$name" '.stepmon.enclosingCgroup.root' '== false'
    check "$name" '.stepmon.enclosingCgroup.otherProcessesAtStart' '>= 1'
    check "$name" '.stepmon.sources.memory.rung' '== "enclosingCgroup"'
    check "$name" '.stepmon.sources.memory.bound' '== "upperBound"'
    check "$name" '.stepmon.sources.memory.covers' '| test("memory.peak, never reset")'
    check "$name" '(.stepmon.summary.memory.peakBytes - .stepmon.enclosingCgroup.memoryUsageAtStart) / 1048576' '>= 100 and $v <= 110'
    check "$name" '.stepmon.sources.pressure.rung' '== "enclosingCgroup"'
    check "$name" '[.stepmon.enclosingCgroup.samples[] | select(.cpuStat.pressure != null and .cpuStat.usageNanos != null and .ioStat != null)] | length' '>= 2'
    check "$name" '.stepmon.sources.cpu.rung' '== "processTree"'
    check "$name" '.stepmon.sources.io.rung' '== "processTree"'
}

runc_checks() {
    runc_start=$(date +%s)
    echo
    echo "==> stepmon in runc containers ($(runc --version | head -n 1); $(crun --version | head -n 1))"
    if runc_container ro read-only; then
        enclosing_checks
        check "$name" '.stepmon.processes.source' '== "sampled"'
        doctor_checks ro 'a cgroup namespace with a read-only cgroupfs, a pid namespace of its own, no CAP_NET_ADMIN, so per-process records are sampled$' missing
        check "$name-doctor" "$CONTAINER_HINT" '| test("--cgroupns=private and a writable cgroupfs.*; for exact per-process records, with --pid=host, --network=host and --cap-add NET_ADMIN$")'
        check "$name-doctor" '.rungs[] | select(.resource == "memory") | .rung' '== "enclosingCgroup"'
        runc_verdict read-only
    fi
    find /sys/fs/cgroup -name 'stepmon-run.*' | grep -q . && fail "runc-ro: a run cgroup was created"

    if runc_container rw writable; then
        check "$name" '.stepmon.placement' '| startswith("its own cgroup")'
        check "$name" '.stepmon.cgroup' '| test("^/sys/fs/cgroup/stepmon-run\\.[0-9.]+/step$")'
        check "$name" '.stepmon.controllers | sort' '== ["cpu", "io", "memory", "pids"]'
        check "$name" '.stepmon.sources.memory.rung' '== "cgroupV2"'
        check "$name" '.stepmon.sources.memory.bound' '== "exact"'
        check "$name" '.stepmon.summary.memory.peakBytes / 1048576' '>= 100 and $v <= 104'
        check "$name" '.stepmon.sources.pressure.rung' '== "cgroupV2"'
        check "$name" '.stepmon.enclosingCgroup == null' '== true'
        check "$name" '.stepmon.processes.source' '== "sampled"'
        # A second step from the leaf the first moved the container's processes into.
        cat /tmp/runc-rw/run2.log
        cp /tmp/runc-rw/run2.json "/tmp/$name-second.json"
        : >"/tmp/$name-second.checks"
        check "$name-second" '.stepmon.cgroup' '| test("^/sys/fs/cgroup/stepmon-run\\.[0-9.]+/step$")'
        check "$name-second" '.stepmon.controllers | sort' '== ["cpu", "io", "memory", "pids"]'
        verify "$name-second"
        doctor_checks rw 'a cgroup namespace with a writable cgroupfs, so each step gets a cgroup of its own, a pid namespace of its own' ok
        check "$name-doctor" "$CONTAINER_HINT" '== "for exact per-process records, with --pid=host, --network=host and --cap-add NET_ADMIN"'
        check "$name-doctor" '.rungs[] | select(.resource == "memory") | .rung' '== "cgroupV2"'
        runc_verdict writable
    fi

    if runc_container hostpid host-pid; then
        enclosing_checks
        check "$name" '.stepmon.processes.source' '== "taskstats"'
        check "$name" '.stepmon.processes.lostAtMost' '== 0'
        check "$name" '[.stepmon.processes.commands[] | select(.command == "stepmon-tree") | .count] | add' '== 4'
        doctor_checks hostpid "a cgroup namespace with a read-only cgroupfs, the host's pid namespace, CAP_NET_ADMIN, so per-process records come from taskstats where it shares the host's network namespace too$" missing
        check "$name-doctor" "$CONTAINER_HINT" '| test("--cgroupns=private") and ($v | test("per-process") | not)'
        check "$name-doctor" '.checks[] | select(.name == "per-process records") | .status' '== "ok"'
        runc_verdict host-pid
    fi

    # crun (Debian's 1.8) runs the read-only container the same way.
    if runc_container ro read-only crun; then
        enclosing_checks
        check "$name" '.stepmon.processes.source' '== "sampled"'
        doctor_checks ro 'a cgroup namespace with a read-only cgroupfs, a pid namespace of its own, no CAP_NET_ADMIN, so per-process records are sampled$' missing
        runc_verdict read-only
    fi

    # The kernel takes a taskstats listener in any network namespace but
    # sends records in the initial one only: doctor must not promise them.
    echo
    echo "==> runc: stepmon doctor in the host's pid namespace with CAP_NET_ADMIN, a network namespace of its own"
    name=runc-hostpid-ownnet
    mkdir -p /tmp/$name
    timeout 120 runc run --no-pivot --bundle /runc/hostpid-ownnet stepmon-hostpid-ownnet </dev/null 2>&1
    cp /tmp/$name/doctor.json /tmp/$name.json
    : >/tmp/$name.checks
    check $name '.checks[] | select(.name == "per-process records") | .status' '== "missing"'
    check $name '.checks[] | select(.name == "per-process records") | .reason' '| test("no exit record arrived.*initial network namespace")'
    check $name '.checks[] | select(.name == "per-process records") | .hint' '| test("--network=host")'
    verify $name
    left=$(find /sys/fs/cgroup -mindepth 1 -type d -name 'stepmon-*' | tr '\n' ' ')
    if [ -z "$left" ]; then pass "runc: no container's cgroup left"; else fail "runc: left $left"; fi
    echo "guest: the runc and crun containers took $(($(date +%s) - runc_start)) s"
}

runc_checks

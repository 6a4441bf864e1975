# shellcheck shell=sh disable=SC2016 # jq programs in single quotes
# What a measured step costs in the pure cgroup v2 boot, sourced by
# tests.sh last: reported, not gated (TCG emulates every instruction, so
# these times say how stepmon compares with its peers in the same guest, not
# what it costs on hardware; and the builder is the debug build the tier's
# tests use). The example builder (runner/examples/builder.rs) runs N steps
# of /bin/true at P=1 and P=16, measured and --plain; the floor
# (benches/floor/floor.c, static C) and `stepmon run -q` are timed as one
# process per step through the builder's --plain. Fails only when a run
# itself fails (a step that errs, a builder that cannot start).

# cost_wall NAME ARGS...: runs the builder with ARGS and sets WALL to its
# total wall seconds (0 when it failed); a failed step or run fails NAME.
# Called in this shell, never in $(...): a failure must count.
cost_wall() {
    name=$1
    shift
    WALL=0
    # One directory and this stdout for every step, as the floor's and GNU
    # time's steps run (not a fresh directory and a pipe per action).
    stepmon-builder --dir /tmp --inherit-stdout "$@" >"/tmp/cost-$name.jsonl" 2>"/tmp/cost-$name.err"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "cost $name: the builder exited $rc: $(tail -n 3 "/tmp/cost-$name.err" | tr '\n' ' ')"
        return
    fi
    failed=$(tail -n 1 "/tmp/cost-$name.jsonl" | jq -r '.failed')
    [ "$failed" = 0 ] || fail "cost $name: $failed steps failed"
    WALL=$(tail -n 1 "/tmp/cost-$name.jsonl" | jq -r '.wallSeconds')
}

# per_step_ms A B N: (A - B) / N seconds in ms, two decimals.
per_step_ms() {
    echo "$1 $2 $3" | awk '{ printf "%.2f", ($1 - $2) / $3 * 1000 }'
}

cost_report() {
    echo
    echo "==> what a measured step costs in this guest (TCG, debug builder; reported, not gated)"
    n=100
    # One round to warm up the page cache and the binaries.
    cost_wall warm --steps 10 --parallel 1 -- /bin/true
    cost_wall plain1 --steps $n --parallel 1 --plain -- /bin/true
    plain1=$WALL
    cost_wall measured1 --steps $n --parallel 1 -- /bin/true
    measured1=$WALL
    cost_wall plain16 --steps $n --parallel 16 --plain -- /bin/true
    plain16=$WALL
    cost_wall measured16 --steps $n --parallel 16 -- /bin/true
    measured16=$WALL
    cost_wall floor --steps $n --parallel 1 --plain -- stepmon-floor /bin/true
    floor=$WALL
    cost_wall cli --steps 20 --parallel 1 --plain -- stepmon run -q -- /bin/true
    cli=$WALL
    plain20=$(echo "$plain1 $n" | awk '{ print $1 / $2 * 20 }')
    echo "guest cost: builder P=1 per-step overhead $(per_step_ms "$measured1" "$plain1" $n) ms" \
        "(measured $measured1 s, --plain $plain1 s for $n steps of /bin/true)"
    echo "guest cost: builder P=16 total wall $(echo "$measured16 $plain16" | awk '{ printf "%.2f", $1 / $2 }')x --plain's" \
        "($measured16 s vs $plain16 s)"
    echo "guest cost: the builder's own per-step overhead at P=1, p50 / p99:" \
        "$(head -n "$n" /tmp/cost-measured1.jsonl | jq -s -r '[.[].overheadSeconds] | sort | "\(.[length / 2 | floor] * 1000 | . * 100 | round / 100) / \(.[length * 99 / 100 | floor] * 1000 | . * 100 | round / 100) ms"')"
    echo "guest cost: floor adds $(per_step_ms "$floor" "$plain1" $n) ms a process;" \
        "stepmon run -q adds $(per_step_ms "$cli" "$plain20" 20) ms a process"
    # Each step was measured: its memory from its own cgroup v2.
    check_cost=$(head -n "$n" /tmp/cost-measured1.jsonl | jq -s -r '[.[] | select(.memorySource != "cgroupV2")] | length')
    if [ "$check_cost" = 0 ]; then
        pass "cost: every measured step's memory came from its own cgroup v2"
    else
        fail "cost: $check_cost measured steps without their own cgroup v2: $(grep -v cgroupV2 /tmp/cost-measured1.jsonl | head -n 2 | tr '\n' ' ')"
    fi
}

cost_report

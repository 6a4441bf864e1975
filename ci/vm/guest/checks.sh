# shellcheck shell=sh disable=SC2016 # jq programs in single quotes
# The step/check/verify helpers both boots' tests use (sourced after /init,
# which defines pass/fail/finish). Each boot's file defines `step_checks
# NAME`: the checks every step of that boot gets.

# shellcheck disable=SC2034 # used by the files that source this one
MIB=1048576
# shellcheck disable=SC2034 # used by the files that source this one
LAST='.resourceUsage.samples[-1]'

# step NAME EXPECTED_STATUS STEPMON_RUN_ARGS... : runs `stepmon run -o
# /tmp/NAME.json STEPMON_RUN_ARGS...` (its output goes to the console and
# stays in /tmp/NAME.log), checks its exit status and queues the checks
# every step of this boot gets (step_checks); the step's own checks follow
# with `check`, and `verify` evaluates them all.
step() {
    name=$1
    expected=$2
    shift 2
    echo
    echo "==> step $name: stepmon run $*"
    stepmon run -o "/tmp/$name.json" "$@" >"/tmp/$name.log" 2>&1
    rc=$?
    cat "/tmp/$name.log"
    if [ "$rc" -eq "$expected" ]; then
        pass "$name: stepmon exited $rc"
    else
        fail "$name: stepmon exited $rc, expected $expected"
    fi
    : >"/tmp/$name.checks"
    step_checks "$name"
}

# check NAME JQ_EXPR CONDITION: queues "(JQ_EXPR) CONDITION" (CONDITION may
# name the value as $v) for `verify NAME`. One line each (no tab, no newline).
check() {
    printf '%s\t%s\n' "$2" "$3" >>"/tmp/$1.checks"
}

# verify NAME: evaluates the queued checks on /tmp/NAME.json in one jq run
# (starting jq costs about 0.3 s of emulated CPU), printing each value.
verify() {
    # Its own variable: `name` is the callers' (a check of "$name-second"
    # must not rename the step the caller goes on with).
    vname=$1
    tab=$(printf '\t')
    program=
    i=0
    while IFS=$tab read -r expr cond; do
        i=$((i + 1))
        program="$program (try (($expr) as \$v | [$i, (\$v != null and (\$v $cond)), (\$v | tojson)])
            catch [$i, false, \"jq: \\(.)\"]),"
    done <"/tmp/$vname.checks"
    jq -r "${program%,} | @tsv" "/tmp/$vname.json" >"/tmp/$vname.verdicts" 2>&1
    i=0
    fails_before=$FAILS
    while IFS=$tab read -r expr cond; do
        i=$((i + 1))
        verdict=$(awk -F '\t' -v i="$i" '$1 == i { print $2 "\t" $3 }' "/tmp/$vname.verdicts")
        case $verdict in
            "true$tab"*) pass "$vname: $expr = ${verdict#*"$tab"} ($cond)" ;;
            "false$tab"*) fail "$vname: $expr = ${verdict#*"$tab"}, expected $cond" ;;
            *) fail "$vname: $expr: no verdict (no JSON report? jq said: $(head -c 300 "/tmp/$vname.verdicts"))" ;;
        esac
    done <"/tmp/$vname.checks"
    if [ "$FAILS" -gt "$fails_before" ]; then
        # What a failed step measured, kept with the FAIL lines (finish
        # prints them again at the end of the console).
        # (A document that is not a run's, e.g. doctor's, is shown whole.)
        detail="DETAIL $vname: $(jq -c "if .resourceUsage then {summary: .stepmon.summary, sources: .stepmon.sources, samples: [.resourceUsage.samples[] | {t: .timestamp, pids: .pidsStat.current, mem: .stepmon.memoryCurrent, peak: .memoryStat.peak, cpu: .cpuStat.usageNanos, missing: [.stepmon.missing[]? | .field + \": \" + .reason]}]} else . end" "/tmp/$vname.json" 2>&1 | head -c 4000)"
        echo "$detail"
        echo "$detail" >>"$FAIL_LIST"
    fi
}

# shellcheck shell=bash
# Shared by scripts/fuzz-smoke and scripts/fuzz-long (sourced, not run).
# Expects ROOT (the repository root) to be set by the caller.
#
# Builds every target of fuzz/ once with `cargo +nightly fuzz build -O -a`
# (optimised, debug assertions and overflow checks on, AddressSanitizer on)
# and runs the built binaries directly, so a long campaign keeps fuzzing the
# code it started with even if the tree changes meanwhile.

FUZZ_DIR="$ROOT/fuzz"
# Per-input time limit (s): the parsers take microseconds on a few KiB, so a
# slow input is a bug (e.g. quadratic behaviour), not bad luck.
FUZZ_TIMEOUT="${FUZZ_TIMEOUT:-10}"

log() { printf '%s: %s\n' "${SCRIPT_NAME:-fuzz}" "$*" >&2; }

# Installs the nightly toolchain and cargo-fuzz when missing.
ensure_tools() {
    if ! rustup run nightly rustc --version >/dev/null 2>&1; then
        log "installing the nightly toolchain (cargo fuzz needs it)"
        rustup toolchain install nightly --profile minimal
    fi
    if ! cargo fuzz --version >/dev/null 2>&1; then
        log "installing cargo-fuzz"
        cargo install cargo-fuzz --locked
    fi
}

# Builds all targets once; sets TARGETS (array) and BIN_DIR.
build_targets() {
    local triple
    triple="$(rustc +nightly -vV | sed -n 's/^host: //p')"
    BIN_DIR="$FUZZ_DIR/target/$triple/release"
    mapfile -t TARGETS < <(cd "$FUZZ_DIR" && cargo fuzz list)
    if [ "${#TARGETS[@]}" -eq 0 ]; then
        log "no fuzz targets found in $FUZZ_DIR"
        return 1
    fi
    log "building ${#TARGETS[@]} targets (cargo +nightly fuzz build -O -a)"
    (cd "$FUZZ_DIR" && cargo +nightly fuzz build -O -a)
    local t
    for t in "${TARGETS[@]}"; do
        [ -x "$BIN_DIR/$t" ] || { log "built binary missing: $BIN_DIR/$t"; return 1; }
    done
}

# Executions count from a libFuzzer log: the final stats line, else the
# `#N DONE` status line, else "?".
executions_of() {
    local log_file="$1" n
    n="$(grep -a 'stat::number_of_executed_units:' "$log_file" | tail -n1 | awk '{print $2}' || true)"
    if [ -z "$n" ]; then
        n="$(grep -aoE '^#[0-9]+[[:space:]]+DONE' "$log_file" | tail -n1 | tr -dc '0-9' || true)"
    fi
    printf '%s' "${n:-?}"
}

# What went wrong, from a failed run's log: kind, panic message, artifact.
failure_of() {
    local log_file="$1" rc="$2" kind detail artifact
    if grep -aq 'ERROR: libFuzzer: timeout' "$log_file"; then
        kind="timeout (an input took more than ${FUZZ_TIMEOUT}s)"
    elif grep -aq 'ERROR: LeakSanitizer' "$log_file"; then
        kind="leak"
    elif grep -aq 'ERROR: libFuzzer: out-of-memory' "$log_file"; then
        kind="out-of-memory"
    elif grep -aq 'ERROR: AddressSanitizer' "$log_file"; then
        kind="memory error (AddressSanitizer)"
    elif grep -aq 'panicked at' "$log_file"; then
        kind="panic"
    elif grep -aq 'ERROR: libFuzzer: deadly signal' "$log_file"; then
        kind="crash (deadly signal)"
    else
        kind="exit status $rc"
    fi
    detail="$(grep -a -m1 -A1 'panicked at' "$log_file" | tr '\n' ' ' | cut -c1-300 || true)"
    artifact="$(grep -aoE 'Test unit written to [^ ]+' "$log_file" | tail -n1 | sed 's/^Test unit written to //' || true)"
    printf '%s' "$kind"
    [ -n "$detail" ] && printf ' | %s' "$detail"
    [ -n "$artifact" ] && printf ' | input: %s' "$artifact"
    return 0
}

# run_target TARGET SECONDS CORPUS_DIR LOG_FILE RESULT_FILE [nice level]
# Copies the committed seeds into CORPUS_DIR (libFuzzer writes new inputs
# only there, never into fuzz/seeds), replays fuzz/regressions/TARGET,
# fuzzes for SECONDS and writes one tab-separated line
# "target<TAB>seconds<TAB>executions<TAB>result" to RESULT_FILE.
run_target() {
    local target="$1" seconds="$2" corpus="$3" log_file="$4" result_file="$5" nice_level="${6:-0}"
    local artifacts="$FUZZ_DIR/artifacts/$target/" regressions="$FUZZ_DIR/regressions/$target"
    local extra=() rc=0 start end result
    mkdir -p "$corpus" "$artifacts"
    if [ -d "$FUZZ_DIR/seeds/$target" ]; then
        cp -R "$FUZZ_DIR/seeds/$target/." "$corpus/"
    fi
    if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
        extra+=("$regressions")
    fi
    start="$(date +%s)"
    nice -n "$nice_level" "$BIN_DIR/$target" \
        -max_total_time="$seconds" -timeout="$FUZZ_TIMEOUT" -print_final_stats=1 \
        -artifact_prefix="$artifacts" "$corpus" "${extra[@]}" >"$log_file" 2>&1 || rc=$?
    end="$(date +%s)"
    if [ "$rc" -eq 0 ]; then
        result="ok"
    else
        result="FAILED: $(failure_of "$log_file" "$rc")"
    fi
    printf '%s\t%s\t%s\t%s\n' "$target" "$((end - start))" "$(executions_of "$log_file")" "$result" >"$result_file"
}

# run_all SECONDS JOBS WORK_DIR CORPUS_ROOT NICE_LEVEL
# Runs every target, at most JOBS at a time; logs go to WORK_DIR/<t>.log,
# result lines to WORK_DIR/<t>.result. Prints one line per finished target.
run_all() {
    local seconds="$1" jobs="$2" work="$3" corpus_root="$4" nice_level="$5"
    local t running=0
    mkdir -p "$work" "$corpus_root"
    rm -f "$work"/*.result
    for t in "${TARGETS[@]}"; do
        if [ "$running" -ge "$jobs" ]; then
            wait -n || true
            running=$((running - 1))
        fi
        (
            run_target "$t" "$seconds" "$corpus_root/$t" "$work/$t.log" "$work/$t.result" "$nice_level"
            IFS=$'\t' read -r name secs execs result <"$work/$t.result"
            log "$(printf '%-20s %4ss %12s execs  %s' "$name" "$secs" "$execs" "$result")"
        ) &
        running=$((running + 1))
    done
    wait
}

# Prints the result table of WORK_DIR and returns 1 if any target failed.
summarize() {
    local work="$1" t failed=0
    printf '%-20s %8s %14s  %s\n' target seconds executions result
    for t in "${TARGETS[@]}"; do
        if [ ! -f "$work/$t.result" ]; then
            printf '%-20s %8s %14s  %s\n' "$t" - - "FAILED: no result (runner died)"
            failed=1
            continue
        fi
        IFS=$'\t' read -r name secs execs result <"$work/$t.result"
        printf '%-20s %8s %14s  %s\n' "$name" "$secs" "$execs" "$result"
        [ "$result" = ok ] || failed=1
    done
    return "$failed"
}

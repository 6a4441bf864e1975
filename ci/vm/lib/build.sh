# shellcheck shell=bash
# Static binaries for the guest (which has no libc): the test binaries of
# the crates that read the live kernel, and `stepmon` itself. Built in their
# own target dir (target/vm) so they never wait for, or invalidate, the
# workspace's normal build.

# package → test targets to run in the guest. `lib`/`bin` are the unit
# tests of the library/binary; other names are tests/<name>.rs. These are
# the tests that read the live kernel (they adapt to the host, and in the
# guest must take their full pure-v2 path) plus the unit tests of the same
# crates, and the CLI's tests of the real binary (CARGO_BIN_EXE_stepmon: the
# guest has the binary at that same path).
VM_TESTS=(
    "stepmon-sampler lib cgroup_probe_live recorder_live"
    "stepmon-sysusage lib live"
    "stepmon-netns-stats lib netns_root"
    "stepmon-fdread lib"
    "stepmon-runner lib library_step builders"
    "stepmon bin run_live gc_live offline spawn_live ladder_live advice_live build_live"
)

# Sets VM_TARGET and VM_RUSTFLAGS: musl if rustup can add it, else glibc
# with a static C runtime.
vm_pick_target() {
    VM_TARGET=x86_64-unknown-linux-musl
    VM_RUSTFLAGS=${RUSTFLAGS:-}
    if rustup target list --installed 2>/dev/null | grep -x "$VM_TARGET" >/dev/null; then
        return
    fi
    if rustup target add "$VM_TARGET" >"$VM_WORK/rustup.log" 2>&1; then
        return
    fi
    vm_say "warning: rustup cannot add $VM_TARGET ($(tail -n 1 "$VM_WORK/rustup.log")); using glibc with crt-static"
    VM_TARGET=x86_64-unknown-linux-gnu
    VM_RUSTFLAGS="$VM_RUSTFLAGS -C target-feature=+crt-static"
}

# Builds everything; writes "<package> <target> <path>" lines to
# $VM_WORK/tests.txt and sets VM_STEPMON_BIN, VM_TREE_BIN and VM_WORKER_BIN.
vm_build() {
    vm_pick_target
    local line pkg rest t words args=()
    local -A flags=()
    for line in "${VM_TESTS[@]}"; do
        read -r pkg rest <<<"$line"
        args+=(-p "$pkg")
        for t in $rest; do
            case $t in
                lib) flags[--lib]=1 ;;
                bin) flags[--bins]=1 ;;
                *) flags["--test $t"]=1 ;;
            esac
        done
    done
    # One invocation, so that features are unified once (target flags apply
    # to every package that has such a target; the count check below tells
    # when a name matched more than intended).
    # shellcheck disable=SC2206 # "--test NAME" is meant to split
    args+=(${!flags[@]})
    # No debug info: the binaries go into the guest's RAM (about 6x smaller;
    # symbol names for backtraces stay).
    export CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_TEST_DEBUG=0
    vm_say "building static test binaries and stepmon for $VM_TARGET (target/vm)"
    RUSTFLAGS=$VM_RUSTFLAGS nice -n 10 cargo test --no-run --target "$VM_TARGET" --target-dir "$VM_TARGET_DIR" \
        --message-format=json-render-diagnostics "${args[@]}" >"$VM_WORK/cargo-tests.json" ||
        vm_die "building the test binaries failed"
    # Cargo lists every artifact; keep the runnable test harnesses. The
    # package name comes from the package id (…#name@version or …/name#version).
    jq -r 'select(.reason == "compiler-artifact" and .profile.test and .executable != null
            and (.target.kind | index("example") | not))
        | (.package_id | capture("(?<n>[A-Za-z0-9_-]+)[@#][0-9][^#@]*$").n) as $pkg
        | "\($pkg) \(if .target.kind[0] == "test" then .target.name else .target.kind[0] end) \(.executable)"' \
        "$VM_WORK/cargo-tests.json" | sort >"$VM_WORK/tests.txt"
    # The CLI's integration tests make cargo build the binary itself (the
    # file CARGO_BIN_EXE_stepmon names); the workloads use the same file.
    VM_STEPMON_BIN=$(jq -r 'select(.reason == "compiler-artifact" and .target.name == "stepmon"
        and (.target.kind | index("bin")) and (.profile.test | not) and .executable != null) | .executable' \
        "$VM_WORK/cargo-tests.json" | tail -n 1)
    [[ -x $VM_STEPMON_BIN ]] || vm_die "cargo did not report the stepmon binary"
    # The tree of known memory the runner's builders test runs, and the
    # worker of known memory and CPU the CLI's advice test runs, as plain
    # executables (`cargo test` would build the examples as test harnesses).
    # The example builder, for the guest's report of what a step costs.
    RUSTFLAGS=$VM_RUSTFLAGS nice -n 10 cargo build -p stepmon-runner --example tree --example worker --example builder \
        --target "$VM_TARGET" --target-dir "$VM_TARGET_DIR" --message-format=json-render-diagnostics \
        >"$VM_WORK/cargo-tree.json" || vm_die "building the tree, worker and builder examples failed"
    VM_TREE_BIN=$(jq -r 'select(.reason == "compiler-artifact" and .target.name == "tree"
        and (.target.kind | index("example")) and .executable != null) | .executable' \
        "$VM_WORK/cargo-tree.json" | tail -n 1)
    [[ -x $VM_TREE_BIN ]] || vm_die "cargo did not report the tree example"
    VM_WORKER_BIN=$(jq -r 'select(.reason == "compiler-artifact" and .target.name == "worker"
        and (.target.kind | index("example")) and .executable != null) | .executable' \
        "$VM_WORK/cargo-tree.json" | tail -n 1)
    [[ -x $VM_WORKER_BIN ]] || vm_die "cargo did not report the worker example"
    VM_BUILDER_BIN=$(jq -r 'select(.reason == "compiler-artifact" and .target.name == "builder"
        and (.target.kind | index("example")) and .executable != null) | .executable' \
        "$VM_WORK/cargo-tree.json" | tail -n 1)
    [[ -x $VM_BUILDER_BIN ]] || vm_die "cargo did not report the builder example"
    # The physical floor of a measured step (benches/floor/README.md),
    # static, for the same report.
    VM_FLOOR_BIN=$VM_WORK/floor
    gcc -O2 -static -o "$VM_FLOOR_BIN" "$VM_REPO/benches/floor/floor.c" ||
        vm_die "building the floor program (benches/floor/floor.c) failed"
    local expected=0
    for line in "${VM_TESTS[@]}"; do
        read -ra words <<<"$line"
        expected=$((expected + ${#words[@]} - 1))
    done
    [[ $(wc -l <"$VM_WORK/tests.txt") -eq $expected ]] ||
        vm_die "expected $expected test binaries, cargo reported: $(cat "$VM_WORK/tests.txt")"
    while read -r _ _ t; do
        vm_is_static "$t" || vm_die "$t is not statically linked"
    done <"$VM_WORK/tests.txt"
    vm_is_static "$VM_STEPMON_BIN" || vm_die "$VM_STEPMON_BIN is not statically linked"
    vm_is_static "$VM_TREE_BIN" || vm_die "$VM_TREE_BIN is not statically linked"
    vm_is_static "$VM_WORKER_BIN" || vm_die "$VM_WORKER_BIN is not statically linked"
    vm_is_static "$VM_BUILDER_BIN" || vm_die "$VM_BUILDER_BIN is not statically linked"
}

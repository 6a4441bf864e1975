# shellcheck shell=bash
# Capture mode, host side: unpacks the base64 tar the guest printed between
# STEPMON-VM-CAPTURE-BEGIN/END into the parser crates' fixtures:
#   cgroupfs-parse/tests/data/pure-v2-<release>/{step,parent,root}/<file>
#       + proc_self_cgroup.txt, proc_self_mountinfo.txt
#   sampler/tests/data/pure-v2-<release>/<file>   (the step's files, flat,
#       as the step probe reads them) + stepmon-run.json (the run's report)
# each with a README.md saying where the bytes come from. An existing folder
# of the same kernel release is replaced.

vm_store_capture() {
    local unpacked=$VM_WORK/capture
    rm -rf "$unpacked" && mkdir -p "$unpacked"
    sed -n '/^STEPMON-VM-CAPTURE-BEGIN$/,/^STEPMON-VM-CAPTURE-END$/p' "$VM_CONSOLE" |
        sed '1d;$d' | base64 -d | tar -x -C "$unpacked" ||
        vm_die "could not unpack the capture from the console log"
    local release
    release=$(cat "$unpacked/release")
    [[ $release =~ ^[0-9A-Za-z._+-]+$ ]] || vm_die "odd kernel release in the capture: $release"
    local parse=$VM_REPO/cgroupfs-parse/tests/data/pure-v2-$release
    local sampler=$VM_REPO/sampler/tests/data/pure-v2-$release
    rm -rf "$parse" "$sampler"
    mkdir -p "$parse" "$sampler"
    cp -r "$unpacked/step" "$unpacked/parent" "$unpacked/root" "$parse/"
    cp "$unpacked/proc_self_cgroup.txt" "$unpacked/proc_self_mountinfo.txt" "$parse/"
    cp "$unpacked"/step/* "$sampler/"
    cp "$unpacked/stepmon-run.json" "$sampler/stepmon-run.json"
    vm_capture_readme "$release" parse >"$parse/README.md"
    vm_capture_readme "$release" sampler >"$sampler/README.md"
    vm_say "captured $(find "$parse" -type f | wc -l) files into ${parse#"$VM_REPO"/}"
    vm_say "and $(find "$sampler" -type f | wc -l) into ${sampler#"$VM_REPO"/}"
}

# The README.md of a capture folder ($2: parse or sampler).
vm_capture_readme() {
    local release=$1
    # shellcheck disable=SC2016 # backquotes are Markdown here
    printf '# `pure-v2-%s/`: captured in a VM, not written by hand\n\n' "$release"
    # shellcheck disable=SC2016
    printf 'Written by `ci/vm/capture` on %s: Debian'"'"'s stock kernel `%s`\n' "$(date -u +%Y-%m-%d)" "$release"
    cat <<'EOF'
booted under qemu (TCG) with a pure cgroup v2 hierarchy (cgroup2 at
/sys/fs/cgroup, `cgroup_no_v1=all`, `psi=1`, cpu io memory pids enabled at the
root). The step ran under `stepmon run --memory-max 48M --cpus 0.5 --pids-max
64` and did what `ci/vm/guest/capture-step.sh` says (32 MiB of anonymous
memory held beside 8 children, 8 MiB O_DIRECT + 8 MiB buffered + fsync to a
virtio disk, a busy loop under cpu.max, one OOM kill), then copied with `cat`
every readable file of its own cgroup, of the run's parent cgroup and of the
root while it still ran. Byte-for-byte copies, nothing edited; run
`ci/vm/capture` again to replace them.

EOF
    if [[ $2 == parse ]]; then
        cat <<'EOF'
| here | what |
|---|---|
| `step/<file>` | the step's cgroup (`/sys/fs/cgroup/stepmon-run.<pid>.<start>/step`) |
| `parent/<file>` | the run's parent cgroup, created by stepmon |
| `root/<file>` | the root cgroup |
| `proc_self_cgroup.txt`, `proc_self_mountinfo.txt` | read from inside the step |

Tested by `tests/pure_v2_captures.rs`.
EOF
    else
        cat <<'EOF'
The step's cgroup files, flat, as the step probe opens them, and
`stepmon-run.json`, the report of that run (the files were copied before its
final sample). Tested by `tests/pure_v2_captures.rs`.
EOF
    fi
}

# shellcheck shell=bash
# Capture mode, host side: unpacks the base64 tar the guest printed between
# STEPMON-VM-CAPTURE-BEGIN/END into the parser crates' fixtures. The pure v2
# boot's:
#   cgroupfs-parse/tests/data/pure-v2-<release>/{step,parent,root}/<file>
#       + proc_self_cgroup.txt, proc_self_mountinfo.txt
#   sampler/tests/data/pure-v2-<release>/<file>   (the step's files, flat,
#       as the step probe reads them) + stepmon-run.json (the run's report)
# The cgroup v1 boot's:
#   cgroupfs-parse/tests/data/v1-<major.minor>/{memory,pids,cpu,cpuacct}/<file>
#       (the step's cgroup in each hierarchy) + proc_self_cgroup.txt,
#       proc_self_mountinfo.txt, stepmon-run.json
# each with a README.md saying where the bytes come from. An existing folder
# of the same name is replaced.

# vm_store_capture BOOT: unpacks the capture of boot BOOT (v2 or v1).
vm_store_capture() {
    local unpacked=$VM_WORK/capture
    rm -rf "$unpacked" && mkdir -p "$unpacked"
    sed -n '/^STEPMON-VM-CAPTURE-BEGIN$/,/^STEPMON-VM-CAPTURE-END$/p' "$VM_CONSOLE" |
        sed '1d;$d' | base64 -d | tar -x -C "$unpacked" ||
        vm_die "could not unpack the capture from the console log"
    local release
    release=$(cat "$unpacked/release")
    [[ $release =~ ^[0-9A-Za-z._+-]+$ ]] || vm_die "odd kernel release in the capture: $release"
    [[ $(cat "$unpacked/layout") == "$1" ]] || vm_die "the capture of the $1 boot says layout $(cat "$unpacked/layout")"
    if [[ $1 == v1 ]]; then
        vm_store_capture_v1 "$unpacked" "$release"
        return
    fi
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

# vm_capture_readme_head FOLDER COMMAND RELEASE: a capture README's title
# and first line (today's date, the command, the kernel release).
vm_capture_readme_head() {
    # shellcheck disable=SC2016 # backquotes are Markdown here
    printf '# `%s/`: captured in a VM, not written by hand\n\n' "$1"
    # shellcheck disable=SC2016
    printf 'Written by `%s` on %s: Debian'"'"'s stock kernel `%s`\n' "$2" "$(date -u +%Y-%m-%d)" "$3"
}

# The README.md of a capture folder ($2: parse or sampler).
vm_capture_readme() {
    local release=$1
    vm_capture_readme_head "pure-v2-$release" ci/vm/capture "$release"
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

# vm_store_capture_v1 UNPACKED RELEASE: the v1 boot's capture into
# cgroupfs-parse/tests/data/v1-<major.minor>/, one folder per hierarchy.
vm_store_capture_v1() {
    local unpacked=$1 release=$2
    local dest
    dest=$VM_REPO/cgroupfs-parse/tests/data/v1-$(cut -d. -f1,2 <<<"$release")
    rm -rf "$dest" && mkdir -p "$dest"
    local hierarchy
    for hierarchy in memory pids cpu,cpuacct; do
        [[ -d $unpacked/$hierarchy ]] || vm_die "the v1 capture has no $hierarchy folder"
        cp -r "$unpacked/$hierarchy" "$dest/"
    done
    cp "$unpacked/proc_self_cgroup.txt" "$unpacked/proc_self_mountinfo.txt" "$unpacked/stepmon-run.json" "$dest/"
    vm_capture_readme_v1 "${dest##*/}" "$release" "$unpacked/hierarchies" >"$dest/README.md"
    vm_say "captured $(find "$dest" -type f | wc -l) files into ${dest#"$VM_REPO"/}"
}

# The README.md of the v1 capture folder $1 ($2: the kernel release, $3: the
# step's cgroup per hierarchy, `CONTROLLERS:PATH` a line).
vm_capture_readme_v1() {
    vm_capture_readme_head "$1" "STEPMON_VM_BOOTS=v1 ci/vm/capture" "$2"
    cat <<'EOF'
booted under qemu (TCG, 2 vCPUs, 1 GiB, no swap) with cgroup v1 hierarchies
only, as systemd mounts them in its legacy mode (`ci/vm/guest/init`; no
cgroup2 mounted). The step ran under `stepmon run --memory-max 48M --cpus 0.5
--pids-max 64`, which set `memory.limit_in_bytes`, `cpu.cfs_quota_us` and
`pids.max` on the step's own cgroups in the memory, cpu,cpuacct and pids
hierarchies, and did what `ci/vm/guest/capture-step.sh` says (32 MiB of
anonymous memory held beside 8 children, 8 MiB O_DIRECT + 8 MiB buffered +
fsync to a virtio disk, a busy loop for 1.5 s under the 0.5-CPU quota, one OOM
kill of a 64 MiB `dd`), then copied with `cat` every readable file of those
three cgroups while it still ran. Byte-for-byte copies, nothing edited; run
the capture again to replace them.

| here | what |
|---|---|
| `memory/`, `pids/`, `cpu,cpuacct/` | the step's cgroup in that hierarchy (`cpu` and `cpuacct` are co-mounted) |
| `proc_self_cgroup.txt`, `proc_self_mountinfo.txt` | read from inside the step |
| `stepmon-run.json` | the report of that run (the files were copied before its final sample) |

Tested by `tests/v1_6_1_captures.rs`. The step's cgroups (`CONTROLLERS:PATH`):

EOF
    sed 's/^/    /' "$3"
    cat <<'EOF'

Files whose read fails (write-only or event files) are not captured.
EOF
}

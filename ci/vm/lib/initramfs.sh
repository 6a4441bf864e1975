# shellcheck shell=bash
# The guest's whole userland, as an uncompressed initramfs (unpacking a
# compressed one costs seconds of emulated CPU): busybox, the kernel modules,
# the static test binaries and stepmon, a few host programs with their
# shared libraries (iproute2's `ip` for `ip netns`, which busybox's `ip`
# lacks; `getconf`; `jq` for the JSON checks; coreutils' `env`, whose
# `--default-signal` the tests that signal stepmon start it with, which
# busybox's lacks; Debian's python3 with a trimmed
# standard library, for the CLI tests' workloads) and the /init of
# ci/vm/guest.

# Host programs copied into the guest together with their libraries.
VM_HOST_PROGRAMS=(ip getconf jq env)

# Packs $VM_WORK/initramfs.cpio.
vm_pack_initramfs() {
    local root=$VM_WORK/initramfs
    rm -rf "$root"
    mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,lib,lib64,proc,sys,dev,tmp,run,mnt/scratch,etc,root,tests}
    chmod 1777 "$root/tmp"
    # iproute2 keeps named network namespaces in /var/run/netns.
    mkdir -p "$root/var" && ln -s ../run "$root/var/run"

    # busybox and one link per applet, in /bin (behind /usr/bin in PATH, so
    # the host's ip wins over busybox's).
    cp "$(command -v busybox)" "$root/bin/busybox"
    local applet
    for applet in $("$root/bin/busybox" --list); do
        [[ $applet == busybox ]] || ln -sf busybox "$root/bin/$applet"
    done

    local program
    for program in "${VM_HOST_PROGRAMS[@]}"; do
        vm_copy_dynamic "$(command -v "$program")" "$root"
    done

    # Kernel modules, loaded by /init in modules.load order.
    mkdir -p "$root/lib/modules"
    cp "$VM_KERNEL_DIR"/modules/*.ko "$VM_KERNEL_DIR/modules/modules.load" "$root/lib/modules/"

    vm_copy_python "$root"

    # stepmon at a fixed path for the workloads, and where the CLI's tests
    # expect it.
    strip -o "$root/usr/local/bin/stepmon" "$VM_STEPMON_BIN"
    mkdir -p "$root$(dirname "$VM_STEPMON_BIN")"
    cp "$root/usr/local/bin/stepmon" "$root$VM_STEPMON_BIN"
    # The runner's builders test runs this tree (STEPMON_TREE_PROGRAM, set by /init).
    strip -o "$root/usr/local/bin/stepmon-tree" "$VM_TREE_BIN"
    # The CLI's advice test runs this worker (STEPMON_WORKER_PROGRAM, set by /init).
    strip -o "$root/usr/local/bin/stepmon-worker" "$VM_WORKER_BIN"
    # The pure v2 boot's cost report (guest/tests-cost.sh) runs these two.
    strip -o "$root/usr/local/bin/stepmon-builder" "$VM_BUILDER_BIN"
    strip -o "$root/usr/local/bin/stepmon-floor" "$VM_FLOOR_BIN"
    vm_pack_runc "$root"
    # Test binaries: /tests/<package>.<target>, listed in /tests/list.
    : >"$root/tests/list"
    local pkg target path
    while read -r pkg target path; do
        strip -o "$root/tests/$pkg.$target" "$path"
        echo "$pkg.$target" >>"$root/tests/list"
    done <"$VM_WORK/tests.txt"
    # Tests that read their data files at run time find them at the path
    # cargo compiled in (CARGO_MANIFEST_DIR), as on the host.
    local data
    for data in "$VM_REPO"/*/tests/data; do
        mkdir -p "$root$(dirname "$data")"
        cp -r "$data" "$root$(dirname "$data")/"
    done

    cp "$VM_DIR/guest/init" "$root/init"
    mkdir -p "$root/guest"
    cp "$VM_DIR"/guest/*.sh "$root/guest/"
    chmod 0755 "$root/init" "$root"/guest/*.sh
    # nobody: the unprivileged runs of cli/tests/ladder_live.rs (busybox su).
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$root/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

    (cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$VM_WORK/initramfs.cpio"
    vm_say "initramfs: $(du -m "$VM_WORK/initramfs.cpio" | cut -f1) MiB"
}

# Copies the dynamically linked program $1 and every library ldd lists for
# it (and the loader) into the root $2, at the same paths.
vm_copy_dynamic() {
    local program=$1 root=$2 lib
    [[ -x $program ]] || vm_die "no program $program to copy into the guest"
    mkdir -p "$root$(dirname "$program")"
    cp -L "$program" "$root$program"
    for lib in $(ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# Debian's python3 (/usr/bin/python3, as the CLI tests look for it) and its
# standard library without the parts no test workload imports, with the
# compiled .pyc files (compiling at every start costs seconds under TCG).
vm_copy_python() {
    local root=$1 real lib
    real=$(readlink -f /usr/bin/python3)
    vm_copy_dynamic "$real" "$root"
    ln -sf "$(basename "$real")" "$root/usr/bin/python3"
    lib=/usr/lib/$(basename "$real")
    [[ -d $lib ]] || vm_die "no standard library at $lib"
    mkdir -p "$root$lib"
    tar -C "$lib" -cf - --exclude=./test --exclude=./idlelib --exclude=./tkinter --exclude=./lib2to3 \
        --exclude=./ensurepip --exclude=./pydoc_data --exclude='./config-*' --exclude=./turtledemo \
        --exclude=./distutils --exclude=./site-packages --exclude=./dist-packages --exclude='*.opt-?.pyc' . |
        tar -C "$root$lib" -xf -
}

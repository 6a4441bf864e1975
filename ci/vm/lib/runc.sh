# shellcheck shell=bash
# runc in the pure cgroup v2 guest (guest/tests-runc.sh): Debian's runc with
# its libraries, and three image-less bundles made by scripts/oci-rootfs
# (the rootfs builder the host's container tests use), sharing one rootfs
# with busybox, the static stepmon and the tree of known memory:
#   ro      a cgroup namespace and the read-only /sys/fs/cgroup of runc's
#           spec (Docker's and Podman's default on cgroup v2)
#   rw      the same with /sys/fs/cgroup writable (Podman's --cgroupns=private
#           --security-opt unmask=/sys/fs/cgroup, Docker's --privileged)
#   hostpid the ro container in the host's pid and network namespaces with
#           CAP_NET_ADMIN (docker run --pid=host --network=host --cap-add
#           NET_ADMIN): what the taskstats listener needs (its records go to
#           the host's network namespace only)
#   hostpid-ownnet  the same in a network namespace of its own: `stepmon
#           doctor` only, which must say that no record arrives

# The container's command: doctor, then the 100 MiB tree under `stepmon run`
# (exit status 7 kept), beside another process of the container (the
# no-internal-process rule in the writable one).
# shellcheck disable=SC2016 # the container's shell expands it, not this one
VM_RUNC_COMMAND='stepmon doctor --json >/out/doctor.json 2>/out/doctor.err
sleep 600 & other=$!
stepmon run -o /out/run.json -- sh -c "stepmon-tree; exit 7" >/out/run.log 2>&1; rc=$?
kill $other; exit $rc'

# The writable container runs a second step: the first moved the container's
# processes (and the shell running this) into stepmon-supervisor, and the
# second must again get a cgroup of its own with every controller.
# shellcheck disable=SC2016 # the container's shell expands it, not this one
VM_RUNC_COMMAND_RW="${VM_RUNC_COMMAND%%kill *}"'stepmon run -o /out/run2.json -- true >/out/run2.log 2>&1
kill $other; exit $rc'

# Adds runc and the bundles (/runc/<name>, output bound from /tmp/runc-<name>)
# to the initramfs root $1 (stepmon and the tree already in it).
vm_pack_runc() {
    local root=$1 bin=/usr/local/bin
    vm_copy_dynamic "$(command -v runc)" "$root"
    vm_copy_dynamic "$(command -v crun)" "$root"
    vm_bundle ro --cgroupns --add "$root$bin/stepmon-tree:$bin/stepmon-tree" "$root/runc/ro" "$root$bin/stepmon" \
        -- sh -c "$VM_RUNC_COMMAND"
    # One copy of each binary in the initramfs (cpio keeps hard links).
    ln -f "$root$bin/stepmon" "$root/runc/ro/rootfs/bin/stepmon"
    ln -f "$root$bin/stepmon-tree" "$root/runc/ro/rootfs$bin/stepmon-tree"
    ln -f "$root/bin/busybox" "$root/runc/ro/rootfs/bin/busybox"
    vm_bundle rw --rootfs /runc/ro/rootfs --cgroupns --rw-cgroup "$root/runc/rw" - -- sh -c "$VM_RUNC_COMMAND_RW"
    vm_bundle hostpid --rootfs /runc/ro/rootfs --cgroupns --host-pid --host-net --cap CAP_NET_ADMIN \
        "$root/runc/hostpid" - -- sh -c "$VM_RUNC_COMMAND"
    vm_bundle hostpid-ownnet --rootfs /runc/ro/rootfs --cgroupns --host-pid --cap CAP_NET_ADMIN \
        "$root/runc/hostpid-ownnet" - -- sh -c 'stepmon doctor --json >/out/doctor.json'
}

# vm_bundle NAME OCI-ROOTFS-ARGS...: one bundle, its /out bound from /tmp/runc-NAME.
vm_bundle() {
    local name=$1
    shift
    "$VM_REPO/scripts/oci-rootfs" --out "/tmp/runc-$name" "$@" >"$VM_WORK/oci-rootfs.log" 2>&1 ||
        vm_die "scripts/oci-rootfs failed for the $name bundle: $(cat "$VM_WORK/oci-rootfs.log")"
}

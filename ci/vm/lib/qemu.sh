# shellcheck shell=bash
# Boots the guest under qemu and turns its console into a verdict.
#
# TCG (software emulation), never KVM: /dev/kvm on these machines is a PVM
# module that only runs PVM-aware guest kernels (qemu aborts with "failed to
# set MSR 0x10a"). The guest's CPU times are emulated: right for checking
# that numbers are read and add up, useless as performance figures.

# Seconds the whole qemu run may take before it is killed (and fails).
VM_TIMEOUT=${STEPMON_VM_TIMEOUT:-600}

# A fresh 256 MiB ext4 scratch disk (sparse) for the IO workloads.
vm_make_disk() {
    rm -f "$VM_WORK/scratch.img"
    truncate -s 256M "$VM_WORK/scratch.img"
    mkfs.ext4 -q -F -L scratch -E lazy_itable_init=0,lazy_journal_init=0 "$VM_WORK/scratch.img" >/dev/null ||
        vm_die "mkfs.ext4 of the scratch disk failed"
}

# Boots with /init in mode $1 (test or capture); the console goes to the
# terminal and to $VM_WORK/console.log. Sets VM_QEMU_RC.
vm_boot() {
    local mode=$1
    # psi=1: PSI on whatever the kernel's default. cgroup_no_v1=all: no v1
    # hierarchy can take a controller. panic=-1 + -no-reboot: a kernel panic
    # ends qemu instead of hanging until the timeout.
    local append="console=ttyS0 quiet loglevel=4 panic=-1 psi=1 cgroup_no_v1=all stepmon.mode=$mode"
    # STEPMON_VM_ROUNDS=N runs the stepmon workloads N times in one boot (a
    # hunt for a check that fails once in many runs; CI runs one round).
    append="$append stepmon.rounds=${STEPMON_VM_ROUNDS:-1}"
    vm_say "booting $(cat "$VM_KERNEL_DIR/release") under qemu (TCG, 2 vCPUs, timeout ${VM_TIMEOUT} s)"
    set +e
    timeout -k 10 "$VM_TIMEOUT" nice -n 10 qemu-system-x86_64 \
        -accel tcg -machine pc -smp 2 -m 1024 \
        -nographic -no-reboot -nic none \
        -kernel "$VM_KERNEL_DIR/vmlinux" -initrd "$VM_WORK/initramfs.cpio" -append "$append" \
        -drive "file=$VM_WORK/scratch.img,if=virtio,format=raw,cache=unsafe" \
        </dev/null 2>&1 | tr -d '\r' | tee "$VM_WORK/console.log"
    VM_QEMU_RC=${PIPESTATUS[0]}
    set -e
}

# 0 when the guest printed the PASS marker and qemu ended by itself.
vm_verdict() {
    local marker
    marker=$(grep -a -o 'STEPMON-VM-RESULT: [A-Z]*' "$VM_WORK/console.log" | tail -n 1 || true)
    if [[ $VM_QEMU_RC -eq 124 || $VM_QEMU_RC -eq 137 ]]; then
        vm_say "FAIL: the guest did not finish within ${VM_TIMEOUT} s (qemu killed)"
        return 1
    fi
    if [[ $VM_QEMU_RC -ne 0 ]]; then
        vm_say "FAIL: qemu exited with status $VM_QEMU_RC"
        return 1
    fi
    case $marker in
        'STEPMON-VM-RESULT: PASS') return 0 ;;
        'STEPMON-VM-RESULT: FAIL')
            vm_say "FAIL: the guest reported failures:"
            grep -a '^FAIL ' "$VM_WORK/console.log" | awk '!seen[$0]++' | sed 's/^/[vm]   /' >&2
            return 1
            ;;
        *) vm_say "FAIL: the guest printed no result marker (crashed or /init failed; console above)"; return 1 ;;
    esac
}

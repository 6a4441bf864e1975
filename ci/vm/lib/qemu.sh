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

# Boots with /init in mode $1 (test or capture) on the cgroup layout $2: v2
# (pure cgroup v2) or v1 (cgroup v1 hierarchies only); the console goes to
# the terminal and to $VM_WORK/console-$2.log (VM_CONSOLE). Sets VM_QEMU_RC.
vm_boot() {
    local mode=$1 cgroup=$2
    # psi=1: PSI on whatever the kernel's default. panic=-1 + -no-reboot: a
    # kernel panic ends qemu instead of hanging until the timeout.
    local append="console=ttyS0 quiet loglevel=4 panic=-1 psi=1 stepmon.mode=$mode stepmon.cgroup=$cgroup"
    # MiB of guest memory. The pure v2 boot gets 2 GiB: the CLI's advice
    # test runs six workers of 120 MiB (723 MiB) at once without a limit,
    # and beside the initramfs (145 MiB, in RAM) 1 GiB leaves about that
    # much free, no margin. 2 GiB measured no slower.
    local memory=1024
    case $cgroup in
        # No v1 hierarchy can take a controller.
        v2) append="$append cgroup_no_v1=all" memory=2048 ;;
        # /init mounts the v1 hierarchies. Nothing else is needed on 6.1:
        # the memory controller's v1 files are there without a
        # cgroup.memory= option, and swap accounting is on without
        # swapaccount=1 (the memory root lists memory.memsw.*; the guest has
        # no swap anyway).
        v1) ;;
        # systemd as PID 1 on the Debian root filesystem (/init hands over),
        # pure cgroup v2 as systemd sets it up.
        systemd) append="$append cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1 init=/lib/systemd/systemd" ;;
        *) vm_die "unknown cgroup boot $cgroup (v2, v1 or systemd)" ;;
    esac
    # The systemd boot's root filesystem, the second disk (/dev/vdb):
    # snapshot=on keeps the cached image as it is.
    local rootfs=()
    [[ $cgroup == systemd ]] && rootfs=(-drive "file=$VM_ROOTFS,if=virtio,format=raw,snapshot=on")
    # STEPMON_VM_ROUNDS=N runs the stepmon workloads N times in one boot (a
    # hunt for a check that fails once in many runs; CI runs one round).
    append="$append stepmon.rounds=${STEPMON_VM_ROUNDS:-1}"
    VM_CONSOLE=$VM_WORK/console-$cgroup.log
    vm_say "booting $(cat "$VM_KERNEL_DIR/release") under qemu, cgroup $cgroup (TCG, 2 vCPUs, $memory MiB, timeout ${VM_TIMEOUT} s)"
    set +e
    timeout -k 10 "$VM_TIMEOUT" nice -n 10 qemu-system-x86_64 \
        -accel tcg -machine pc -smp 2 -m "$memory" \
        -nographic -no-reboot -nic none \
        -kernel "$VM_KERNEL_DIR/vmlinux" -initrd "$VM_WORK/initramfs.cpio" -append "$append" \
        -drive "file=$VM_WORK/scratch.img,if=virtio,format=raw,cache=unsafe" "${rootfs[@]}" \
        </dev/null 2>&1 | stdbuf -oL tr -d '\r' | tee "$VM_CONSOLE"
    VM_QEMU_RC=${PIPESTATUS[0]}
    set -e
}

# 0 when the guest of boot $1 (v2 or v1) printed the PASS marker and qemu
# ended by itself. Prints the boot's FAIL lines, and keeps them in
# $VM_WORK/fails-$1.txt for the summary at the end (vm_summary).
vm_verdict() {
    local cgroup=$1 marker fails=$VM_WORK/fails-$1.txt
    marker=$(grep -a -o 'STEPMON-VM-RESULT: [A-Z]*' "$VM_CONSOLE" | tail -n 1 || true)
    if [[ $VM_QEMU_RC -eq 124 || $VM_QEMU_RC -eq 137 ]]; then
        echo "FAIL: the guest did not finish within ${VM_TIMEOUT} s (qemu killed)" >"$fails"
    elif [[ $VM_QEMU_RC -ne 0 ]]; then
        echo "FAIL: qemu exited with status $VM_QEMU_RC" >"$fails"
    else
        case $marker in
            'STEPMON-VM-RESULT: PASS') : >"$fails" ;;
            'STEPMON-VM-RESULT: FAIL') grep -a '^FAIL ' "$VM_CONSOLE" | awk '!seen[$0]++' >"$fails" ;;
            *) echo "FAIL: the guest printed no result marker (crashed or /init failed; console above)" >"$fails" ;;
        esac
    fi
    local counts
    counts=$(grep -a -o 'guest checks: [0-9]* passed, [0-9]* failed' "$VM_CONSOLE" | tail -n 1 || true)
    if [[ -s $fails ]]; then
        vm_say "cgroup $cgroup boot: FAIL (${counts:-no check counts}; console log: ${VM_CONSOLE#"$VM_REPO"/}):"
        sed 's/^/[vm]   /' "$fails" >&2
        return 1
    fi
    vm_say "cgroup $cgroup boot: PASS (${counts}; console log: ${VM_CONSOLE#"$VM_REPO"/})"
}

# After all boots ($@): one line per boot, then every boot's FAIL lines
# again (a CI log shown only in part still names what failed). 0 when all
# passed.
vm_summary() {
    local cgroup status=0
    for cgroup in "$@"; do
        if [[ -s $VM_WORK/fails-$cgroup.txt ]]; then
            vm_say "summary: cgroup $cgroup boot FAIL ($(wc -l <"$VM_WORK/fails-$cgroup.txt") FAIL lines)"
            status=1
        else
            vm_say "summary: cgroup $cgroup boot PASS"
        fi
    done
    for cgroup in "$@"; do
        [[ -s $VM_WORK/fails-$cgroup.txt ]] && sed "s/^/[vm] $cgroup: /" "$VM_WORK/fails-$cgroup.txt" >&2
    done
    return $status
}

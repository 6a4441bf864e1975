# shellcheck shell=bash
# The systemd boot's root filesystem: a Debian minimal system
# (`debootstrap --variant=minbase` with systemd, systemd-sysv, dbus, jq and
# util-linux's unshare) from the Debian mirror this machine's apt already
# uses, on an ext4 image. Made once and cached beside the kernel in
# $VM_CACHE/rootfs/<suite>-systemd.img; qemu opens it with snapshot=on, so
# a run never changes the cached image. The static test binaries are not
# in it: the initramfs's /init copies stepmon and the guest scripts in at
# every boot, before it hands over to systemd.

# Packages beside minbase: systemd as PID 1 and its D-Bus (the system bus
# and /run/systemd/private), jq for the guest's JSON checks.
VM_ROOTFS_PACKAGES=systemd,systemd-sysv,dbus,jq

# The first Debian mirror and suite in this machine's apt sources (deb822
# or one-line format).
vm_apt_mirror() {
    local files=(/etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list)
    local f
    for f in "${files[@]}"; do
        [[ -f $f ]] || continue
        case $f in
            *.sources)
                awk '/^URIs:/ && uri == "" && $2 !~ /security/ { uri = $2 }
                     /^Suites:/ && suite == "" { suite = $2 }
                     END { if (uri != "" && suite != "") print uri, suite }' "$f"
                ;;
            *)
                awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i, $(i + 1); exit } }' "$f"
                ;;
        esac
    done | head -n 1
}

# Sets VM_ROOTFS to a cached, complete root filesystem image.
vm_make_rootfs() {
    local mirror suite
    read -r mirror suite <<<"$(vm_apt_mirror)"
    [[ -n $mirror && -n $suite ]] || vm_die "no Debian mirror in this machine's apt sources for the systemd root filesystem"
    VM_ROOTFS=$VM_CACHE/rootfs/$suite-systemd.img
    [[ -f $VM_ROOTFS && -f $VM_ROOTFS.complete ]] && return
    command -v debootstrap >/dev/null 2>&1 || {
        vm_say "installing debootstrap"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap; } \
            >"$VM_WORK/apt-debootstrap.log" 2>&1 || { cat "$VM_WORK/apt-debootstrap.log" >&2; vm_die "cannot install debootstrap"; }
    }
    local tree=$VM_WORK/rootfs-tree
    rm -rf "$tree" "$VM_ROOTFS" "$VM_ROOTFS.complete"
    mkdir -p "$(dirname "$VM_ROOTFS")"
    vm_say "debootstrap --variant=minbase $suite with $VM_ROOTFS_PACKAGES (once; cached in $VM_ROOTFS)"
    debootstrap --variant=minbase --include="$VM_ROOTFS_PACKAGES" "$suite" "$tree" "$mirror" \
        >"$VM_WORK/debootstrap.log" 2>&1 || { tail -n 30 "$VM_WORK/debootstrap.log" >&2; vm_die "debootstrap failed"; }
    # What a booted guest needs and minbase lacks: a hostname, a root
    # without password (no login ever happens: the test unit powers off), no
    # getty on the serial console competing with the tests' output, and the
    # scratch disk's mount point.
    echo stepmon-vm >"$tree/etc/hostname"
    sed -i 's/^root:[^:]*:/root::/' "$tree/etc/shadow"
    ln -sf /dev/null "$tree/etc/systemd/system/serial-getty@ttyS0.service"
    ln -sf /dev/null "$tree/etc/systemd/system/getty@tty1.service"
    mkdir -p "$tree/mnt/scratch" "$tree/opt/stepmon"
    rm -rf "$tree/var/cache/apt/archives"/*.deb "$tree/var/lib/apt/lists"/*
    truncate -s 1G "$VM_ROOTFS"
    mkfs.ext4 -q -F -L stepmon-root -d "$tree" "$VM_ROOTFS" >/dev/null || vm_die "mkfs.ext4 -d of the root filesystem failed"
    rm -rf "$tree"
    touch "$VM_ROOTFS.complete"
    vm_say "root filesystem: $(du -m "$VM_ROOTFS" | cut -f1) MiB used of 1 GiB"
}

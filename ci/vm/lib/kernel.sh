# shellcheck shell=bash
# The guest kernel: Debian's stock amd64 kernel (the package that
# linux-image-amd64 depends on), fetched with `apt-get download` and unpacked
# with `dpkg-deb -x` into the cache, never installed (installing it would pull
# in udev and initramfs-tools and upgrade systemd on the host).
#
# Cached in $VM_CACHE/kernel/<package>_<version>/:
#   vmlinux         the uncompressed kernel, booted through PVH (`-kernel`),
#                   about twice as fast to boot under TCG as the bzImage
#   release         `uname -r` of that kernel
#   modules/*.ko    the modules the guest loads, and modules.load (their
#                   insmod order, dependencies first)

# Modules the guest needs (their dependencies are added from modules.dep):
# the virtio disk, ext4 on it (crc32c_generic: ext4's checksum, which the
# kernel would otherwise request through a modprobe the guest does not have),
# veth for the network-namespace tests and dummy for a host interface besides
# lo (those tests tell the host's view from a namespace's by it).
VM_MODULES=(virtio_pci virtio_blk crc32c_generic ext4 veth dummy)

# Sets VM_KERNEL_DIR to a cached, complete kernel folder.
vm_fetch_kernel() {
    local pkg version
    pkg=$(vm_kernel_package)
    if [[ -z $pkg ]]; then
        apt-get update -qq >"$VM_WORK/apt-update.log" 2>&1 || true
        pkg=$(vm_kernel_package)
    fi
    if [[ -n $pkg ]]; then
        version=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
    fi
    if [[ -z $pkg || -z $version ]]; then
        # No package lists: a cached kernel still does (with a warning).
        VM_KERNEL_DIR=$(find "$VM_CACHE/kernel" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort -V | tail -n 1)
        [[ -n $VM_KERNEL_DIR && -f $VM_KERNEL_DIR/complete ]] ||
            vm_die "cannot tell which kernel linux-image-amd64 depends on (apt-cache) and none is cached"
        vm_say "warning: apt-cache does not know linux-image-amd64; using the cached $(basename "$VM_KERNEL_DIR")"
        return
    fi
    VM_KERNEL_DIR=$VM_CACHE/kernel/${pkg}_${version}
    if [[ -f $VM_KERNEL_DIR/complete && "$(cat "$VM_KERNEL_DIR/modules.wanted")" == "${VM_MODULES[*]}" ]]; then
        vm_say "kernel: $pkg $version (cached)"
        return
    fi
    vm_say "kernel: fetching $pkg $version"
    rm -rf "$VM_KERNEL_DIR"
    local scratch=$VM_WORK/kernel-download
    rm -rf "$scratch" && mkdir -p "$scratch/root"
    # apt drops privileges to _apt for downloads; let it write here.
    chmod 0777 "$scratch"
    # Stale package lists name a version the mirror no longer has: refresh
    # them once and ask again.
    if ! (cd "$scratch" && apt-get download -qq "$pkg=$version") >"$VM_WORK/apt-download.log" 2>&1; then
        apt-get update -qq >>"$VM_WORK/apt-download.log" 2>&1 || true
        pkg=$(vm_kernel_package)
        version=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
        VM_KERNEL_DIR=$VM_CACHE/kernel/${pkg}_${version}
        (cd "$scratch" && apt-get download -qq "$pkg=$version") >>"$VM_WORK/apt-download.log" 2>&1 ||
            { cat "$VM_WORK/apt-download.log" >&2; vm_die "apt-get download $pkg=$version failed"; }
    fi
    dpkg-deb -x "$scratch"/*.deb "$scratch/root"
    local release
    release=$(basename "$(find "$scratch/root/lib/modules" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
    [[ -n $release ]] || vm_die "$pkg has no lib/modules/<release>"
    # The package ships no modules.dep (depmod writes it on install).
    busybox depmod -b "$scratch/root" "$release" || vm_die "depmod of $release failed"
    mkdir -p "$VM_KERNEL_DIR/modules"
    vm_extract_vmlinux "$scratch/root/boot/vmlinuz-$release" "$VM_KERNEL_DIR/vmlinux"
    vm_copy_modules "$scratch/root/lib/modules/$release" "$VM_KERNEL_DIR/modules"
    echo "$release" >"$VM_KERNEL_DIR/release"
    echo "${VM_MODULES[*]}" >"$VM_KERNEL_DIR/modules.wanted"
    touch "$VM_KERNEL_DIR/complete"
    rm -rf "$scratch"
    # Older kernels are of no further use.
    find "$VM_CACHE/kernel" -mindepth 1 -maxdepth 1 -type d ! -path "$VM_KERNEL_DIR" -exec rm -rf {} +
}

# The package linux-image-amd64 depends on (e.g. linux-image-6.1.0-57-amd64).
vm_kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}

# Unpacks the vmlinux inside a bzImage: the payload is one xz stream
# (Debian builds with CONFIG_KERNEL_XZ) after the real-mode setup code.
vm_extract_vmlinux() {
    local bzimage=$1 out=$2 offset
    offset=$(LC_ALL=C grep -aboF -m 1 "$(printf '\3757zXZ')" "$bzimage" | head -n 1 | cut -d: -f1)
    [[ -n $offset ]] || vm_die "no xz stream in $bzimage (not CONFIG_KERNEL_XZ?)"
    # xz stops with an error at the trailing bytes after the stream; the
    # ELF check below is what tells success.
    tail -c "+$((offset + 1))" "$bzimage" | xz -dc 2>/dev/null >"$out" || true
    [[ "$(head -c 4 "$out" | od -An -c | tr -d ' ')" == '177ELF' ]] || vm_die "could not unpack vmlinux from $bzimage"
}

# Copies VM_MODULES and their dependencies (from modules.dep) to $2, with
# modules.load listing them dependencies first.
vm_copy_modules() {
    local tree=$1 out=$2 name
    local -A seen=()
    local order=()
    vm_module_with_deps() {
        local rel=$1 dep
        [[ -n ${seen[$rel]:-} ]] && return
        seen[$rel]=1
        # shellcheck disable=SC2013 # modules.dep lists paths without spaces
        for dep in $(awk -v m="$rel:" '$1 == m { $1 = ""; print }' "$tree/modules.dep"); do
            vm_module_with_deps "$dep"
        done
        order+=("$rel")
    }
    for name in "${VM_MODULES[@]}"; do
        local rel
        rel=$(awk -F: -v n="/$name.ko" 'index($1, n) && substr($1, length($1) - length(n) + 1) == n { print $1; exit }' \
            "$tree/modules.dep")
        [[ -n $rel ]] || vm_die "module $name is not in $tree/modules.dep"
        vm_module_with_deps "$rel"
    done
    : >"$out/modules.load"
    for rel in "${order[@]}"; do
        local file=$tree/$rel base
        base=$(basename "$rel")
        case $base in
            *.ko.xz) xz -dc "$file" >"$out/${base%.xz}" ;;
            *.ko) cp "$file" "$out/$base" ;;
            *) vm_die "unexpected module file $rel" ;;
        esac
        echo "${base%.xz}" >>"$out/modules.load"
    done
}

# shellcheck shell=bash
# Host tools the VM tier needs, installed from Debian when missing. A machine
# where they cannot be installed fails here, loudly: the tier never skips.

# command → Debian package that provides it.
VM_HOST_TOOLS=(
    "qemu-system-x86_64 qemu-system-x86"
    "busybox busybox-static"
    "cpio cpio"
    "xz xz-utils"
    "jq jq"
    "mkfs.ext4 e2fsprogs"
    "ip iproute2"
    "getconf libc-bin"
    "strip binutils"
    "/usr/bin/python3 python3"
    # The static (musl) stepmon links rustls's ring (the OTLP client), whose
    # C and assembly build with the musl target's C compiler.
    "x86_64-linux-musl-gcc musl-tools"
    # The pure v2 guest's containers (lib/runc.sh).
    "runc runc"
    "crun crun"
)

# Fails unless every tool is there (installing what is missing).
vm_install_host_tools() {
    local missing=() line cmd pkg
    for line in "${VM_HOST_TOOLS[@]}"; do
        read -r cmd pkg <<<"$line"
        command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
    done
    # busybox must be the static build: it runs in the guest with no libc.
    if command -v busybox >/dev/null 2>&1 && ! vm_is_static "$(command -v busybox)"; then
        missing+=(busybox-static)
    fi
    if ((${#missing[@]})); then
        vm_say "installing host packages: ${missing[*]}"
        # qemu-system-x86 replaces a preinstalled backports qemu-utils with
        # bookworm's; nothing here needs the newer one. No recommends: they
        # would pull in a desktop's worth of packages.
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${missing[@]}"; } >"$VM_WORK/apt.log" 2>&1; then
            cat "$VM_WORK/apt.log" >&2
            vm_die "cannot install ${missing[*]} (see above); the VM tier cannot run on this machine"
        fi
    fi
    for line in "${VM_HOST_TOOLS[@]}"; do
        read -r cmd pkg <<<"$line"
        command -v "$cmd" >/dev/null 2>&1 || vm_die "$cmd (package $pkg) is still missing after the install"
    done
    vm_is_static "$(command -v busybox)" || vm_die "$(command -v busybox) is not statically linked (need busybox-static)"
}

# Whether the ELF file $1 has no program interpreter (is statically linked).
vm_is_static() {
    local out
    out=$(LC_ALL=C ldd "$1" 2>&1 || true)
    [[ $out == *'not a dynamic executable'* || $out == *'statically linked'* ]]
}

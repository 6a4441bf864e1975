#!/bin/sh
# Installs the static `stepmon` binary of a release for this machine's
# architecture (x86_64 or aarch64 Linux), checked against the release's
# SHA256SUMS. No Rust toolchain needed: only a POSIX shell, curl or wget,
# and sha256sum or `shasum -a 256`.
#
#   curl -fsSL https://github.com/stepmon/stepmon/releases/latest/download/install.sh | sh
#
# Settings (environment variables):
#   STEPMON_VERSION       the release to install (0.1.0 or v0.1.0); default
#                         the latest release
#   STEPMON_INSTALL_DIR   where `stepmon` goes; default /usr/local/bin as
#                         root, else $HOME/.local/bin
#   STEPMON_INSTALL_BASE  where the release's files are: a URL, file://PATH
#                         or a directory (a mirror, or scripts/dist's output);
#                         default this repository's GitHub release
#
# It fetches SHA256SUMS first and takes from it the one binary named
# stepmon-<version>-<arch>-unknown-linux-musl (scripts/dist writes both),
# so the latest release needs no version looked up elsewhere. A binary
# whose sum differs is refused and nothing is installed. In a GitHub
# Actions step ($GITHUB_PATH set) the directory is added to the PATH of the
# job's later steps when it is not on PATH already.
set -eu

# The repository's address: cli/Cargo.toml's `repository` (a test keeps
# the two equal; the release workflow refuses to publish from another).
repository=https://github.com/stepmon/stepmon

newline='
'
say() { printf 'install.sh: %s\n' "$*" >&2; }
fail() {
    say "error: $*"
    exit 1
}

# Everything runs from main, called on the last line: a download cut
# short (`curl | sh`) runs nothing.
main() {
    os=$(uname -s)
    [ "$os" = Linux ] || fail "stepmon's binaries are for Linux; this is $os (stepmon report and diff build from source elsewhere: cargo install --path cli in a clone)"
    machine=$(uname -m)
    case "$machine" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
        *) fail "no stepmon binary for $machine (there are x86_64 and aarch64); build it from source (cargo install --path cli in a clone)" ;;
    esac
    target=$arch-unknown-linux-musl

    version=${STEPMON_VERSION:-}
    version=${version#v}
    if [ -n "${STEPMON_INSTALL_BASE:-}" ]; then
        base=${STEPMON_INSTALL_BASE%/}
    elif [ -n "$version" ]; then
        base=$repository/releases/download/v$version
    else
        base=$repository/releases/latest/download
    fi

    if [ -n "${STEPMON_INSTALL_DIR:-}" ]; then
        dir=$STEPMON_INSTALL_DIR
    elif [ "$(id -u)" = 0 ]; then
        dir=/usr/local/bin
    else
        [ -n "${HOME:-}" ] || fail "HOME is not set: say where to install with STEPMON_INSTALL_DIR"
        dir=$HOME/.local/bin
    fi

    # fetch NAME DEST: the file NAME of the release into DEST.
    fetch() {
        case "$base" in
            file://*) cp "${base#file://}/$1" "$2" ;;
            *://*)
                if command -v curl >/dev/null 2>&1; then
                    curl -fsSL --retry 3 -o "$2" "$base/$1"
                elif command -v wget >/dev/null 2>&1; then
                    wget -q -O "$2" "$base/$1"
                else
                    fail "neither curl nor wget is here to download $base/$1"
                fi
                ;;
            *) cp "$base/$1" "$2" ;;
        esac || fail "cannot fetch $base/$1"
    }

    # Chosen before anything is fetched: without a tool to check the sum
    # nothing is installed.
    if command -v sha256sum >/dev/null 2>&1; then
        sha256() { sha256sum "$1"; }
    elif command -v shasum >/dev/null 2>&1; then
        sha256() { shasum -a 256 "$1"; }
    else
        fail "neither sha256sum nor shasum is here to check the download; nothing installed"
    fi

    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 1' HUP INT TERM

    fetch SHA256SUMS "$tmp/SHA256SUMS"
    # Lines are `SUM  NAME` (sha256sum's format; `*NAME` in its binary mode).
    if [ -n "$version" ]; then
        pattern="stepmon-$version-$target"
    else
        pattern="stepmon-[^ /]*-$target"
    fi
    matches=$(sed -n "s/^\([0-9a-fA-F]\{64\}\) [ *]\($pattern\)\$/\1 \2/p" "$tmp/SHA256SUMS")
    case "$matches" in
        "") fail "$base/SHA256SUMS lists no ${version:+version $version }binary for $target" ;;
        *"$newline"*) fail "$base/SHA256SUMS lists more than one binary for $target: say which with STEPMON_VERSION" ;;
    esac
    expected=${matches%% *}
    asset=${matches#* }

    fetch "$asset" "$tmp/stepmon"
    actual=$(sha256 "$tmp/stepmon" | sed 's/[[:space:]].*//')
    if [ "$(printf %s "$expected" | tr 'A-F' 'a-f')" != "$actual" ]; then
        fail "SHA-256 mismatch for $base/$asset: SHA256SUMS says $expected, the download is $actual; nothing installed"
    fi
    chmod 755 "$tmp/stepmon"

    mkdir -p "$dir" || fail "cannot create $dir"
    # Copied beside its place, run once there (the directory may be mounted
    # noexec, the binary may be of another machine), then renamed over the
    # old one: a running stepmon and a concurrent install both see a whole
    # file, and a binary that does not run replaces nothing.
    staged=$dir/.stepmon.install.$$
    cp "$tmp/stepmon" "$staged" || fail "cannot write to $dir"
    if ! installed=$("$staged" --version); then
        rm -f "$staged"
        fail "the $target binary does not run here ($machine, from $dir); nothing installed"
    fi
    mv -f "$staged" "$dir/stepmon" || {
        rm -f "$staged"
        fail "cannot write $dir/stepmon"
    }
    say "installed $installed ($asset) to $dir/stepmon"

    case ":${PATH:-}:" in
        *":$dir:"*) ;;
        *)
            if [ -n "${GITHUB_PATH:-}" ]; then
                printf '%s\n' "$dir" >>"$GITHUB_PATH"
                say "added $dir to the PATH of this job's later steps (GITHUB_PATH)"
            else
                say "$dir is not on PATH: add it, or run $dir/stepmon"
            fi
            ;;
    esac
}

main "$@"

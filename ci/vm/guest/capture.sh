# shellcheck shell=sh
# Capture mode, sourced by /init on either boot: runs one known step under
# stepmon with limits, lets the step copy every readable file of its own
# cgroups (pure v2: its cgroup, the run's parent cgroup and the root; v1: its
# cgroup in each of memory, pids and cpu,cpuacct) plus
# /proc/self/{cgroup,mountinfo} while it is still running, and prints it all
# as a base64 tar between markers for the host (ci/vm/lib/capture.sh) to
# unpack into the fixtures.

out=/tmp/capture
mkdir -p "$out"
uname -r >"$out/release"

echo "==> capture step: stepmon run --memory-max 48M --cpus 0.5 --pids-max 64 -- /guest/capture-step.sh"
stepmon run -o "$out/stepmon-run.json" --memory-max 48M --cpus 0.5 --pids-max 64 -- sh /guest/capture-step.sh "$out"
rc=$?
if [ "$rc" -eq 0 ]; then
    pass "capture step exited 0"
else
    fail "capture step exited $rc"
fi
# The folders the step must have filled, and what to show of them.
# shellcheck disable=SC2154 # cgroup: set by /init (from stepmon.cgroup=), which sources this file
case $cgroup in
    v1)
        dirs="memory pids cpu,cpuacct" min=5
        shown="memory/memory.max_usage_in_bytes memory/memory.failcnt memory/memory.oom_control pids/pids.max cpu,cpuacct/cpu.stat cpu,cpuacct/cpuacct.usage"
        ;;
    *)
        dirs="step parent root" min=10
        shown="step/memory.events step/cpu.stat step/pids.peak step/memory.peak step/cgroup.controllers"
        ;;
esac
echo "$cgroup" >"$out/layout"
for dir in $dirs; do
    n=$(find "$out/$dir" -type f 2>/dev/null | wc -l)
    if [ "$n" -gt "$min" ]; then
        pass "captured $n files of the $dir cgroup"
    else
        fail "captured only $n files of the $dir cgroup"
    fi
done
# What the capture step saw, for the log.
for f in $shown; do
    echo "$f: $(tr '\n' ' ' <"$out/$f")"
done

echo "STEPMON-VM-CAPTURE-BEGIN"
tar -C "$out" -cf - . | base64
echo "STEPMON-VM-CAPTURE-END"

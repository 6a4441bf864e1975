# shellcheck shell=sh
# Capture mode, sourced by /init: runs one known step under stepmon with
# limits, lets the step copy every readable file of its own cgroup, of the
# run's parent cgroup and of the root (plus /proc/self/{cgroup,mountinfo})
# while it is still running, and prints it all as a base64 tar between
# markers for the host (ci/vm/lib/capture.sh) to unpack into the fixtures.

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
for dir in step parent root; do
    n=$(find "$out/$dir" -type f 2>/dev/null | wc -l)
    if [ "$n" -gt 10 ]; then
        pass "captured $n files of the $dir cgroup"
    else
        fail "captured only $n files of the $dir cgroup"
    fi
done
# What the capture step saw, for the log.
for f in memory.events cpu.stat pids.peak memory.peak cgroup.controllers; do
    echo "step $f: $(tr '\n' ' ' <"$out/step/$f")"
done

echo "STEPMON-VM-CAPTURE-BEGIN"
tar -C "$out" -cf - . | base64
echo "STEPMON-VM-CAPTURE-END"

# shellcheck shell=sh disable=SC2216,SC2034 # dd holds its buffer while piping into sleep
# The step whose cgroup files become test fixtures (run by capture.sh under
# `stepmon run --memory-max 48M --cpus 0.5 --pids-max 64`). It makes every
# counter move — anonymous memory, children, O_DIRECT and buffered IO, CPU
# throttling, one OOM kill — then copies the files of its own cgroups while
# it still runs: on pure cgroup v2 its cgroup, the run's parent and the root;
# on cgroup v1 its cgroup in each hierarchy stepmon made one in.
out=$1

# 32 MiB of anonymous memory held for 2 s, beside 8 sleeping children.
dd if=/dev/zero bs=32M count=1 2>/dev/null | sleep 2 &
for i in 1 2 3 4 5 6 7 8; do sleep 2 & done
wait

# 8 MiB O_DIRECT and 8 MiB buffered + fsync to the virtio disk.
dd if=/dev/zero of=/mnt/scratch/capture-direct bs=1M count=8 oflag=direct 2>/dev/null
dd if=/dev/zero of=/mnt/scratch/capture-buffered bs=1M count=8 conv=fsync 2>/dev/null
rm -f /mnt/scratch/capture-direct /mnt/scratch/capture-buffered

# A busy loop for 1.5 s under cpu.max 0.5: throttled periods.
sh -c 'while :; do :; done' &
busy=$!
sleep 1.5
kill "$busy"
wait

# 64 MiB under memory.max 48M: the OOM killer takes this dd (the largest
# task of the step), the step goes on.
dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null

# Copy every readable file of the step's own cgroups while it still runs.
copy() {
    mkdir -p "$out/$2"
    for f in "$1"/*; do
        [ -f "$f" ] || continue
        cat "$f" >"$out/$2/${f##*/}" 2>/dev/null || rm -f "$out/$2/${f##*/}"
    done
}
if grep -q '^0::' /proc/self/cgroup; then
    # Pure cgroup v2: the step's cgroup, the run's parent, the root.
    self=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
    copy "$self" step
    copy "${self%/*}" parent
    copy /sys/fs/cgroup root
else
    # cgroup v1: the step's cgroup in each hierarchy stepmon made one in
    # (memory, pids, cpu,cpuacct), i.e. every line of /proc/self/cgroup
    # (`ID:CONTROLLERS:PATH`) not at its root; each hierarchy is mounted at
    # /sys/fs/cgroup/CONTROLLERS (guest/init). Named hierarchies are skipped.
    while IFS=: read -r _ controllers path; do
        case $controllers:$path in
            *:/ | name=* | :*) continue ;;
        esac
        copy "/sys/fs/cgroup/$controllers$path" "$controllers"
        echo "$controllers:$path" >>"$out/hierarchies"
    done </proc/self/cgroup
fi
cat /proc/self/cgroup >"$out/proc_self_cgroup.txt"
cat /proc/self/mountinfo >"$out/proc_self_mountinfo.txt"

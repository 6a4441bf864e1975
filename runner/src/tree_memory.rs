//! The step's process-tree memory, sampled, for a step no memory cgroup
//! covers alone: at each sample the sum over its live processes (the
//! descendants of the step's subreaper) of `Pss_Anon + Pss_Shmem` from
//! `/proc/PID/smaps_rollup` (Linux 5.3+; `Pss` splits a shared page between
//! the processes that map it, so the tree counts it once,
//! <https://docs.kernel.org/filesystems/proc.html#proc-pid-smaps-rollup>),
//! or before 5.3 `RssAnon + RssShmem` from `status`. One sample when the
//! step has started ([`TreeMemorySampler::set_root`]), one every interval
//! (on the thread every step shares, [`crate::ticker`]),
//! one at [`TreeMemorySampler::finish`] (before leftovers are killed). Its
//! largest sum is a lower bound of the tree's peak.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use stepmon_model::source::{TreeMemory, TreeMemoryFrom};
use stepmon_sysusage::parse::{ProcStatus, SmapsRollup};

use crate::ticker::{Job, Ticker, Ticking};
use crate::tree::children;

/// The samples of one step.
#[derive(Debug)]
pub(crate) struct TreeMemorySampler {
    /// The step's subreaper (0 before the spawn).
    root: Arc<AtomicI32>,
    memory: Arc<Mutex<TreeMemory>>,
    /// Its samples on the shared thread.
    ticking: Option<Ticking>,
    /// CPU time its samples took, ns.
    cpu_nanos: Arc<AtomicU64>,
}

/// The calling thread's CPU time, ns.
fn thread_cpu_nanos() -> u64 {
    let cpu = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(cpu.tv_sec).unwrap_or(0).saturating_mul(1_000_000_000) + u64::try_from(cpu.tv_nsec).unwrap_or(0)
}

/// [`sample`], its CPU time added to `cpu_nanos`.
fn timed_sample(root: &AtomicI32, memory: &Mutex<TreeMemory>, cpu_nanos: &AtomicU64) {
    let before = thread_cpu_nanos();
    sample(root, memory);
    cpu_nanos.fetch_add(thread_cpu_nanos().saturating_sub(before), Ordering::Relaxed);
}

/// One process's proportional anonymous + shared memory, bytes, and where
/// it came from; `None` when it is gone (or unreadable).
fn of_process(pid: i32) -> Option<(u64, TreeMemoryFrom)> {
    // Decided once for the kernel: a process whose rollup cannot be read
    // (gone, a zombie) has nothing to add, not a `status` to fall back to.
    static HAS_ROLLUP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *HAS_ROLLUP.get_or_init(|| std::path::Path::new("/proc/self/smaps_rollup").exists()) {
        let bytes = stepmon_fdread::read_path(format!("/proc/{pid}/smaps_rollup")).ok()?;
        let rollup = SmapsRollup::parse(&bytes).ok()?;
        // A zombie's rollup is empty: nothing mapped any more.
        let kib = rollup.pss_anon_kib.unwrap_or(0) + rollup.pss_shmem_kib.unwrap_or(0);
        return Some((kib.saturating_mul(1024), TreeMemoryFrom::SmapsRollup));
    }
    let status = ProcStatus::parse(&stepmon_fdread::read_path(format!("/proc/{pid}/status")).ok()?).ok()?;
    let kib = status.rss_anon_kib.unwrap_or(0) + status.rss_shmem_kib.unwrap_or(0);
    Some((kib.saturating_mul(1024), TreeMemoryFrom::Status))
}

/// The tree's sum now (nothing before the step has started).
fn sample(root: &AtomicI32, memory: &Mutex<TreeMemory>) {
    let subreaper = root.load(Ordering::Acquire);
    if subreaper <= 0 {
        return;
    }
    let mut sum = 0u64;
    let mut from = TreeMemoryFrom::SmapsRollup;
    for pid in children::of(subreaper).into_iter().flat_map(children::tree_of) {
        if let Some((bytes, source)) = of_process(pid) {
            sum = sum.saturating_add(bytes);
            if source == TreeMemoryFrom::Status {
                from = TreeMemoryFrom::Status;
            }
        }
    }
    let mut memory = memory.lock().unwrap_or_else(PoisonError::into_inner);
    memory.peak_bytes = memory.peak_bytes.max(sum);
    memory.samples += 1;
    if from == TreeMemoryFrom::Status {
        memory.from = from;
    }
}

impl TreeMemorySampler {
    /// Samples every `interval` on `ticker`'s thread once
    /// [`TreeMemorySampler::set_root`] named the subreaper (set up before
    /// the step is spawned).
    pub(crate) fn start(interval: Duration, ticker: &Ticker) -> TreeMemorySampler {
        let root = Arc::new(AtomicI32::new(0));
        let memory = Arc::new(Mutex::new(TreeMemory {
            interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
            ..TreeMemory::default()
        }));
        let cpu_nanos = Arc::new(AtomicU64::new(0));
        let job: Job = {
            let (root, memory, cpu_nanos) = (Arc::clone(&root), Arc::clone(&memory), Arc::clone(&cpu_nanos));
            Arc::new(move || {
                timed_sample(&root, &memory, &cpu_nanos);
                interval
            })
        };
        let ticking = ticker.add(interval, job);
        TreeMemorySampler { root, memory, ticking, cpu_nanos }
    }

    /// The step has started under the subreaper `pid`: the sample at the
    /// start (on the caller's thread), then one every interval.
    pub(crate) fn set_root(&self, pid: i32) {
        self.root.store(pid, Ordering::Release);
        timed_sample(&self.root, &self.memory, &self.cpu_nanos);
    }

    /// Takes the last sample (on the caller's thread) and stops: the
    /// memory and the CPU time its samples took, s; `None` when the
    /// periodic samples could not start.
    pub(crate) fn finish(mut self) -> Option<(TreeMemory, f64)> {
        drop(self.ticking.take()?);
        timed_sample(&self.root, &self.memory, &self.cpu_nanos);
        let memory = *self.memory.lock().unwrap_or_else(PoisonError::into_inner);
        #[allow(clippy::cast_precision_loss)] // ns of a step's samples, far below 2^52
        let seconds = self.cpu_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        Some((memory, seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_process_has_its_anonymous_memory_read() {
        let me = i32::try_from(std::process::id()).unwrap();
        let (bytes, from) = of_process(me).unwrap();
        assert!(bytes > 0, "{bytes}");
        // Every kernel this project supports has smaps_rollup (5.3+).
        assert_eq!(from, TreeMemoryFrom::SmapsRollup);
        assert_eq!(of_process(i32::MAX), None);
    }
}

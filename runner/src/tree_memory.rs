//! The step's process-tree memory, sampled, for a step no memory cgroup
//! covers alone: at each sample the sum over its live processes (the
//! descendants of the step's subreaper) of `Pss_Anon + Pss_Shmem` from
//! `/proc/PID/smaps_rollup` (Linux 5.3+; `Pss` splits a shared page between
//! the processes that map it, so the tree counts it once,
//! <https://docs.kernel.org/filesystems/proc.html#proc-pid-smaps-rollup>),
//! or before 5.3 `RssAnon + RssShmem` from `status`. One sample when the
//! step has started ([`TreeMemorySampler::set_root`]), one every interval,
//! one at [`TreeMemorySampler::finish`] (before leftovers are killed). Its
//! largest sum is a lower bound of the tree's peak.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use stepmon_model::source::{TreeMemory, TreeMemoryFrom};
use stepmon_sysusage::parse::{ProcStatus, SmapsRollup};

use crate::tree::children;

/// The sampling thread of one step.
#[derive(Debug)]
pub(crate) struct TreeMemorySampler {
    /// The step's subreaper (0 before the spawn).
    root: Arc<AtomicI32>,
    memory: Arc<Mutex<TreeMemory>>,
    stop: Option<mpsc::Sender<()>>,
    /// Returns its CPU time, s.
    thread: Option<JoinHandle<f64>>,
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
    /// Starts the thread (before the step is spawned); it samples every
    /// `interval` once [`TreeMemorySampler::set_root`] named the subreaper.
    pub(crate) fn start(interval: Duration) -> TreeMemorySampler {
        let root = Arc::new(AtomicI32::new(0));
        let memory = Arc::new(Mutex::new(TreeMemory {
            interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
            ..TreeMemory::default()
        }));
        let (stop, stopped) = mpsc::channel::<()>();
        let (thread_root, thread_memory) = (Arc::clone(&root), Arc::clone(&memory));
        let thread = std::thread::Builder::new()
            .name("stepmon-treemem".to_owned())
            .spawn(move || {
                let mut next = Instant::now() + interval;
                loop {
                    let now = Instant::now();
                    if now >= next {
                        sample(&thread_root, &thread_memory);
                        next += interval;
                        continue;
                    }
                    // Asleep until the next sample is due, or woken at once
                    // when `finish` drops the sender.
                    match stopped.recv_timeout(next - now) {
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                // The sample at the end.
                sample(&thread_root, &thread_memory);
                let cpu = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
                #[allow(clippy::cast_precision_loss)] // ns of one thread, far below 2^53
                let seconds = cpu.tv_sec as f64 + cpu.tv_nsec as f64 / 1e9;
                seconds
            })
            .ok();
        TreeMemorySampler { root, memory, stop: Some(stop), thread }
    }

    /// The step has started under the subreaper `pid`: the sample at the
    /// start (on the caller's thread), then one every interval.
    pub(crate) fn set_root(&self, pid: i32) {
        self.root.store(pid, Ordering::Release);
        sample(&self.root, &self.memory);
    }

    /// Takes the last sample and stops: the memory and the thread's CPU
    /// time, s; `None` when the thread could not start.
    pub(crate) fn finish(mut self) -> Option<(TreeMemory, f64)> {
        drop(self.stop.take());
        let cpu = self.thread.take()?.join().ok()?;
        let memory = *self.memory.lock().unwrap_or_else(PoisonError::into_inner);
        Some((memory, cpu))
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

//! The memory watch: the step's memory against the tightest of what bounds
//! it, checked at [`super::cadence`]'s intervals, an event once per
//! crossing of the threshold.
//!
//! The bounds (<https://docs.kernel.org/admin-guide/cgroup-v2.html#memory>,
//! <https://docs.kernel.org/admin-guide/cgroup-v1/memory.html>): the step's
//! own limit (`memory.max`, v1 `memory.limit_in_bytes`); each enclosing
//! cgroup's limit less what the rest of that cgroup uses (its usage counts
//! the step's: charges are hierarchical); and the machine, the step's usage
//! plus `MemAvailable` (<https://docs.kernel.org/filesystems/proc.html#meminfo>).
//! The limits are read once, when the watch starts; each check reads the
//! step's usage, the usage of each enclosing cgroup that has a limit (none,
//! usually), and `/proc/meminfo`.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use stepmon_cgroupfs_parse::{Limit, single, v1};
use stepmon_fdread::HeldFile;
use stepmon_model::event::{MemoryBound, MemoryNearLimit, StepEvent};
use stepmon_sysusage::parse::MemInfo;

use super::cadence::{self, Arming};
use super::{IDLE, Watch};
use crate::ticker::Job;

/// How many of the largest processes an event names.
const LARGEST: usize = 3;
/// The readings the trend is taken over: the last ones within this.
const TREND_WINDOW: Duration = Duration::from_secs(2);

/// The files of one cgroup hierarchy's memory controller.
#[derive(Debug, Clone, Copy)]
struct Files {
    usage: &'static str,
    limit: &'static str,
    parse_limit: fn(&[u8]) -> Option<Limit>,
}

const V2: Files = Files { usage: "memory.current", limit: "memory.max", parse_limit: |b| Limit::parse(b).ok() };
const V1: Files = Files {
    usage: "memory.usage_in_bytes",
    limit: "memory.limit_in_bytes",
    parse_limit: |b| v1::limit_in_bytes(b).ok(),
};

/// An enclosing cgroup with a limit: its limit, its usage file.
#[derive(Debug)]
struct Enclosing {
    limit: u64,
    usage: HeldFile,
    file: String,
}

/// What one step's watch holds between checks.
#[derive(Debug)]
struct Watcher {
    usage: HeldFile,
    /// The step's own limit and its file, when finite.
    own: Option<(u64, String)>,
    enclosing: Vec<Enclosing>,
    meminfo: Option<(HeldFile, String)>,
    /// The step's processes (`cgroup.procs` of its memory cgroup).
    procs: PathBuf,
    proc_root: PathBuf,
    threshold: f64,
    arming: Arming,
    readings: VecDeque<(Instant, u64)>,
    start: Timestamp,
    buf: Vec<u8>,
}

/// `file` of `dir` as a number (`None`: unreadable or not one).
fn read_number(file: &HeldFile, buf: &mut Vec<u8>) -> Option<u64> {
    file.read_single(buf).ok().and_then(|bytes| single::parse_u64(bytes).ok())
}

/// A finite limit in `dir/name`.
fn finite_limit(dir: &Path, files: Files) -> Option<u64> {
    let bytes = stepmon_fdread::read_path(dir.join(files.limit)).ok()?;
    (files.parse_limit)(&bytes)?.value()
}

impl Watcher {
    /// Opens the files of the memory cgroup `dir` (v1's when `is_v1`); `None`
    /// when its usage cannot be read.
    fn open(dir: &Path, is_v1: bool, watch: &Watch, start: Timestamp) -> Option<Watcher> {
        let files = if is_v1 { V1 } else { V2 };
        let usage = HeldFile::open(dir.join(files.usage)).ok()?;
        let own = finite_limit(dir, files).map(|limit| (limit, dir.join(files.limit).display().to_string()));
        // Every ancestor that has the usage file (the v2 root has none; the
        // v1 root's limit cannot be set, so it is never finite).
        let mut enclosing = Vec::new();
        let mut up = dir.parent();
        while let Some(parent) = up.filter(|p| p.join(files.usage).exists()) {
            if let Some(limit) = finite_limit(parent, files)
                && let Ok(usage) = HeldFile::open(parent.join(files.usage))
            {
                enclosing.push(Enclosing { limit, usage, file: parent.join(files.limit).display().to_string() });
            }
            up = parent.parent();
        }
        let meminfo_path = watch.proc_root.join("meminfo");
        let meminfo = HeldFile::open(&meminfo_path).ok().map(|file| (file, meminfo_path.display().to_string()));
        Some(Watcher {
            usage,
            own,
            enclosing,
            meminfo,
            procs: dir.join("cgroup.procs"),
            proc_root: watch.proc_root.clone(),
            threshold: watch.memory_threshold,
            arming: Arming::new(watch.memory_threshold, watch.memory_rearm),
            readings: VecDeque::new(),
            start,
            buf: Vec::new(),
        })
    }

    /// The tightest bound of a step using `usage` bytes now.
    fn tightest(&mut self, usage: u64) -> Option<(MemoryBound, String, u64)> {
        let mut bounds: Vec<(MemoryBound, String, u64)> = Vec::new();
        if let Some((limit, file)) = &self.own {
            bounds.push((MemoryBound::OwnLimit, file.clone(), *limit));
        }
        for enclosing in &self.enclosing {
            if let Some(theirs) = read_number(&enclosing.usage, &mut self.buf) {
                let headroom = enclosing.limit.saturating_sub(theirs);
                bounds.push((MemoryBound::EnclosingLimit, enclosing.file.clone(), usage.saturating_add(headroom)));
            }
        }
        if let Some((file, path)) = &self.meminfo
            && let Ok(bytes) = file.read_single(&mut self.buf)
            && let Some(available) = MemInfo::parse(bytes).ok().and_then(|m| m.get_bytes("MemAvailable"))
        {
            bounds.push((MemoryBound::Machine, path.clone(), usage.saturating_add(available)));
        }
        bounds.into_iter().min_by_key(|(_, _, bytes)| *bytes)
    }

    /// The usage's rate over the last readings, bytes a second.
    #[allow(clippy::cast_precision_loss)] // byte counts far below 2^52
    fn rate(&self) -> Option<f64> {
        let (&(t0, u0), &(t1, u1)) = (self.readings.front()?, self.readings.back()?);
        let seconds = t1.duration_since(t0).as_secs_f64();
        (seconds > 0.0).then(|| (u1 as f64 - u0 as f64) / seconds)
    }

    /// One check: how long until the next, and the event it makes.
    fn check(&mut self) -> (Duration, Option<StepEvent>) {
        let Some(usage) = read_number(&self.usage, &mut self.buf) else {
            // The cgroup is going away with the step.
            return (IDLE, None);
        };
        let now = Instant::now();
        self.readings.push_back((now, usage));
        while self.readings.len() > 2 && self.readings.front().is_some_and(|(t, _)| now - *t > TREND_WINDOW) {
            self.readings.pop_front();
        }
        let rate = self.rate();
        let Some((bound, file, bytes)) = self.tightest(usage) else {
            return (IDLE, None);
        };
        let mut memory = MemoryNearLimit::new(bound, file, bytes, usage, self.threshold);
        let next = cadence::next_check(usage, bytes, self.threshold, rate);
        if !self.arming.check(memory.share) {
            return (next, None);
        }
        memory.trend_bytes_per_second = rate;
        #[allow(clippy::cast_precision_loss)]
        let to_limit = bytes.saturating_sub(usage) as f64;
        memory.seconds_to_limit = rate.filter(|r| *r > 0.0).map(|r| to_limit / r);
        memory.largest = super::largest::by_memory(&self.procs, &self.proc_root, LARGEST);
        let at = Timestamp::now();
        let elapsed = at.duration_since(self.start).as_secs_f64().max(0.0);
        (next, Some(StepEvent::memory_near_limit(at, elapsed, memory)))
    }
}

/// The ticker job of the memory cgroup `dir` (v1's when `is_v1`): its files
/// are opened at its first check; each event goes to `record`.
pub(super) fn job(
    dir: PathBuf,
    is_v1: bool,
    watch: &Watch,
    start: Timestamp,
    record: impl Fn(StepEvent) + Send + Sync + 'static,
) -> Job {
    let watch = watch.clone();
    // `None` before the first check; `Some(None)` when it cannot watch.
    let state: Mutex<Option<Option<Watcher>>> = Mutex::new(None);
    Arc::new(move || {
        let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
        let watcher = state.get_or_insert_with(|| Watcher::open(&dir, is_v1, &watch, start));
        let Some(watcher) = watcher else { return IDLE };
        let (next, event) = watcher.check();
        drop(state);
        if let Some(event) = event {
            record(event);
        }
        next
    })
}

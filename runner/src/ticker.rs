//! One thread for the periodic procfs readings of every step of a
//! [`crate::Runner`] (the sampled per-process records where taskstats is
//! unavailable, the process-tree memory where no memory cgroup covers a
//! step): a thread per step and per reading cost each step two thread
//! starts and joins, and a builder running 16 steps 32 threads.
//!
//! Each job says when it is next due; the thread sleeps on a condition
//! variable until the earliest, or until a job is added or removed. It is
//! started with the first job and ends when the last [`Ticker`] is dropped.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A reading done at each tick; returns how long until the next one.
pub(crate) type Job = Arc<dyn Fn() -> Duration + Send + Sync>;

/// The shared thread; cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Ticker {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Ticker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let jobs = self.shared.inner.state.lock().map_or(0, |s| s.jobs.len());
        f.debug_struct("Ticker").field("jobs", &jobs).finish()
    }
}

/// What the handles share; its drop (the last handle's) ends the thread.
#[derive(Default)]
struct Shared {
    inner: Arc<Inner>,
    /// Whether the thread was started (it is never joined: see the drop).
    started: Mutex<bool>,
}

/// What the thread shares with the handles.
#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    jobs: Vec<Entry>,
    next_id: u64,
    /// The job whose tick is under way (run without the lock).
    running: Option<u64>,
    /// The last handle is gone: the thread ends.
    quit: bool,
}

struct Entry {
    id: u64,
    job: Job,
    due: Instant,
}

/// A job on the ticker; removed when dropped, which waits for its tick
/// under way, if any (what the tick writes is then written).
#[derive(Debug)]
pub(crate) struct Ticking {
    ticker: Ticker,
    id: u64,
}

impl Ticker {
    /// Runs `job` first after `first`, then when it says, on the shared
    /// thread (started now if it is not running); `None` when no thread
    /// can be started.
    pub(crate) fn add(&self, first: Duration, job: Job) -> Option<Ticking> {
        let id = {
            let mut state = self.shared.inner.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.next_id += 1;
            let id = state.next_id;
            state.jobs.push(Entry { id, job, due: Instant::now() + first });
            id
        };
        let mut started = self.shared.started.lock().unwrap_or_else(PoisonError::into_inner);
        if !*started {
            let inner = Arc::clone(&self.shared.inner);
            match std::thread::Builder::new().name("stepmon-procfs".to_owned()).spawn(move || run(&inner)) {
                Ok(_) => *started = true,
                Err(_) => {
                    self.remove(id);
                    return None;
                }
            }
        }
        drop(started);
        self.shared.inner.changed.notify_all();
        Some(Ticking { ticker: self.clone(), id })
    }

    fn remove(&self, id: u64) {
        let inner = &self.shared.inner;
        let mut state = inner.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.jobs.retain(|e| e.id != id);
        inner.changed.notify_all();
        while state.running == Some(id) {
            state = inner.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        self.ticker.remove(self.id);
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Not joined: the thread sees `quit` and ends on its own (a tick
        // under way finishes first). Waiting for it was on the end path of
        // every lone step (`stepmon run` without a memory cgroup or
        // taskstats), a wake-up of another CPU included.
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner).quit = true;
        self.inner.changed.notify_all();
    }
}

/// The thread: runs each job when due, sleeping until the earliest.
fn run(shared: &Inner) {
    let mut state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if state.quit {
            return;
        }
        let now = Instant::now();
        let Some(due) = state.jobs.iter().min_by_key(|e| e.due).map(|e| (e.id, e.due)) else {
            state = shared.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        if due.1 > now {
            state = shared.changed.wait_timeout(state, due.1 - now).unwrap_or_else(PoisonError::into_inner).0;
            continue;
        }
        let Some(job) = state.jobs.iter().find(|e| e.id == due.0).map(|e| Arc::clone(&e.job)) else { continue };
        // Read without the lock: steps add and remove jobs meanwhile (a
        // removal waits for this tick to end).
        state.running = Some(due.0);
        drop(state);
        let wait = job();
        state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.running = None;
        shared.changed.notify_all();
        if let Some(entry) = state.jobs.iter_mut().find(|e| e.id == due.0) {
            entry.due = Instant::now() + wait;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn a_removed_job_has_finished_its_tick_under_way() {
        use std::sync::atomic::AtomicBool;
        let ticker = Ticker::default();
        let (started, ended) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let job: Job = {
            let (started, ended) = (Arc::clone(&started), Arc::clone(&ended));
            Arc::new(move || {
                started.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(50));
                ended.store(true, Ordering::SeqCst);
                Duration::from_secs(3600)
            })
        };
        let ticking = ticker.add(Duration::ZERO, job).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !started.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(started.load(Ordering::SeqCst), "the tick began");
        drop(ticking);
        assert!(ended.load(Ordering::SeqCst), "the removal waited for the tick under way");
    }

    #[test]
    fn jobs_tick_on_one_thread_until_removed() {
        let ticker = Ticker::default();
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let counter = |n: &Arc<AtomicU32>, every: u64| -> Job {
            let n = Arc::clone(n);
            Arc::new(move || {
                n.fetch_add(1, Ordering::Relaxed);
                Duration::from_millis(every)
            })
        };
        let ta = ticker.add(Duration::ZERO, counter(&a, 5)).unwrap();
        let tb = ticker.add(Duration::from_secs(3600), counter(&b, 5)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while a.load(Ordering::Relaxed) < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(a.load(Ordering::Relaxed) >= 3, "a ticks every 5 ms");
        assert_eq!(b.load(Ordering::Relaxed), 0, "b is not due for an hour");
        drop(ta);
        let after = a.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(30));
        assert!(a.load(Ordering::Relaxed) <= after + 1, "a removed (one tick may have been under way)");
        drop(tb);
        drop(ticker);
    }
}

//! The sampler: one probe, one shared tick, any number of subscribers, an
//! async driver that needs no particular executor.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use event_listener::Event;
use futures::channel::mpsc;
use futures::future::{Either, select};
use futures::{Stream, StreamExt};

use crate::clock::{Clock, SystemClock};
use crate::policy::{Policy, PolicyError};
use crate::probe::{Probe, Tick};
use crate::schedule::{Schedule, SubId, Timed};

type Sender<S> = mpsc::UnboundedSender<Timed<S>>;

/// Why [`Sampler::start`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The policy cannot work.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The driver thread could not be spawned.
    #[error("cannot spawn the sampler thread: {0}")]
    Thread(#[source] std::io::Error),
}

struct Shared<P: Probe> {
    schedule: Mutex<Schedule<P::Sample>>,
    streams: Mutex<BTreeMap<SubId, Sender<P::Sample>>>,
    // The driver holds the probe until a tick's read is delivered, so a
    // closing subscriber never loses or races with it (BuildKit #4004).
    //
    // A plain mutex, held for one read and never across an `.await`: a
    // caller, async or not, waits at most for the read in flight. Not an
    // async mutex: `subscribe` (so `Monitor::record`) locks it from sync
    // code, which builders call on an executor's thread. async-lock's mutex,
    // once a waiter has starved (500 µs), lets only a starved waiter that an
    // unlock notified take it, and its unlocks notify nobody else while that
    // waiter has not run: a `lock_blocking` on the thread that would poll it
    // (or on every worker thread) then parks for good, with every close
    // behind it (tests/close_at_once.rs).
    probe: Mutex<P>,
    clock: Arc<dyn Clock>,
    // Wakes the driver when subscribers change or the sampler stops.
    changed: Event,
    stopped: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave the schedule half-updated
    // in a way that matters more than losing all samples would.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<P: Probe> Shared<P> {
    fn tick(&self) -> Tick {
        Tick { mono: self.clock.now(), wall: self.clock.wall() }
    }

    fn on_tick(&self) {
        let now = self.clock.now();
        let due = lock(&self.schedule).on_tick(now);
        if due.is_empty() {
            return;
        }
        let mut probe = lock(&self.probe);
        // While this tick waited for the probe (a `close` taking its final
        // sample holds it), its subscribers may have left or the sampler
        // stopped: then nobody wants this read (for a step, it would read a
        // cgroup that is about to be removed).
        if self.stopped.load(Ordering::Acquire) || !lock(&self.schedule).any_subscribed(&due) {
            return;
        }
        let tick = Tick { mono: now, wall: self.clock.wall() };
        let sample = probe.sample(tick);
        lock(&self.schedule).deliver(&due, now, &sample);
        let streams = lock(&self.streams);
        for id in &due {
            if let Some(tx) = streams.get(id) {
                // A dropped receiver only means nobody watches live samples.
                let _ = tx.unbounded_send(Timed { at: now, sample: sample.clone() });
            }
        }
        drop(streams);
        drop(probe);
    }

    async fn drive(self: Arc<Self>) {
        loop {
            // Listen before reading the state (the stop flag included), so a
            // change or a stop in between is not missed: a stop that came
            // after a check of the flag but before `listen` notified nobody.
            let changed = self.changed.listen();
            if self.stopped.load(Ordering::Acquire) {
                return;
            }
            let next = lock(&self.schedule).next_tick(self.clock.now());
            match next {
                None => changed.await,
                Some(deadline) => {
                    if let Either::Left(_) = select(self.clock.sleep_until(deadline), changed).await
                        && !self.stopped.load(Ordering::Acquire)
                    {
                        self.on_tick();
                    }
                }
            }
        }
    }

    fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.changed.notify(usize::MAX);
    }
}

/// A throttled sampler of one [`Probe`], following a [`Policy`].
///
/// Reads happen on a shared tick; one read serves every subscriber due on
/// that tick. Something must drive the ticks: either [`Sampler::start`]
/// (the process's one sampler thread, usable without any executor) or
/// [`Sampler::driver`] spawned on the caller's executor (smol, tokio,
/// `futures::executor`, ... — timers come from `async-io`, which has its
/// own reactor thread).
///
/// ```
/// use std::time::Duration;
/// use stepmon_sampler::{FastStart, Policy, Sampler, Tick};
///
/// let mut policy = Policy::buildkit_step();
/// policy.min_interval = Duration::from_millis(20);
/// policy.baseline = true;
/// let sampler = Sampler::start(|tick: Tick| tick.mono, policy).unwrap();
/// let sub = sampler.subscribe();
/// std::thread::sleep(Duration::from_millis(70));
/// let samples = sub.close_blocking(true);
/// assert!(samples.len() >= 3, "baseline, periodic samples and a final one: {samples:?}");
/// ```
pub struct Sampler<P: Probe> {
    shared: Arc<Shared<P>>,
}

impl<P: Probe> std::fmt::Debug for Sampler<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampler").field("subscribers", &lock(&self.shared.schedule).len()).finish()
    }
}

impl<P: Probe> Sampler<P> {
    /// A sampler on the system clock. Nothing is read until it is driven
    /// ([`Sampler::driver`]) and someone subscribes.
    pub fn new(probe: P, policy: Policy) -> Result<Self, PolicyError> {
        Sampler::with_clock(probe, policy, Arc::new(SystemClock::new()))
    }

    /// A sampler on a given clock (e.g. a [`crate::ManualClock`] in tests).
    pub fn with_clock(probe: P, policy: Policy, clock: Arc<dyn Clock>) -> Result<Self, PolicyError> {
        policy.validate()?;
        let shared = Arc::new(Shared {
            schedule: Mutex::new(Schedule::new(policy)),
            streams: Mutex::new(BTreeMap::new()),
            probe: Mutex::new(probe),
            clock,
            changed: Event::new(),
            stopped: AtomicBool::new(false),
        });
        Ok(Sampler { shared })
    }

    /// A sampler on the system clock, driven by the process's one sampler
    /// thread (started on first use; it parks until the next deadline of any
    /// sampler it drives, see `driver.rs`). After [`Sampler::stop`] or drop,
    /// that thread drops the driver (and with it the probe) on its next round,
    /// which the stop triggers: soon, but not before `stop` returns.
    pub fn start(probe: P, policy: Policy) -> Result<Self, StartError> {
        let sampler = Sampler::new(probe, policy)?;
        crate::driver::spawn(Box::pin(sampler.driver())).map_err(StartError::Thread)?;
        Ok(sampler)
    }

    /// The future that drives the ticks until [`Sampler::stop`] (or drop).
    /// Spawn it on any executor; drive a sampler only once.
    pub fn driver(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        Arc::clone(&self.shared).drive()
    }

    /// Adds a subscriber. With [`Policy::baseline`] a sample is read right
    /// away (blocking the caller for that read).
    pub fn subscribe(&self) -> Subscription<P> {
        let shared = &self.shared;
        let baseline = lock(&shared.schedule).policy().baseline;
        let id = if baseline {
            let mut probe = lock(&shared.probe);
            let tick = shared.tick();
            let sample = probe.sample(tick);
            let id = lock(&shared.schedule).subscribe(tick.mono, Some(sample));
            drop(probe);
            id
        } else {
            lock(&shared.schedule).subscribe(shared.clock.now(), None)
        };
        shared.changed.notify(usize::MAX);
        Subscription { shared: Arc::clone(shared), id, closed: false }
    }

    /// Number of open subscriptions.
    #[must_use]
    pub fn subscribers(&self) -> usize {
        lock(&self.shared.schedule).len()
    }

    /// The probe, once no read is in flight (blocks the thread until then:
    /// one read at most).
    #[cfg(target_os = "linux")]
    pub(crate) fn probe(&self) -> MutexGuard<'_, P> {
        lock(&self.shared.probe)
    }

    /// Stops the ticks (subscribers can still close and take a final sample).
    pub fn stop(&self) {
        self.shared.stop();
    }
}

impl<P: Probe> Drop for Sampler<P> {
    fn drop(&mut self) {
        // The driver returns as soon as it sees the stop.
        self.shared.stop();
    }
}

/// One subscriber of a [`Sampler`]: collects samples until closed.
/// Dropping it without closing discards its samples.
pub struct Subscription<P: Probe> {
    shared: Arc<Shared<P>>,
    id: SubId,
    closed: bool,
}

impl<P: Probe> std::fmt::Debug for Subscription<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").field("id", &self.id).finish()
    }
}

impl<P: Probe> Subscription<P> {
    /// A live stream of this subscriber's periodic samples, as they are
    /// taken (before any thinning). Calling it again replaces the previous
    /// stream, which then ends.
    pub fn stream(&self) -> SampleStream<P::Sample> {
        let (tx, rx) = mpsc::unbounded();
        lock(&self.shared.streams).insert(self.id, tx);
        SampleStream { rx }
    }

    /// The samples collected so far (not thinned), e.g. for a progress view.
    #[must_use]
    pub fn snapshot(&self) -> Vec<Timed<P::Sample>> {
        lock(&self.shared.schedule).samples(self.id).map(<[_]>::to_vec).unwrap_or_default()
    }

    /// The newest sample collected so far (not thinned), if any: a progress
    /// view's without copying the others.
    #[must_use]
    pub fn latest(&self) -> Option<Timed<P::Sample>> {
        lock(&self.shared.schedule).samples(self.id).and_then(<[_]>::last).cloned()
    }

    /// Reads a sample now, outside the schedule, and sends it to this
    /// subscriber's live stream ([`Subscription::stream`]) as well as
    /// returning it. It is not kept among the subscriber's samples and the
    /// schedule is unchanged: what the subscription returns on close is
    /// the same with or without it. For a live view that needs a fresh
    /// number when the back-off has made samples sparse (a 40-minute step
    /// is sampled every 4 minutes by then). Blocks for a read in flight;
    /// `None` once the subscription is closed.
    pub fn sample_live(&self) -> Option<Timed<P::Sample>> {
        let shared = &self.shared;
        let mut probe = lock(&shared.probe);
        if shared.stopped.load(Ordering::Acquire) || !lock(&shared.schedule).any_subscribed(&[self.id]) {
            return None;
        }
        let tick = shared.tick();
        let timed = Timed { at: tick.mono, sample: probe.sample(tick) };
        drop(probe);
        if let Some(tx) = lock(&shared.streams).get(&self.id) {
            let _ = tx.unbounded_send(timed.clone());
        }
        Some(timed)
    }

    /// Closes the subscription: waits for a read in flight (blocking the
    /// thread: one read at most), thins the samples to the final interval
    /// and, with `capture_last`, appends one final sample read now.
    pub async fn close(mut self, capture_last: bool) -> Vec<Timed<P::Sample>> {
        self.closed = true;
        let shared = Arc::clone(&self.shared);
        let mut probe = lock(&shared.probe);
        let mut samples = lock(&shared.schedule).close(self.id).unwrap_or_default();
        lock(&shared.streams).remove(&self.id);
        if capture_last {
            let tick = shared.tick();
            samples.push(Timed { at: tick.mono, sample: probe.sample(tick) });
        }
        drop(probe);
        shared.changed.notify(usize::MAX);
        samples
    }

    /// [`Subscription::close`] for callers without an executor.
    pub fn close_blocking(self, capture_last: bool) -> Vec<Timed<P::Sample>> {
        futures::executor::block_on(self.close(capture_last))
    }
}

impl<P: Probe> Drop for Subscription<P> {
    fn drop(&mut self) {
        if !self.closed {
            lock(&self.shared.schedule).close(self.id);
            lock(&self.shared.streams).remove(&self.id);
            self.shared.changed.notify(usize::MAX);
        }
    }
}

/// Live samples of one subscriber; see [`Subscription::stream`]. Ends when
/// the subscription closes.
#[derive(Debug)]
pub struct SampleStream<S> {
    rx: mpsc::UnboundedReceiver<Timed<S>>,
}

impl<S> Stream for SampleStream<S> {
    type Item = Timed<S>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Timed<S>>> {
        self.rx.poll_next_unpin(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use super::*;
    use crate::clock::ManualClock;

    /// Runs one tick (due now) on a thread of its own while the probe is
    /// busy (as during a close's final read), dropping `leaving` once the
    /// tick has chosen whom it reads for, before it can have the probe.
    fn tick_behind_a_busy_probe<P: Probe>(sampler: &Sampler<P>, leaving: Subscription<P>) {
        let shared = &sampler.shared;
        let now = shared.clock.now();
        let due = lock(&shared.schedule).next_tick(now);
        assert_eq!(due, Some(now), "a tick is due");
        let busy = lock(&shared.probe);
        std::thread::scope(|scope| {
            let tick = scope.spawn(|| shared.on_tick());
            // The tick has marked its subscribers due (the grid moved on)
            // and now waits for the probe.
            while lock(&shared.schedule).next_tick(now) == due {
                std::thread::yield_now();
            }
            drop(leaving);
            drop(busy);
            tick.join().unwrap();
        });
    }

    #[test]
    fn a_live_sample_goes_to_the_stream_only_and_leaves_the_schedule_alone() {
        let reads = Arc::new(AtomicU32::new(0));
        let counter = Arc::clone(&reads);
        let probe = move |_: Tick| counter.fetch_add(1, Ordering::SeqCst);
        let policy = Policy::step();
        let clock = ManualClock::new("2026-11-30T10:00:00Z".parse().unwrap());
        let sampler = Sampler::with_clock(probe, policy, Arc::new(clock.clone())).unwrap();
        let sub = sampler.subscribe();
        let mut stream = sub.stream();
        assert_eq!(sub.latest().map(|t| t.sample), Some(0), "the baseline");
        clock.advance(std::time::Duration::from_millis(10));
        let live = sub.sample_live().unwrap();
        assert_eq!(live.sample, 1);
        assert_eq!(futures::executor::block_on(stream.next()).map(|t| t.sample), Some(1), "streamed");
        assert_eq!(sub.snapshot().len(), 1, "not kept");
        assert_eq!(sub.latest().map(|t| t.sample), Some(0));
        let kept = sub.close_blocking(false);
        assert_eq!(kept.iter().map(|t| t.sample).collect::<Vec<_>>(), [0]);
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_tick_waiting_behind_a_close_reads_nothing_once_its_subscribers_left() {
        let reads = Arc::new(AtomicU32::new(0));
        let counter = Arc::clone(&reads);
        let probe = move |_: Tick| counter.fetch_add(1, Ordering::SeqCst);
        let mut policy = Policy::buildkit_step();
        policy.baseline = false;
        let clock = ManualClock::new("2026-11-30T10:00:00Z".parse().unwrap());
        let sampler = Sampler::with_clock(probe, policy, Arc::new(clock.clone())).unwrap();
        let (a, b) = (sampler.subscribe(), sampler.subscribe());

        // Both are due on the first tick; a leaves while it waits.
        clock.advance(policy.min_interval);
        tick_behind_a_busy_probe(&sampler, a);
        assert_eq!(reads.load(Ordering::SeqCst), 1, "b is still subscribed: the tick reads for it");
        // b is due again one interval later; it leaves while that tick waits.
        clock.advance(policy.min_interval);
        tick_behind_a_busy_probe(&sampler, b);
        assert_eq!(reads.load(Ordering::SeqCst), 1, "nobody left to read for");
    }
}

//! Where the sampler gets time from. [`SystemClock`] sleeps by parking the
//! sampler thread of [`crate::Sampler::start`] and on `async-io` timers
//! (their own reactor thread, so it works under any executor) everywhere
//! else; [`ManualClock`] is moved by hand, which makes schedules testable
//! without sleeping.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};

/// A boxed sleep future.
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A source of monotonic time (for scheduling), wall time (for sample
/// timestamps) and timers.
pub trait Clock: Send + Sync + 'static {
    /// Monotonic time since this clock's origin.
    fn now(&self) -> Duration;
    /// Wall-clock time now.
    fn wall(&self) -> Timestamp;
    /// A future that completes once [`Clock::now`] has reached `deadline`.
    fn sleep_until(&self, deadline: Duration) -> Sleep;
}

/// The real clock: `Instant` for scheduling, the system time for
/// timestamps, `async_io::Timer` for sleeping.
#[derive(Debug, Clone)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    #[must_use]
    pub fn new() -> Self {
        SystemClock { origin: Instant::now() }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn wall(&self) -> Timestamp {
        Timestamp::now()
    }

    fn sleep_until(&self, deadline: Duration) -> Sleep {
        let at = self.origin.checked_add(deadline).unwrap_or_else(Instant::now);
        Box::pin(SystemSleep { at, timer: None })
    }
}

/// [`SystemClock`]'s sleep: on the sampler thread of [`crate::Sampler::start`]
/// it only registers its deadline with that thread (`crate::driver`); on any
/// other executor it waits on an `async-io` timer, created on first need.
struct SystemSleep {
    at: Instant,
    timer: Option<async_io::Timer>,
}

impl Future for SystemSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            return Poll::Ready(());
        }
        if crate::driver::register_deadline(self.at) {
            return Poll::Pending;
        }
        let at = self.at;
        let timer = self.timer.get_or_insert_with(|| async_io::Timer::at(at));
        Pin::new(timer).poll(cx).map(drop)
    }
}

#[derive(Debug)]
struct ManualState {
    now: Duration,
    sleepers: Vec<(Duration, Waker)>,
}

/// A clock that only moves when told to ([`ManualClock::advance`]), for
/// deterministic tests of anything driven by a [`crate::Sampler`]. Its wall
/// time is a fixed origin plus [`Clock::now`].
#[derive(Debug, Clone)]
pub struct ManualClock {
    state: Arc<Mutex<ManualState>>,
    wall_origin: Timestamp,
}

impl ManualClock {
    /// A clock at monotonic zero whose wall time starts at `wall_origin`.
    #[must_use]
    pub fn new(wall_origin: Timestamp) -> Self {
        ManualClock {
            state: Arc::new(Mutex::new(ManualState { now: Duration::ZERO, sleepers: Vec::new() })),
            wall_origin,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ManualState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves time forward and wakes every sleeper whose deadline passed.
    pub fn advance(&self, by: Duration) {
        let woken: Vec<Waker> = {
            let mut state = self.lock();
            state.now = state.now.saturating_add(by);
            let now = state.now;
            let (due, waiting): (Vec<_>, Vec<_>) = state.sleepers.drain(..).partition(|(at, _)| *at <= now);
            state.sleepers = waiting;
            due.into_iter().map(|(_, waker)| waker).collect()
        };
        woken.into_iter().for_each(Waker::wake);
    }

    /// The earliest deadline anyone sleeps until, if any.
    #[must_use]
    pub fn next_deadline(&self) -> Option<Duration> {
        self.lock().sleepers.iter().map(|(at, _)| *at).min()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        self.lock().now
    }

    fn wall(&self) -> Timestamp {
        let offset = SignedDuration::try_from(self.now()).unwrap_or(SignedDuration::MAX);
        self.wall_origin.checked_add(offset).unwrap_or(self.wall_origin)
    }

    fn sleep_until(&self, deadline: Duration) -> Sleep {
        Box::pin(ManualSleep { clock: self.clone(), deadline })
    }
}

struct ManualSleep {
    clock: ManualClock,
    deadline: Duration,
}

impl Future for ManualSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.clock.lock();
        if state.now >= self.deadline {
            return Poll::Ready(());
        }
        state.sleepers.push((self.deadline, cx.waker().clone()));
        Poll::Pending
    }
}

//! The process's one sampler thread: drives every [`crate::Sampler::start`]ed
//! sampler, with timers of its own instead of `async-io`'s reactor.
//!
//! Why not a thread per sampler with `async_io::block_on`: `stepmon run`
//! then started three threads besides its own (the machine's sampler, the
//! step's sampler, and async-io's reactor thread, which polls with a
//! back-off while another thread holds the reactor). On a 2-CPU machine
//! those thread starts competed with the step itself for the first
//! milliseconds, which is all a short step has. One thread that parks until
//! the earliest deadline of its samplers does the same work.
//!
//! How timers work here: [`SystemClock`](crate::SystemClock)'s sleep future,
//! when polled on this thread, registers its deadline for the current round
//! ([`register_deadline`]) instead of creating an `async-io` timer; every
//! round polls *every* task (there are few: one per open sampler), so each
//! pending sleep registers again, and the thread parks until the earliest
//! one or until a waker unparks it. Polled on any other thread (smol, tokio,
//! `futures::executor`), the same future falls back to an `async-io` timer.

use std::cell::Cell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::Instant;

type Task = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Tasks handed to the thread and not yet taken by it.
type Incoming = Arc<Mutex<Vec<Task>>>;

/// The thread, once started: where to put new tasks, and whom to wake.
static DRIVER: Mutex<Option<(Incoming, Thread)>> = Mutex::new(None);

thread_local! {
    /// `Some(earliest deadline so far)` on the driver thread during a round,
    /// `None` on every other thread.
    static ROUND: Cell<Option<Option<Instant>>> = const { Cell::new(None) };
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// On the driver thread: records that a task wants to be polled again at
/// `at` and returns `true`. Elsewhere: returns `false` (the caller needs a
/// timer of its own).
pub(crate) fn register_deadline(at: Instant) -> bool {
    ROUND.with(|round| match round.get() {
        Some(earliest) => {
            round.set(Some(Some(earliest.map_or(at, |e| e.min(at)))));
            true
        }
        None => false,
    })
}

/// Runs `task` on the sampler thread, starting that thread on first use.
pub(crate) fn spawn(task: Task) -> std::io::Result<()> {
    let mut driver = lock(&DRIVER);
    let (incoming, thread) = match driver.as_ref() {
        Some(started) => started,
        None => {
            let incoming = Incoming::default();
            let taken = Arc::clone(&incoming);
            let handle = std::thread::Builder::new().name("stepmon-sampler".into()).spawn(move || run(&taken))?;
            driver.insert((incoming, handle.thread().clone()))
        }
    };
    lock(incoming).push(task);
    thread.unpark();
    Ok(())
}

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// The thread's loop: take new tasks, poll every task once, park until the
/// earliest registered deadline (or a wake-up). Lives as long as the process.
fn run(incoming: &Mutex<Vec<Task>>) {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut tasks: Vec<Task> = Vec::new();
    loop {
        tasks.append(&mut lock(incoming));
        ROUND.with(|round| round.set(Some(None)));
        tasks.retain_mut(|task| {
            // A panicking probe ends its own sampler, not every sampler.
            matches!(catch_unwind(AssertUnwindSafe(|| task.as_mut().poll(&mut cx))), Ok(Poll::Pending))
        });
        let earliest = ROUND.with(|round| round.get().flatten());
        match earliest {
            Some(at) => std::thread::park_timeout(at.saturating_duration_since(Instant::now())),
            // A spawn or a wake-up after the poll above left the thread's
            // unpark token set, so this returns at once then.
            None => std::thread::park(),
        }
    }
}

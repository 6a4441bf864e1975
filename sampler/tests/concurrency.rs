//! Many subscribers of one sampler, opened and closed from many threads
//! while the driver reads: every subscriber gets exactly its own samples, in
//! order, and nothing races. No real timers or I/O (a `ManualClock`, the
//! `futures` executor, std threads), so this test also runs under Miri, whose
//! data-race detector then checks the sampler's locking:
//! `MIRIFLAGS=-Zmiri-disable-isolation cargo +nightly miri test -p stepmon-sampler --test concurrency`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use stepmon_sampler::{ManualClock, Policy, Sampler, Tick};

const SUBSCRIBERS: usize = if cfg!(miri) { 4 } else { 16 };
const TICKS: u64 = if cfg!(miri) { 3 } else { 8 };

#[test]
fn subscribers_on_many_threads_get_their_own_ordered_samples() {
    let clock = ManualClock::new(Timestamp::UNIX_EPOCH);
    let reads = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&reads);
    // Each sample is the number of the read that produced it.
    let probe = move |_: Tick| counter.fetch_add(1, Ordering::SeqCst) + 1;
    let sampler = Arc::new(Sampler::with_clock(probe, Policy::buildkit_system(), Arc::new(clock.clone())).unwrap());
    let driver = {
        let future = sampler.driver();
        std::thread::spawn(move || futures::executor::block_on(future))
    };

    let subscriptions: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..SUBSCRIBERS).map(|_| scope.spawn(|| sampler.subscribe())).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(sampler.subscribers(), SUBSCRIBERS);

    for tick in 1..=TICKS {
        // Wait until the driver sleeps until the next tick, then move time.
        let deadline = Duration::from_secs(2 * tick);
        while clock.next_deadline() != Some(deadline) {
            std::thread::yield_now();
        }
        clock.advance(Duration::from_secs(2));
        // The tick's read is delivered once every subscriber has it.
        while subscriptions.iter().any(|s| s.snapshot().len() < usize::try_from(tick).unwrap()) {
            std::thread::yield_now();
        }
    }

    let results: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = subscriptions
            .into_iter()
            .map(|sub| scope.spawn(move || futures::executor::block_on(sub.close(true))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap().into_iter().map(|t| t.sample).collect()).collect()
    });
    sampler.stop();
    driver.join().unwrap();

    // One read per tick served every subscriber; then one final read each.
    let periodic: Vec<u64> = (1..=TICKS).collect();
    let mut finals = Vec::new();
    for samples in &results {
        assert_eq!(samples.len(), periodic.len() + 1);
        assert_eq!(samples[..periodic.len()], periodic[..], "shared ticks, in order");
        finals.push(*samples.last().unwrap());
    }
    finals.sort_unstable();
    let expected_finals: Vec<u64> = (TICKS + 1..=TICKS + SUBSCRIBERS as u64).collect();
    assert_eq!(finals, expected_finals, "each close took its own final read");
    assert_eq!(reads.load(Ordering::SeqCst), TICKS + SUBSCRIBERS as u64);
}

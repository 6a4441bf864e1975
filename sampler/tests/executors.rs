//! The sampler runs under different executors (its timers come from
//! `async-io`, the driver is a plain future). Time is a `ManualClock`, so
//! these tests never sleep and the schedule is exact.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use stepmon_sampler::{Clock, ManualClock, Policy, Sampler, Tick};

fn counting_probe() -> (Arc<AtomicU32>, impl FnMut(Tick) -> (u32, Timestamp) + Send + 'static) {
    let reads = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&reads);
    (reads, move |tick: Tick| (counter.fetch_add(1, Ordering::SeqCst) + 1, tick.wall))
}

fn origin() -> Timestamp {
    "2026-11-30T10:00:00Z".parse().unwrap()
}

/// Lets other tasks run once.
async fn yield_now() {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await;
}

/// Waits (cooperatively) until the driver sleeps until `deadline`.
async fn driver_sleeps_until(clock: &ManualClock, deadline: Duration) {
    for _ in 0..100_000 {
        if clock.next_deadline() == Some(deadline) {
            return;
        }
        yield_now().await;
    }
    panic!("driver never slept until {deadline:?} (next: {:?})", clock.next_deadline());
}

/// The scenario every executor must run identically: BuildKit step policy,
/// three ticks, close with a final sample.
async fn scenario(clock: ManualClock, sampler: &Sampler<impl stepmon_sampler::Probe<Sample = (u32, Timestamp)>>) {
    let sub = sampler.subscribe();
    let mut live = sub.stream();
    for i in 1..=3u32 {
        let deadline = Duration::from_secs(2 * u64::from(i));
        driver_sleeps_until(&clock, deadline).await;
        clock.advance(Duration::from_secs(2));
        let sample = live.next().await.unwrap();
        assert_eq!(sample.at, deadline);
        assert_eq!(sample.sample.0, i, "one read per tick");
        assert_eq!(sample.sample.1, origin() + jiff::SignedDuration::from_secs(2 * i64::from(i)));
    }
    clock.advance(Duration::from_millis(500));
    let samples = sub.close(true).await;
    let reads: Vec<u32> = samples.iter().map(|s| s.sample.0).collect();
    assert_eq!(reads, [1, 2, 3, 4], "three periodic samples and the final one");
    assert_eq!(samples.last().unwrap().at, Duration::from_millis(6500));
    assert!(live.next().await.is_none(), "the live stream ends with the subscription");
}

#[test]
fn runs_under_futures_executor() {
    let clock = ManualClock::new(origin());
    let (reads, probe) = counting_probe();
    let sampler = Sampler::with_clock(probe, Policy::buildkit_step(), Arc::new(clock.clone())).unwrap();
    let mut pool = futures::executor::LocalPool::new();
    futures::task::LocalSpawnExt::spawn_local(&pool.spawner(), sampler.driver()).unwrap();
    pool.run_until(scenario(clock, &sampler));
    assert_eq!(reads.load(Ordering::SeqCst), 4);
    sampler.stop();
    pool.run_until_stalled();
}

#[test]
fn runs_under_smol() {
    let clock = ManualClock::new(origin());
    let (reads, probe) = counting_probe();
    let sampler = Sampler::with_clock(probe, Policy::buildkit_step(), Arc::new(clock.clone())).unwrap();
    smol::block_on(async {
        let driver = smol::spawn(sampler.driver());
        scenario(clock, &sampler).await;
        sampler.stop();
        driver.await;
    });
    assert_eq!(reads.load(Ordering::SeqCst), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_under_tokio() {
    let clock = ManualClock::new(origin());
    let (reads, probe) = counting_probe();
    let sampler = Sampler::with_clock(probe, Policy::buildkit_step(), Arc::new(clock.clone())).unwrap();
    let driver = tokio::spawn(sampler.driver());
    scenario(clock, &sampler).await;
    sampler.stop();
    driver.await.unwrap();
    assert_eq!(reads.load(Ordering::SeqCst), 4);
}

#[test]
fn blocking_api_with_the_system_clock() {
    // Real time, short intervals: only lower bounds are asserted.
    let mut policy = Policy::buildkit_step();
    policy.min_interval = Duration::from_millis(10);
    policy.baseline = true;
    let (reads, probe) = counting_probe();
    let sampler = Sampler::start(probe, policy).unwrap();
    let sub = sampler.subscribe();
    // The baseline, then at least one periodic read (waited for, not slept
    // for: a loaded machine may take longer than a few intervals).
    let start = std::time::Instant::now();
    while reads.load(Ordering::SeqCst) < 2 {
        assert!(start.elapsed() < Duration::from_secs(10), "no periodic read within 10 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    let samples = sub.close_blocking(true);
    assert!(samples.len() >= 3, "baseline + ≥1 periodic + final, got {}", samples.len());
    assert_eq!(samples.first().unwrap().at, samples.first().unwrap().at.min(samples.last().unwrap().at));
    drop(sampler);
    let after_drop = reads.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(reads.load(Ordering::SeqCst), after_drop, "no reads after the sampler is dropped");
}

#[test]
fn closing_while_idle_and_dropping_subscriptions() {
    let clock = ManualClock::new(origin());
    let (reads, probe) = counting_probe();
    let sampler = Sampler::with_clock(probe, Policy::buildkit_step(), Arc::new(clock.clone())).unwrap();
    let a = sampler.subscribe();
    let b = sampler.subscribe();
    assert_eq!(sampler.subscribers(), 2);
    drop(a);
    assert_eq!(sampler.subscribers(), 1);
    // Without a driver no periodic read happens; close still takes the final one.
    let samples = b.close_blocking(true);
    assert_eq!(samples.len(), 1);
    assert_eq!(reads.load(Ordering::SeqCst), 1);
    assert_eq!(clock.now(), Duration::ZERO);
}

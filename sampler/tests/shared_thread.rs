//! `Sampler::start` drives every sampler on one thread per process, with
//! timers of its own (sampler/src/driver.rs). Real time, short intervals:
//! only lower bounds and "no more reads" are asserted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use stepmon_sampler::{Policy, Sampler, Tick};

fn policy(interval_ms: u64) -> Policy {
    let mut policy = Policy::buildkit_step();
    policy.min_interval = Duration::from_millis(interval_ms);
    // Enough samples that the interval does not double within the test.
    policy.max_samples = 1000;
    policy
}

fn counting() -> (Arc<AtomicU32>, impl FnMut(Tick) -> u32 + Send + 'static) {
    let reads = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&reads);
    (reads, move |_: Tick| counter.fetch_add(1, Ordering::SeqCst) + 1)
}

/// Names of this process's threads (Linux: /proc/self/task/*/comm).
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .map(|dir| {
            dir.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .map(|name| name.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn wait_for(reads: &AtomicU32, at_least: u32) {
    let start = Instant::now();
    while reads.load(Ordering::SeqCst) < at_least {
        assert!(start.elapsed() < Duration::from_secs(10), "only {} reads after 10 s", reads.load(Ordering::SeqCst));
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn samplers_with_different_intervals_share_one_thread() {
    let (fast_reads, fast) = counting();
    let (slow_reads, slow) = counting();
    let fast = Sampler::start(fast, policy(5)).unwrap();
    let slow = Sampler::start(slow, policy(40)).unwrap();
    let (fast_sub, slow_sub) = (fast.subscribe(), slow.subscribe());
    wait_for(&slow_reads, 3);
    // The slow sampler's long sleeps do not hold back the fast one.
    assert!(fast_reads.load(Ordering::SeqCst) >= 10, "fast: {}", fast_reads.load(Ordering::SeqCst));
    if cfg!(target_os = "linux") {
        let names = thread_names();
        let samplers = names.iter().filter(|n| *n == "stepmon-sampler").count();
        assert_eq!(samplers, 1, "one sampler thread for every started sampler: {names:?}");
        assert!(!names.iter().any(|n| n == "async-io"), "no async-io reactor thread is needed: {names:?}");
    }
    assert!(fast_sub.close_blocking(true).len() >= 10);
    assert!(slow_sub.close_blocking(true).len() >= 3);
    drop((fast, slow));
    let (fast_after, slow_after) = (fast_reads.load(Ordering::SeqCst), slow_reads.load(Ordering::SeqCst));
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(fast_reads.load(Ordering::SeqCst), fast_after, "no reads after drop");
    assert_eq!(slow_reads.load(Ordering::SeqCst), slow_after, "no reads after drop");
}

#[test]
fn a_panicking_probe_ends_only_its_own_sampler() {
    let (healthy_reads, healthy) = counting();
    let panics = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&panics);
    let broken = move |_: Tick| -> u32 {
        counter.fetch_add(1, Ordering::SeqCst);
        panic!("probe failure (expected by this test)");
    };
    let broken = Sampler::start(broken, policy(5)).unwrap();
    let healthy = Sampler::start(healthy, policy(5)).unwrap();
    let broken_sub = broken.subscribe();
    let healthy_sub = healthy.subscribe();
    wait_for(&panics, 1);
    let before = healthy_reads.load(Ordering::SeqCst);
    wait_for(&healthy_reads, before + 5);
    assert_eq!(panics.load(Ordering::SeqCst), 1, "the broken sampler is not driven again");
    // Its subscription still closes (without a final read, which would panic here).
    assert!(broken_sub.close_blocking(false).is_empty());
    assert!(healthy_sub.close_blocking(true).len() >= 5);
}

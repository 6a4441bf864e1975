//! The monitor and recorders on real cgroups of this machine (root only;
//! prints SKIPPED otherwise): many steps at once, failed steps keep their
//! usage, shutdown finalises open recordings and waits for releases.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::TestCgroup;
use stepmon_sampler::{Monitor, MonitorError, MonitorOptions, NetworkSource, Policy};

/// Short intervals so the tests take well under a second of sampling.
fn options() -> MonitorOptions {
    let mut step = Policy::buildkit_step();
    step.min_interval = Duration::from_millis(40);
    step.baseline = true;
    let mut system = Policy::buildkit_system();
    system.min_interval = Duration::from_millis(40);
    system.baseline = true;
    let mut options = MonitorOptions::default();
    options.step_policy = step;
    options.system_policy = system;
    options
}

#[test]
fn many_concurrent_recorders_each_get_their_own_samples() {
    let mut cgroups: Vec<TestCgroup> = Vec::new();
    for i in 0..8 {
        let Some(cgroup) = TestCgroup::create(&format!("rec{i}")) else { return };
        cgroups.push(cgroup);
    }
    let monitor = Monitor::new(options()).unwrap();
    // Every other step is busy; the idle ones (no process) must get no CPU.
    let recorders: Vec<_> = cgroups
        .iter_mut()
        .enumerate()
        .map(|(i, cgroup)| {
            let recorder = monitor.record(&cgroup.leaf, &NetworkSource::SharedNamespace).unwrap();
            if i % 2 == 0 {
                cgroup.spawn_busy();
            }
            recorder
        })
        .collect();
    assert_eq!(monitor.open_recordings(), 8);
    // Sample until every step has had periodic samples: a fixed sleep was
    // too short for the last steps on a slow machine (the pure-v2 VM under
    // software emulation, with four busy loops on two vCPUs, once gave the
    // last step none in 300 ms).
    wait_for_live_samples(&recorders, 2, Duration::from_secs(60));
    for cgroup in &mut cgroups {
        cgroup.kill_all();
    }
    // Close all at once from as many threads.
    let usages: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = recorders.into_iter().map(|r| scope.spawn(move || r.close_blocking())).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(monitor.open_recordings(), 0);
    for (i, usage) in usages.iter().enumerate() {
        let samples = &usage.resource_usage.samples;
        assert!(samples.len() >= 3, "step {i}: baseline, periodic and final samples, got {}", samples.len());
        assert!(samples.windows(2).all(|w| w[0].timestamp <= w[1].timestamp), "step {i}: ordered");
        let used = samples.last().unwrap().cpu_stat.unwrap().usage_nanos.unwrap();
        // Busy steps share 2 cores with each other and whatever else runs,
        // so only "some" CPU is certain; idle steps never had a process.
        if i % 2 == 0 {
            assert!(used >= 1_000_000, "busy step {i} used only {used} ns");
        } else {
            assert_eq!(used, 0, "idle step {i} was charged another step's CPU");
        }
        assert!(usage.resource_usage.sys_cpu_stat.is_some(), "step {i}: sysCPUStat");
        assert!(usage.sys_usage.len() >= 2, "step {i}: system samples during the step");
        let json = serde_json::to_value(usage).unwrap();
        assert!(json["resourceUsage"]["samples"].is_array() && json["sysUsage"].is_array());
    }
    monitor.shutdown_blocking();
}

/// Waits until each recorder's live stream has delivered `count` samples,
/// polling every 10 ms; panics naming the steps still short after `limit`.
fn wait_for_live_samples(recorders: &[stepmon_sampler::Recorder], count: usize, limit: Duration) {
    use futures::{FutureExt, StreamExt};
    let mut streams: Vec<_> = recorders.iter().map(|r| r.stream()).collect();
    let mut seen = vec![0usize; streams.len()];
    let deadline = std::time::Instant::now() + limit;
    while seen.iter().any(|&n| n < count) {
        for (stream, seen) in streams.iter_mut().zip(&mut seen) {
            while *seen < count && stream.next().now_or_never().flatten().is_some() {
                *seen += 1;
            }
        }
        let short: Vec<usize> = (0..seen.len()).filter(|&i| seen[i] < count).collect();
        assert!(
            short.is_empty() || std::time::Instant::now() < deadline,
            "steps {short:?} had fewer than {count} live samples after {limit:?} (seen: {seen:?})"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn shutdown_finalises_open_recordings_and_waits_for_releases() {
    let Some(mut first) = TestCgroup::create("shut1") else { return };
    let Some(mut second) = TestCgroup::create("shut2") else { return };
    let monitor = Monitor::new(options()).unwrap();
    let a = monitor.record(&first.leaf, &NetworkSource::SharedNamespace).unwrap();
    let b = monitor.record(&second.leaf, &NetworkSource::SharedNamespace).unwrap();
    first.spawn_busy();
    second.spawn_busy();
    std::thread::sleep(Duration::from_millis(150));
    first.kill_all();
    second.kill_all();
    let released = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&released);
    a.close_then(move |usage| {
        // A slow release (removing a cgroup, uploading a result, ...).
        std::thread::sleep(Duration::from_millis(200));
        assert!(!usage.resource_usage.samples.is_empty());
        flag.store(true, Ordering::SeqCst);
    })
    .unwrap();
    monitor.shutdown_blocking();
    assert!(released.load(Ordering::SeqCst), "shutdown returned before the release ran");
    assert_eq!(monitor.open_recordings(), 0, "b was finalised by shutdown");
    // b's owner closes later and still gets everything recorded until shutdown.
    let usage = b.close_blocking();
    let last = usage.resource_usage.samples.last().unwrap();
    assert!(last.cpu_stat.unwrap().usage_nanos.unwrap() > 0);
    assert!(matches!(monitor.record(&second.leaf, &NetworkSource::SharedNamespace), Err(MonitorError::Closed)));
}

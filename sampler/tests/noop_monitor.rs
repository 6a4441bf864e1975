//! The Monitor/Recorder API off Linux (the stub-noop backend): the same
//! calls as on Linux work, nothing is measured, each usage says why.
//! Runs under Wine in CI (scripts/wine-test).
#![cfg(not(target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use stepmon_model::missing::MissingKind;
use stepmon_sampler::{Monitor, MonitorError, MonitorOptions, NetworkSource};

#[test]
fn every_call_works_and_says_unsupported() {
    let monitor = Monitor::new(MonitorOptions::default()).unwrap();
    let recorder = monitor.record("C:\\no\\cgroups\\here", &NetworkSource::SharedNamespace).unwrap();
    assert_eq!(monitor.open_recordings(), 1);
    assert!(futures::executor::block_on(recorder.stream().next()).is_none());
    let usage = recorder.close_blocking();
    assert!(usage.resource_usage.samples.is_empty() && usage.sys_usage.is_empty());
    let missing = &usage.resource_usage.stepmon.as_ref().unwrap().missing;
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0].kind, MissingKind::UnsupportedPlatform);
    assert_eq!(monitor.open_recordings(), 0);

    let second = monitor.record("anything", &NetworkSource::SharedNamespace).unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&released);
    second
        .close_then(move |usage| {
            assert!(usage.resource_usage.samples.is_empty());
            flag.store(true, Ordering::SeqCst);
        })
        .unwrap();
    monitor.shutdown_blocking();
    assert!(released.load(Ordering::SeqCst), "shutdown waits for releases");
    assert!(matches!(monitor.record("x", &NetworkSource::SharedNamespace), Err(MonitorError::Closed)));
}

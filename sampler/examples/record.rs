//! Records one cgroup for about a second and prints the usage as JSON — the
//! same code on Linux, Windows and macOS.
//!
//! ```text
//! cargo run -p stepmon-sampler --example record [CGROUP_DIR]
//! ```
//!
//! The directory is the first argument, else `$STEPMON_CGROUP`, else (Linux
//! only) this process's own cgroup v2 directory. While recording, the example
//! keeps one core busy for a moment so the CPU counters move.
//!
//! On Linux the usage holds the cgroup's samples, the machine's samples and
//! its CPU delta, each absent part with a reason in a `missing` entry. Off
//! Linux the monitor is the no-op backend (`stepmon-stub-noop`): every call
//! works, nothing is measured, and the usage's `missing` says
//! `unsupportedPlatform`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use stepmon_sampler::{Monitor, MonitorOptions, NetworkSource};

/// How long the step is recorded.
const RECORD_FOR: Duration = Duration::from_secs(1);
/// How much of that the example spends on the CPU.
const BUSY_FOR: Duration = Duration::from_millis(300);

fn main() -> ExitCode {
    let Some(cgroup_dir) = cgroup_dir() else {
        eprintln!(
            "usage: record [CGROUP_DIR]  (or set STEPMON_CGROUP): no cgroup v2 directory was given and none was found"
        );
        return ExitCode::from(2);
    };
    eprintln!("recording {} for {} ms", cgroup_dir.display(), RECORD_FOR.as_millis());

    let monitor = match Monitor::new(MonitorOptions::default()) {
        Ok(monitor) => monitor,
        Err(error) => {
            eprintln!("record: cannot start the monitor: {error}");
            return ExitCode::FAILURE;
        }
    };
    let recorder = match monitor.record(&cgroup_dir, &NetworkSource::SharedNamespace) {
        Ok(recorder) => recorder,
        Err(error) => {
            eprintln!("record: cannot record {}: {error}", cgroup_dir.display());
            return ExitCode::FAILURE;
        }
    };

    // The "step": some CPU work, then idle until the second is over.
    let start = Instant::now();
    let mut spins = 0u64;
    while start.elapsed() < BUSY_FOR {
        spins = std::hint::black_box(spins.wrapping_add(1));
    }
    std::thread::sleep(RECORD_FOR.saturating_sub(start.elapsed()));

    let usage = recorder.close_blocking();
    monitor.shutdown_blocking();

    match serde_json::to_string_pretty(&usage) {
        Ok(json) => println!("{json}"),
        Err(error) => {
            eprintln!("record: cannot serialize the usage: {error}");
            return ExitCode::FAILURE;
        }
    }
    eprintln!(
        "record: {} step samples, {} machine samples, sysCPUStat {}",
        usage.resource_usage.samples.len(),
        usage.sys_usage.len(),
        if usage.resource_usage.sys_cpu_stat.is_some() { "present" } else { "absent" },
    );
    for missing in usage.resource_usage.stepmon.iter().flat_map(|ext| &ext.missing) {
        eprintln!("record: missing {} ({:?}): {}", missing.field, missing.kind, missing.reason);
    }
    ExitCode::SUCCESS
}

/// The cgroup to record: argument, environment, or this process's own cgroup.
fn cgroup_dir() -> Option<PathBuf> {
    if let Some(arg) = std::env::args_os().nth(1) {
        return Some(PathBuf::from(arg));
    }
    if let Some(env) = std::env::var_os("STEPMON_CGROUP").filter(|value| !value.is_empty()) {
        return Some(PathBuf::from(env));
    }
    own_cgroup()
}

/// This process's cgroup v2 directory (`/proc/self/cgroup` + mountinfo).
#[cfg(target_os = "linux")]
fn own_cgroup() -> Option<PathBuf> {
    match stepmon_sampler::cgroup::discover::locate() {
        Ok(cgroup) => Some(cgroup.own_dir),
        Err(error) => {
            eprintln!("record: cannot find this process's cgroup: {error}");
            None
        }
    }
}

/// There are no cgroups here; the no-op backend ignores the directory, so
/// any name will do.
#[cfg(not(target_os = "linux"))]
fn own_cgroup() -> Option<PathBuf> {
    eprintln!("record: no cgroups on this platform; recording anyway with the no-op backend (nothing is measured)");
    Some(PathBuf::from("no-cgroup"))
}

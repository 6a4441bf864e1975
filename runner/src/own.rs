//! stepmon's own cost while monitoring, for the run document's
//! `stepmon.collector` (the document's types live in `stepmon-report`).

/// This process's CPU time (s, all its threads) and peak RSS (bytes, `VmHWM`).
pub(crate) fn own_usage() -> (Option<f64>, Option<u64>) {
    // CLOCK_PROCESS_CPUTIME_ID is exact; /proc/self/stat counts 10 ms ticks,
    // which read 0 for stepmon's own few milliseconds over a step of seconds
    // (benches/README.md, "Collector CPU over a 3 s step that does not fork").
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    #[allow(clippy::cast_precision_loss)]
    let cpu = Some(now.tv_sec as f64 + now.tv_nsec as f64 / 1e9);
    let rss = stepmon_fdread::read_path("/proc/self/status").ok().and_then(|bytes| {
        let s = String::from_utf8_lossy(&bytes);
        let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    });
    (cpu, rss)
}

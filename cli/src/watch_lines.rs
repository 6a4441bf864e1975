//! `stepmon run --progress` and the memory warning: the runner's
//! [`Progress`] and [`StepEvent`] values as one line of words each, written
//! to stderr with one `write(2)` so that they interleave whole with the
//! step's own output in a CI log.

use std::io::Write as _;
use std::time::Duration;

use stepmon_model::event::{MemoryBound, StepEvent};
use stepmon_model::job::SampleOf;
use stepmon_model::labels::quote;
use stepmon_model::progress::Progress;
use stepmon_report::units;

/// `--progress` without a value, and `STEPMON_PROGRESS=1`.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);
/// The shortest interval taken: a line per 100 ms is no longer a progress.
const SHORTEST: Duration = Duration::from_millis(100);
/// The variable that turns `--progress` on for every step of a CI job.
pub const PROGRESS_VARIABLE: &str = "STEPMON_PROGRESS";

/// An interval as `--progress=` takes it: a decimal number and a unit
/// (`ms`, `s`, `m`, `h`: `30s`, `1.5s`, `2m`), or `1` for the default.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    if text == "1" {
        return Ok(DEFAULT_INTERVAL);
    }
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "" => return Err(format!("{text:?} has no unit: give ms, s, m or h, e.g. 30s (or 1 for the default)")),
        _ => return Err(format!("{text:?}: the unit is ms, s, m or h, e.g. 30s")),
    };
    let value: f64 = number.parse().map_err(|_| format!("{text:?} is not a number and a unit, e.g. 30s"))?;
    let interval = Duration::try_from_secs_f64(value * scale).map_err(|e| format!("{text:?}: {e}"))?;
    if interval < SHORTEST {
        return Err(format!("{text:?} is shorter than {} ms", SHORTEST.as_millis()));
    }
    Ok(interval)
}

/// What `STEPMON_PROGRESS` says: unset, empty or `0`: off; `1`: the
/// default interval; else an interval ([`parse_interval`]).
pub fn from_env(value: Option<&str>) -> Result<Option<Duration>, String> {
    match value {
        None | Some("" | "0") => Ok(None),
        Some(text) => parse_interval(text).map(Some).map_err(|e| format!("{PROGRESS_VARIABLE}: {e}")),
    }
}

/// Writes `line` and a newline to stderr in one `write(2)` (stderr is
/// unbuffered: `eprintln!` writes each piece of its format on its own).
pub fn say(line: &str) {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&bytes);
}

fn cores(value: f64) -> String {
    format!("{value:.2}")
}

fn rate(bytes_per_second: f64) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // rounded, ≥ 0
    let whole = bytes_per_second.max(0.0).round() as u64;
    format!("{}/s", units::bytes(whole))
}

/// One progress line of the step `name`.
pub fn progress_line(name: &str, p: &Progress) -> String {
    let mut line = format!("stepmon: {name}: {}", units::seconds(p.elapsed_seconds));
    match (p.now.cpu_cores, p.cpu_cores_average) {
        (Some(now), Some(average)) => line += &format!("  cpu {} cores now, {} on average", cores(now), cores(average)),
        (Some(now), None) => line += &format!("  cpu {} cores now", cores(now)),
        (None, Some(average)) => line += &format!("  cpu {} cores on average", cores(average)),
        (None, None) => {}
    }
    let mut memory = Vec::new();
    if let Some(now) = p.memory_bytes {
        memory.push(format!("{} now", units::bytes(now)));
    }
    if let Some(peak) = p.memory_peak_bytes {
        memory.push(format!("{} peak", units::bytes(peak)));
    }
    if let Some(limit) = p.memory_limit_bytes {
        memory.push(format!("limit {}", units::bytes(limit)));
    }
    if !memory.is_empty() {
        line += &format!("  memory {}", memory.join(", "));
    }
    if let (Some(read), Some(write)) = (p.now.read_bytes_per_second, p.now.write_bytes_per_second) {
        line += &format!("  io read {} write {}", rate(read), rate(write));
    }
    let stall = p.now.stall;
    let stalls: Vec<String> = [("cpu", stall.cpu), ("memory", stall.memory), ("io", stall.io)]
        .into_iter()
        .filter_map(|(what, share)| share.map(|s| format!("{what} {}", units::percent(s))))
        .collect();
    if !stalls.is_empty() {
        line += &format!("  stall {}", stalls.join(" "));
    }
    if let Some(tasks) = p.tasks {
        line += &format!("  tasks {tasks}");
    }
    if let Some(busiest) = &p.busiest {
        // The command as the kernel names it, quoted when it has a space
        // or a control character (a `comm` is any 15 bytes).
        line += &format!("  busiest {} {} cores", quote(&busiest.command), cores(busiest.cpu_cores));
        if busiest.processes > 1 {
            line += &format!(" in {} processes", busiest.processes);
        }
    }
    if p.of == SampleOf::Enclosing {
        line += "  [enclosing cgroup: others' usage included]";
    }
    line
}

/// The warning line of the event `event` of the step `name`.
pub fn event_line(name: &str, event: &StepEvent) -> Option<String> {
    let memory = event.memory.as_ref()?;
    // The step's own limit file is in a directory named after the run: its
    // name says enough. An enclosing cgroup's path is news.
    let file = match memory.bound {
        MemoryBound::OwnLimit => memory.file.rsplit('/').next().unwrap_or(&memory.file),
        _ => &memory.file,
    };
    let mut line = format!(
        "stepmon: warning: {name}: memory at {} of {} ({} of {}, {file}) after {}",
        units::percent(memory.share),
        memory.bound.describe(),
        units::bytes(memory.usage_bytes),
        units::bytes(memory.limit_bytes),
        units::seconds(event.elapsed_seconds.unwrap_or(0.0)),
    );
    match (memory.trend_bytes_per_second, memory.seconds_to_limit) {
        (Some(trend), Some(to_limit)) => {
            line += &format!(", growing {}: the bound in about {}", rate(trend), units::seconds(to_limit));
        }
        (Some(trend), None) if trend < 0.0 => line += &format!(", shrinking {}", rate(-trend)),
        _ => line += ", not growing",
    }
    if !memory.largest.is_empty() {
        let largest: Vec<String> = memory
            .largest
            .iter()
            .map(|p| format!("{} (pid {}) {}", p.command, p.pid, units::bytes(p.rss_bytes)))
            .collect();
        line += &format!("; largest: {}", largest.join(", "));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_model::event::MemoryNearLimit;

    #[test]
    fn intervals_need_a_unit_and_1_is_the_default() {
        assert_eq!(parse_interval("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_interval("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_interval("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_interval("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_interval("1"), Ok(DEFAULT_INTERVAL));
        for bad in ["", "5", "s", "1.5.0s", "3 s", "10ms", "-1s", "1d"] {
            assert!(parse_interval(bad).is_err(), "{bad:?}");
        }
        assert_eq!(from_env(None), Ok(None));
        assert_eq!(from_env(Some("0")), Ok(None));
        assert_eq!(from_env(Some("1")), Ok(Some(DEFAULT_INTERVAL)));
        assert_eq!(from_env(Some("5s")), Ok(Some(Duration::from_secs(5))));
        assert!(from_env(Some("yes")).unwrap_err().starts_with("STEPMON_PROGRESS: "));
    }

    #[test]
    fn a_progress_line_ends_with_the_busiest_command() {
        let json = r#"{"at": "2026-12-04T10:00:09Z", "elapsedSeconds": 9.0, "of": "step",
            "now": {"seconds": 2.0, "cpuCores": 1.9}, "cpuCoresAverage": 1.5, "tasks": 14,
            "busiest": {"command": "cc1plus", "cpuSeconds": 3.6, "cpuCores": 1.8, "processes": 12}}"#;
        let mut p: Progress = serde_json::from_str(json).unwrap();
        assert_eq!(
            progress_line("build", &p),
            "stepmon: build: 9.00 s  cpu 1.90 cores now, 1.50 on average  tasks 14  busiest cc1plus 1.80 cores in 12 processes"
        );
        let busiest = p.busiest.as_mut().unwrap();
        (busiest.command, busiest.processes) = ("Web Content".to_owned(), 1);
        assert!(
            progress_line("build", &p).ends_with("  busiest 'Web Content' 1.80 cores"),
            "{}",
            progress_line("build", &p)
        );
        p.busiest = None;
        assert!(progress_line("build", &p).ends_with("  tasks 14"), "none: nothing said");
    }

    #[test]
    fn a_warning_names_the_bound_the_share_the_trend_and_the_largest() {
        let mut memory = MemoryNearLimit::new(
            MemoryBound::OwnLimit,
            "/sys/fs/cgroup/memory/x/memory.limit_in_bytes".into(),
            200 << 20,
            181 << 20,
            0.9,
        );
        memory.trend_bytes_per_second = Some(20.0 * 1024.0 * 1024.0);
        memory.seconds_to_limit = Some(0.95);
        memory.largest = vec![stepmon_model::event::ProcessMemory::new(42, "python3".into(), 180 << 20)];
        let event = StepEvent::memory_near_limit("2026-12-04T10:00:09Z".parse().unwrap(), 9.05, memory);
        assert_eq!(
            event_line("grow", &event).unwrap(),
            "stepmon: warning: grow: memory at 90.5% of its memory limit (181.0 MiB of 200.0 MiB, \
             memory.limit_in_bytes) after 9.05 s, growing 20.0 MiB/s: the bound in about 950.0 ms; largest: \
             python3 (pid 42) 180.0 MiB"
        );
    }
}

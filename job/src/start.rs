//! A step's start line, as stepmon names and identifies a step.

use std::sync::Mutex;

use jiff::Timestamp;
use stepmon_model::job::StepStart;
use stepmon_model::labels::{Label, default_name};

/// The start line of the step `command`, named `name` (default: the
/// program's base name, as `stepmon run` names it), with `labels`, started
/// now by this process on this host (its name as the kernel has it, uname's
/// nodename; empty where `/proc/sys/kernel/hostname` cannot be read).
///
/// Its id is `<pid>.<start in ns>`: each call gives a later start than the
/// one before it in this process, by a nanosecond at least, so the steps a
/// builder starts at once never share an id.
#[must_use]
pub fn start(name: Option<&str>, labels: &[Label], command: &[String]) -> StepStart {
    let name = name.map_or_else(|| default_name(command), str::to_owned);
    let mut start = StepStart::new(std::process::id(), later_than_the_last(), name, command.to_vec());
    start.labels = labels.to_vec();
    start.host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_default();
    start
}

/// Now, or a nanosecond after the last start this process handed out when
/// the clock has not moved past it.
fn later_than_the_last() -> Timestamp {
    static LAST: Mutex<i128> = Mutex::new(i128::MIN);
    let mut last = LAST.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = Timestamp::now();
    let ns = now.as_nanosecond().max(last.saturating_add(1));
    *last = ns;
    Timestamp::from_nanosecond(ns).unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_is_named_and_identified_as_stepmon_run_does() {
        let command = vec!["/usr/bin/make".to_owned(), "-j8".to_owned()];
        let labels = [Label::new("role", "compile")];
        let start = start(None, &labels, &command);
        assert_eq!(start.name, "make");
        assert_eq!(start.command, command);
        assert_eq!(start.labels, labels);
        assert_eq!(start.step, format!("{}.{}", std::process::id(), start.start.as_nanosecond()));
        if cfg!(target_os = "linux") {
            assert!(!start.host.is_empty());
        }
        assert_eq!(super::start(Some("build"), &[], &command).name, "build");
    }

    #[test]
    fn steps_started_at_once_in_one_process_get_ids_of_their_own() {
        let threads: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| (0..500).map(|_| start(None, &[], &[]).step).collect::<Vec<_>>()))
            .collect();
        let mut ids: Vec<String> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        let all = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), all);
    }
}

//! The step's processes one by one: what each used (CPU, peak memory, IO,
//! delays), from the kernel's taskstats exit records
//! (<https://docs.kernel.org/accounting/taskstats.html>) where stepmon may
//! listen to them, kept bounded: aggregates per command and the top N
//! processes by CPU, by peak RSS and by IO ([`Processes::build`]).
//!
//! Records can be lost under an exit storm (the kernel drops netlink
//! messages when the listener's buffer is full and counts the drops per
//! socket, for every process of the machine, not the step's alone): the
//! document says how many records arrived and at most how many were lost,
//! and marks the aggregates partial.

mod summary;

use stepmon_model::processes::{CommandAggregate, Processes};

/// The step's processes for people: the summary's lines.
pub trait ProcessesText {
    /// The summary's lines (without indentation). `step_cpu_seconds`: the
    /// step's CPU from its best source, for the shares; without it the
    /// processes' own sum.
    fn summary_lines(&self, step_cpu_seconds: Option<f64>) -> Vec<String>;
}

impl ProcessesText for Processes {
    fn summary_lines(&self, step_cpu_seconds: Option<f64>) -> Vec<String> {
        summary::summary_lines(self, step_cpu_seconds)
    }
}

/// "1.2 GiB (pid 8841, foo.cpp)": the largest peak RSS of a command, whose
/// it was, and its label where there is one (its input file); `None` when
/// no process of the command has a peak RSS.
#[must_use]
pub fn largest(c: &CommandAggregate) -> Option<String> {
    let (bytes, pid) = c.max_peak_rss_bytes.zip(c.max_peak_rss_pid)?;
    let label = c.max_peak_rss_label().map_or_else(String::new, |l| format!(", {l}"));
    Some(format!("{} (pid {pid}{label})", crate::units::bytes(bytes)))
}

#[cfg(test)]
mod tests;

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

mod html;
mod markdown;
mod summary;
mod table;

pub use stepmon_model::processes::*;

/// The step's processes for people: the summary's lines and the table of
/// the top commands in Markdown and HTML.
pub trait ProcessesText {
    /// The summary's lines (without indentation). `step_cpu_seconds`: the
    /// step's CPU from its best source, for the shares; without it the
    /// processes' own sum.
    fn summary_lines(&self, step_cpu_seconds: Option<f64>) -> Vec<String>;
    /// The Markdown table with its heading, or nothing when there are no
    /// processes. `step_cpu_seconds` as for [`ProcessesText::summary_lines`].
    fn markdown_table(&self, step_cpu_seconds: Option<f64>) -> String;
    /// The HTML table, the Markdown one's twin.
    fn html_table(&self, step_cpu_seconds: Option<f64>) -> String;
}

impl ProcessesText for Processes {
    fn summary_lines(&self, step_cpu_seconds: Option<f64>) -> Vec<String> {
        summary::summary_lines(self, step_cpu_seconds)
    }

    fn markdown_table(&self, step_cpu_seconds: Option<f64>) -> String {
        markdown::markdown_table(self, step_cpu_seconds)
    }

    fn html_table(&self, step_cpu_seconds: Option<f64>) -> String {
        html::html_table(self, step_cpu_seconds)
    }
}

#[cfg(test)]
mod tests;

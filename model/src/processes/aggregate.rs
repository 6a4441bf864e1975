//! Aggregates per command name: what a `make -j8` step's 312 `cc1plus`
//! runs used together, and which one peaked.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::record::{Delays, ProcessRecord};

/// The processes of one command name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CommandAggregate {
    /// The command name (`ac_comm`).
    pub command: String,
    /// Processes.
    pub count: u64,
    /// Their CPU, s.
    pub cpu_seconds: f64,
    /// The largest peak RSS among them, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_peak_rss_bytes: Option<u64>,
    /// The pid that had it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_peak_rss_pid: Option<u32>,
    /// That process's arguments ([`ProcessRecord::args`]): which of the
    /// command's runs it was. Empty when they were not read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub max_peak_rss_args: Vec<String>,
    /// Bytes read from storage.
    pub read_bytes: u64,
    /// Bytes written to storage.
    pub write_bytes: u64,
    /// Their delays summed (absent where not counted).
    pub delays: Delays,
}

impl CommandAggregate {
    /// The label of the process with the largest peak RSS (see [`super::label`]).
    #[must_use]
    pub fn max_peak_rss_label(&self) -> Option<&str> {
        super::label(&self.max_peak_rss_args)
    }
}

/// One aggregate per command, most CPU first (then by name).
pub(super) fn by_command<'a>(processes: impl IntoIterator<Item = &'a ProcessRecord>) -> Vec<CommandAggregate> {
    let mut by: BTreeMap<&str, CommandAggregate> = BTreeMap::new();
    for p in processes {
        let a = by.entry(p.command.as_str()).or_insert_with(|| CommandAggregate {
            command: p.command.clone(),
            delays: p.delays,
            ..CommandAggregate::default()
        });
        if a.count > 0 {
            a.delays.add(&p.delays);
        }
        a.count += 1;
        a.cpu_seconds += p.cpu_seconds;
        if p.peak_rss_bytes > a.max_peak_rss_bytes {
            a.max_peak_rss_bytes = p.peak_rss_bytes;
            a.max_peak_rss_pid = Some(p.pid);
            a.max_peak_rss_args.clone_from(&p.args);
        }
        a.read_bytes = a.read_bytes.saturating_add(p.read_bytes.unwrap_or(0));
        a.write_bytes = a.write_bytes.saturating_add(p.write_bytes.unwrap_or(0));
    }
    let mut out: Vec<CommandAggregate> = by.into_values().collect();
    out.sort_by(|a, b| b.cpu_seconds.total_cmp(&a.cpu_seconds).then_with(|| a.command.cmp(&b.command)));
    out
}

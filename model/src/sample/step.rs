//! BuildKit's per-step `Sample` JSON (`executor/resources/types/types.go`,
//! described in `docs/data-model.md`), field for field, plus
//! stepmon's additions under a `stepmon` key that BuildKit consumers ignore.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::missing::Missing;
use crate::network::NetworkSample;
use crate::system::PressureJson;

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One sample of a step's cgroup: BuildKit's `Sample`.
///
/// Controller objects are absent when the controller's files are (the
/// `stepmon.missing` list says why); `pidsStat` is always present, `{}` when
/// `pids.current` is missing, as in BuildKit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepSample {
    /// When the sample was read (RFC 3339, nanoseconds, UTC).
    pub timestamp: Timestamp,
    /// `cpu.stat` + `cpu.pressure`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_stat: Option<CpuStat>,
    /// `memory.stat`, `memory.events`, `memory.peak`, `memory.swap.current`, `memory.pressure`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub memory_stat: Option<MemoryStat>,
    /// `io.stat` summed over devices + `io.pressure`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub io_stat: Option<IoStat>,
    /// `pids.current`.
    #[serde(default)]
    pub pids_stat: PidsStat,
    /// Network counters of the step's own network namespace, relative to its start.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub net_stat: Option<NetworkSample>,
    /// stepmon's additions.
    #[serde(default)]
    pub stepmon: StepSampleExt,
}

impl StepSample {
    /// A sample with nothing read yet.
    #[must_use]
    pub fn empty(timestamp: Timestamp) -> Self {
        StepSample {
            timestamp,
            cpu_stat: None,
            memory_stat: None,
            io_stat: None,
            pids_stat: PidsStat::default(),
            net_stat: None,
            stepmon: StepSampleExt::default(),
        }
    }
}

/// BuildKit's `CPUStat` (times converted from µs to ns).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuStat {
    /// `usage_usec` × 1000.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub usage_nanos: Option<u64>,
    /// `user_usec` × 1000.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub user_nanos: Option<u64>,
    /// `system_usec` × 1000.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub system_nanos: Option<u64>,
    /// `nr_periods` (a C int in the kernel, so it fits).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub nr_periods: Option<u32>,
    /// `nr_throttled`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub nr_throttled: Option<u32>,
    /// `throttled_usec` × 1000.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub throttled_nanos: Option<u64>,
    /// `cpu.pressure`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pressure: Option<PressureJson>,
}

/// BuildKit's `MemoryStat` (bytes; event counters omitted when 0, as in
/// BuildKit — `stepmon.missing` tells a 0 from "not measured").
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // each field is the memory.stat key of the same name, documented in the table above
pub struct MemoryStat {
    /// `memory.swap.current`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub swap_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub anon: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<u64>,
    /// Filled by stepmon (declared but never set by BuildKit).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kernel: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kernel_stack: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub page_tables: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sock: Option<u64>,
    /// Filled by stepmon (declared but never set by BuildKit).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub vmalloc: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub shmem: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file_mapped: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file_dirty: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file_writeback: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub slab: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pgscan: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pgsteal: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pgfault: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pgmajfault: Option<u64>,
    /// `memory.peak` (5.19+).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub peak: Option<u64>,
    /// `memory.events` `low`.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub low_events: u64,
    /// `memory.events` `high`.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub high_events: u64,
    /// `memory.events` `max`.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub max_events: u64,
    /// `memory.events` `oom`.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub oom_events: u64,
    /// `memory.events` `oom_kill`.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub oom_kill_events: u64,
    /// `memory.pressure`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pressure: Option<PressureJson>,
}

/// BuildKit's `IOStat`: `io.stat` summed over devices (each key present once
/// any device printed it).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IoStat {
    /// Σ `rbytes`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub read_bytes: Option<u64>,
    /// Σ `wbytes`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub write_bytes: Option<u64>,
    /// Σ `dbytes`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub discard_bytes: Option<u64>,
    /// Σ `rios`.
    #[serde(rename = "readIOs", skip_serializing_if = "Option::is_none", default)]
    pub read_ios: Option<u64>,
    /// Σ `wios`.
    #[serde(rename = "writeIOs", skip_serializing_if = "Option::is_none", default)]
    pub write_ios: Option<u64>,
    /// Σ `dios`.
    #[serde(rename = "discardIOs", skip_serializing_if = "Option::is_none", default)]
    pub discard_ios: Option<u64>,
    /// `io.pressure`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pressure: Option<PressureJson>,
}

/// BuildKit's `PIDsStat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PidsStat {
    /// `pids.current` (threads).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub current: Option<u64>,
}

/// One device line of `io.stat` (stepmon addition; BuildKit only keeps sums).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IoDevice {
    /// The device; `"MAJ:MIN"` in JSON, as the kernel prints it.
    #[serde(with = "device_id")]
    pub device: Device,
    /// `rbytes`.
    pub read_bytes: Option<u64>,
    /// `wbytes`.
    pub write_bytes: Option<u64>,
    /// `dbytes`.
    pub discard_bytes: Option<u64>,
    /// `rios`.
    #[serde(rename = "readIOs")]
    pub read_ios: Option<u64>,
    /// `wios`.
    #[serde(rename = "writeIOs")]
    pub write_ios: Option<u64>,
    /// `dios`.
    #[serde(rename = "discardIOs")]
    pub discard_ios: Option<u64>,
    /// iocost `cost.usage`, µs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cost_usage_usec: Option<u64>,
}

/// A block device by number, as the kernel prints it in `io.stat`
/// (`MAJ:MIN`, <https://docs.kernel.org/admin-guide/cgroup-v2.html#io-interface-files>).
///
/// ```
/// use stepmon_model::sample::Device;
/// let sda: Device = "8:0".parse().unwrap();
/// assert_eq!((sda.major, sda.minor), (8, 0));
/// assert_eq!(sda.to_string(), "8:0");
/// assert!("8".parse::<Device>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Device {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

impl std::str::FromStr for Device {
    type Err = String;

    /// `MAJ:MIN`, two decimal numbers.
    fn from_str(text: &str) -> Result<Device, String> {
        let (major, minor) = text.split_once(':').ok_or_else(|| format!("device {text:?} is not MAJ:MIN"))?;
        let number = |n: &str| n.parse::<u32>().map_err(|e| format!("device {text:?} is not MAJ:MIN: {e}"));
        Ok(Device { major: number(major)?, minor: number(minor)? })
    }
}

/// A [`Device`] as the JSON string `"MAJ:MIN"`.
mod device_id {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Device;

    pub(super) fn serialize<S: Serializer>(device: &Device, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(device)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Device, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(D::Error::custom)
    }
}

/// A limit from a `*.max`/`*.high` file, in JSON the number of bytes (or
/// tasks, µs) or the string `"max"` for no limit — as the kernel prints it,
/// so that `null` keeps meaning "not measured".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LimitJson {
    /// A finite limit.
    Value(u64),
    /// No limit (`max`).
    Max(MaxToken),
}

/// The JSON string `"max"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MaxToken {
    /// `"max"`.
    Max,
}

impl LimitJson {
    /// The finite value, `None` for `max`.
    #[must_use]
    pub fn value(self) -> Option<u64> {
        match self {
            LimitJson::Value(v) => Some(v),
            LimitJson::Max(_) => None,
        }
    }
}

/// stepmon's additions to a step sample, under `"stepmon"`. Absent values
/// are `null` and listed in `missing` with the reason.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepSampleExt {
    /// `memory.current`, bytes.
    pub memory_current: Option<u64>,
    /// `memory.swap.peak`, bytes (6.5+).
    pub memory_swap_peak: Option<u64>,
    /// `memory.events` as read, zeros kept, incl. `oom_group_kill` (5.17+)
    /// and `sock_throttled`; `null` if not measured (BuildKit's own event
    /// fields omit 0).
    pub memory_events: Option<MemoryEventsJson>,
    /// `memory.max`, bytes or `"max"`.
    pub memory_max: Option<LimitJson>,
    /// `memory.high`, bytes or `"max"`.
    pub memory_high: Option<LimitJson>,
    /// `pids.peak` (6.1+).
    pub pids_peak: Option<u64>,
    /// `pids.max`, tasks or `"max"`.
    pub pids_max: Option<LimitJson>,
    /// `pids.events` (cgroup v1 step cgroups; absent where not read).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pids_events: Option<PidsEventsJson>,
    /// `cpu.stat` `nice_usec` × 1000 (6.13+).
    pub nice_nanos: Option<u64>,
    /// `cpu.stat` `nr_bursts` (5.16+, cpu controller).
    pub nr_bursts: Option<u64>,
    /// `cpu.stat` `burst_usec` × 1000.
    pub burst_nanos: Option<u64>,
    /// `cpu.max` quota per period, µs or `"max"`.
    pub cpu_max_quota_usec: Option<LimitJson>,
    /// `cpu.max` period, µs.
    pub cpu_max_period_usec: Option<u64>,
    /// `irq.pressure` (6.1+, IRQ time accounting).
    pub irq_pressure: Option<PressureJson>,
    /// Per-device `io.stat`.
    #[serde(default)]
    pub io_devices: Vec<IoDevice>,
    /// `cgroup.events` `populated`: processes still in the cgroup.
    pub populated: Option<bool>,
    /// Every absent field and why.
    #[serde(default)]
    pub missing: Vec<Missing>,
}

/// `pids.events` with zeros kept (stepmon addition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PidsEventsJson {
    /// Forks refused by `pids.max`.
    pub max: Option<u64>,
}

/// `memory.events` with zeros kept (stepmon addition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // the memory.events keys of the same names
pub struct MemoryEventsJson {
    pub low: Option<u64>,
    pub high: Option<u64>,
    pub max: Option<u64>,
    pub oom: Option<u64>,
    pub oom_kill: Option<u64>,
    pub oom_group_kill: Option<u64>,
    pub sock_throttled: Option<u64>,
}

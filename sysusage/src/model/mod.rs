//! BuildKit's system-usage JSON model, filled from this crate's readings.
//!
//! The types are [`stepmon_model::system`]'s (BuildKit's
//! `executor/resources/types/systypes.go`, field for field, plus stepmon's
//! additions under a `stepmon` key that BuildKit consumers ignore); the
//! functions below turn parsed `/proc` files into them.
//!
//! | type | JSON | BuildKit rule | made by |
//! |---|---|---|---|
//! | [`SysSample`] | element of `sysUsage` | `timestamp` always; every other field omitted when absent | [`sys_sample`] |
//! | [`SysCPUStat`] | `cpuStat`, per-step `sysCPUStat` | ten plain floats, seconds, rounded to 3 decimals | [`cpu_stat`], [`cpu_stat_delta`] |
//! | [`ProcStat`] | `procStat` | three plain integers (no omitempty) | [`proc_stat`] |
//! | [`SysMemoryStat`] | `memoryStat` | **kB**, each `null` when the key is absent | [`memory_stat`] |
//! | [`PressureJson`] | `cpuPressure`, … | `some`/`full` `null` when absent; `avg*` floats, `total` integer µs | [`pressure`] |
//!
//! Floats are written the way Go's `encoding/json` writes them: integral
//! values without a fraction (`0`, not `0.0`), others in shortest form
//! (`384.6`, `3.77`), so our bytes match BuildKit's for the same readings.

mod cpu;
mod reading;

#[cfg(target_os = "linux")]
pub use crate::probe::missing_kind;
pub use cpu::{absent_columns, cpu_stat, cpu_stat_delta, per_cpu_deltas, per_cpu_stats, sys_cpu_delta};
pub use reading::{load_avg, memory_stat, pressure, pressure_values, proc_stat, sys_sample};
#[cfg(doc)]
use stepmon_model::system::{PressureJson, ProcStat, SysCPUStat, SysMemoryStat, SysSample};

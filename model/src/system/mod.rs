//! BuildKit's system-usage JSON (`executor/resources/types/systypes.go`),
//! field for field, plus stepmon's additions under a separate `stepmon` key
//! that BuildKit consumers ignore. `stepmon-sysusage` fills them from
//! `/proc`.
//!
//! | type | JSON | BuildKit rule |
//! |---|---|---|
//! | [`SysSample`] | element of `sysUsage` | `timestamp` always; every other field omitted when absent |
//! | [`SysCPUStat`] | `cpuStat`, per-step `sysCPUStat` | ten plain floats, seconds, rounded to 3 decimals |
//! | [`ProcStat`] | `procStat` | three plain integers (no omitempty) |
//! | [`SysMemoryStat`] | `memoryStat` | **kB**, each `null` when the key is absent |
//! | [`PressureJson`] | `cpuPressure`, … | `some`/`full` `null` when absent; `avg*` floats, `total` integer µs |
//!
//! Floats are written the way Go's `encoding/json` writes them: integral
//! values without a fraction (`0`, not `0.0`), others in shortest form
//! (`384.6`, `3.77`), so our bytes match BuildKit's for the same readings.

mod cpu;
mod memory;
mod pressure;
mod proc_stat;
mod sample;

pub use cpu::{PerCpuStat, SysCPUStat, SysCpuDelta, SysCpuDeltaExt};
pub use memory::SysMemoryStat;
pub use pressure::{PressureJson, PressureValues};
pub use proc_stat::ProcStat;
pub use sample::{LoadAvgJson, SysSample, SysSampleExt};

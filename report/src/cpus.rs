//! How many CPUs the machine of a recorded step had: a fact of its data
//! that the verdicts and the parallelism advice both read.

use crate::Step;

/// The machine's online CPUs: the `cpuN` lines of `/proc/stat` present at
/// both ends of the step's `sysCPUStat` delta, else the most in a machine
/// sample; `None` when neither was recorded (BuildKit keeps no per-CPU
/// lines). A cpuset confining the step to fewer CPUs is not recorded, so
/// this is what the machine has, not necessarily what the step could use.
pub(crate) fn online_cpus(step: &Step) -> Option<usize> {
    let delta = step.usage.resource_usage.stepmon.as_ref().and_then(|e| e.sys_cpu.as_ref()).map(|c| c.per_cpu.len());
    let sampled = step.usage.sys_usage.iter().filter_map(|s| s.stepmon.as_ref()).map(|e| e.per_cpu.len()).max();
    delta.filter(|n| *n > 0).or(sampled.filter(|n| *n > 0))
}

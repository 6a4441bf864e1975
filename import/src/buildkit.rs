//! The exec steps of one BuildKit provenance predicate (SLSA v1 or v0.2).
//!
//! Where BuildKit puts things (moby/buildkit
//! `solver/llbsolver/provenance/types/types.go`, `provenance/buildconfig.go`):
//!
//! * steps: `BuildConfig{llbDefinition: [BuildStep{id, op, inputs,
//!   resourceUsage}], digestMapping: {digest: "stepN"}}` — in SLSA v1 at
//!   `buildDefinition.internalParameters.buildConfig` (BuildKit versions
//!   before v0.13 wrote it under `externalParameters`, also read), in v0.2
//!   at `buildConfig`;
//! * machine samples: `BuildKitMetadata.sysUsage` — in v1 at
//!   `runDetails.metadata.buildkit_metadata` (earlier v1 drafts used the
//!   v0.2 key, also read), in v0.2 at
//!   `metadata["https://mobyproject.org/buildkit@v1#metadata"]`;
//! * an exec op's command: `op.Op.exec.meta.args` (`solver/pb/json.go`
//!   names the oneof wrapper `Op`; `op.exec.meta.args` is read too).
//!
//! # Machine samples per step
//!
//! `sysUsage` covers the whole build, sampled every ≥ 2 s and thinned to at
//! most 20 + 1 samples. A step gets the samples inside its window — from
//! its first sample minus [`BUILDKIT_FIRST_SAMPLE_SECONDS`] (BuildKit takes
//! no sample at the start; a step with only its final sample lasted less
//! than that) to its last sample — plus the last machine sample before the
//! window and the first after it. With thinned samples a fixed margin would
//! either miss the bracketing readings or pull in unrelated ones; the
//! bracketing pair is exactly "± one interval" of the machine sampler, so
//! counter deltas (CPU pressure totals) cover the whole step.

use serde_json::Value;
use stepmon_model::sample::{Samples, StepUsage};
use stepmon_model::system::SysSample;

use super::detect::{Found, Kind, shape};
use super::{ImportError, Skipped, join_key};
use stepmon_report::step::{BUILDKIT_FIRST_SAMPLE_SECONDS, Step, quote_command};

/// The key of BuildKit's metadata in v0.2 (and early v1) predicates.
const BUILDKIT_METADATA_V02: &str = "https://mobyproject.org/buildkit@v1#metadata";
/// The key in SLSA v1 predicates.
const BUILDKIT_METADATA_V1: &str = "buildkit_metadata";

/// What one predicate yielded.
pub(super) struct Read {
    /// Steps with samples.
    pub(super) steps: Vec<Step>,
    /// Exec steps without usage.
    pub(super) skipped: Vec<Skipped>,
    /// Steps whose `resourceUsage` held no samples.
    pub(super) empty: usize,
    /// Why nothing was found, when nothing was (for the error message).
    pub(super) no_usage: String,
}

/// A value at `path` under `value`, with the path of what was taken.
fn at<'a>(value: &'a Value, base: &str, keys: &[&str]) -> Option<(&'a Value, String)> {
    let mut v = value;
    let mut path = base.to_owned();
    for key in keys {
        v = v.get(key)?;
        path = join_key(&path, key);
    }
    Some((v, path))
}

fn build_config<'a>(found: &Found<'a>) -> Option<(&'a Value, String)> {
    let p = found.value;
    let base = &found.path;
    match found.kind {
        Kind::Slsa1 => at(p, base, &["buildDefinition", "internalParameters", "buildConfig"])
            .or_else(|| at(p, base, &["buildDefinition", "externalParameters", "buildConfig"])),
        _ => at(p, base, &["buildConfig"]),
    }
}

fn sys_usage_value<'a>(found: &Found<'a>) -> Option<(&'a Value, String)> {
    let p = found.value;
    let base = &found.path;
    match found.kind {
        Kind::Slsa1 => at(p, base, &["runDetails", "metadata", BUILDKIT_METADATA_V1, "sysUsage"])
            .or_else(|| at(p, base, &["runDetails", "metadata", BUILDKIT_METADATA_V02, "sysUsage"])),
        _ => at(p, base, &["metadata", BUILDKIT_METADATA_V02, "sysUsage"]),
    }
}

fn sys_usage(found: &Found<'_>) -> Result<Vec<SysSample>, ImportError> {
    match sys_usage_value(found) {
        None | Some((Value::Null, _)) => Ok(Vec::new()),
        Some((v @ Value::Array(_), path)) => {
            let mut samples: Vec<SysSample> =
                serde_json::from_value(v.clone()).map_err(|e| ImportError::Invalid { path, message: e.to_string() })?;
            samples.sort_by_key(|s| s.timestamp);
            Ok(samples)
        }
        Some((v, path)) => Err(shape(path, "an array of machine samples", v)),
    }
}

/// The RUN command of an op, `None` for non-exec ops.
fn exec_args(op: &Value) -> Option<Option<Vec<String>>> {
    let exec = op.get("Op").and_then(|o| o.get("exec")).or_else(|| op.get("exec"))?;
    let args = exec.get("meta").and_then(|m| m.get("args")).and_then(Value::as_array);
    Some(args.and_then(|a| a.iter().map(|s| s.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>()))
}

/// The steps of one predicate; `label` (platform, target) prefixes names
/// when a file holds several.
pub(super) fn steps(found: &Found<'_>, label: Option<&str>) -> Result<Read, ImportError> {
    let mut read = Read { steps: Vec::new(), skipped: Vec::new(), empty: 0, no_usage: String::new() };
    let Some((config, config_path)) = build_config(found) else {
        read.no_usage = format!("{} has no buildConfig: provenance mode=min", found.describe());
        return Ok(read);
    };
    let definition_path = join_key(&config_path, "llbDefinition");
    let definition = match config.get("llbDefinition") {
        None | Some(Value::Null) => {
            read.no_usage = format!("{} has an empty buildConfig", found.describe());
            return Ok(read);
        }
        Some(Value::Array(steps)) => steps,
        Some(other) => return Err(shape(definition_path, "an array of build steps", other)),
    };
    // digestMapping: LLB op digest → "stepN"; inverted to find a step's digest.
    let digests: Vec<(&str, &str)> = match config.get("digestMapping") {
        Some(Value::Object(map)) => map.iter().filter_map(|(d, id)| Some((id.as_str()?, d.as_str()))).collect(),
        None | Some(Value::Null) => Vec::new(),
        Some(other) => return Err(shape(join_key(&config_path, "digestMapping"), "an object", other)),
    };
    let sys = sys_usage(found)?;
    let prefix = label.map_or_else(String::new, |l| format!("[{l}] "));
    let mut exec_steps = 0usize;
    for (i, step) in definition.iter().enumerate() {
        let path = format!("{definition_path}[{i}]");
        let Value::Object(fields) = step else { return Err(shape(path, "an object (a build step)", step)) };
        let id = match fields.get("id") {
            Some(Value::String(id)) => id.clone(),
            None | Some(Value::Null) => format!("step{i}"),
            Some(other) => return Err(shape(join_key(&path, "id"), "a string", other)),
        };
        let args = fields.get("op").and_then(exec_args);
        let is_exec = args.is_some();
        if is_exec {
            exec_steps = exec_steps.saturating_add(1);
        }
        let command = args.flatten().filter(|a| !a.is_empty()).map(|a| quote_command(&a));
        let name = format!("{prefix}{}", command.unwrap_or_else(|| id.clone()));
        let usage_path = join_key(&path, "resourceUsage");
        let samples: Samples = match fields.get("resourceUsage") {
            None | Some(Value::Null) => {
                if is_exec {
                    let reason = "no resourceUsage: BuildKit records none for cached steps and failed steps";
                    read.skipped.push(Skipped { step_id: id, name, reason: reason.to_owned() });
                }
                continue;
            }
            Some(usage @ Value::Object(_)) => serde_json::from_value(usage.clone())
                .map_err(|e| ImportError::Invalid { path: usage_path, message: e.to_string() })?,
            Some(other) => return Err(shape(usage_path, "an object (BuildKit's Samples)", other)),
        };
        if samples.samples.is_empty() {
            read.empty = read.empty.saturating_add(1);
            let reason = "resourceUsage has no samples: the step's container never started";
            read.skipped.push(Skipped { step_id: id, name, reason: reason.to_owned() });
            continue;
        }
        let digest = digests.iter().find(|(step, _)| *step == id).map(|(_, d)| (*d).to_owned());
        let usage = StepUsage { sys_usage: window(&sys, &samples), resource_usage: samples };
        read.steps.push(Step::from_buildkit(name, id, digest, usage));
    }
    if read.steps.is_empty() && read.empty == 0 {
        read.no_usage = format!("{} has {exec_steps} exec step(s), none with resourceUsage", found.describe());
    }
    Ok(read)
}

/// The machine samples for a step: inside its window plus the one before
/// and the one after (module docs). `sys` is sorted by time.
fn window(sys: &[SysSample], samples: &Samples) -> Vec<SysSample> {
    let (Some(first), Some(last)) = (samples.samples.first(), samples.samples.last()) else { return Vec::new() };
    let lead = jiff::SignedDuration::try_from_secs_f64(BUILDKIT_FIRST_SAMPLE_SECONDS).unwrap_or_default();
    let start = first.timestamp.checked_sub(lead).unwrap_or(first.timestamp);
    let end = last.timestamp.max(first.timestamp);
    let before = sys.iter().rposition(|s| s.timestamp < start);
    let after = sys.iter().position(|s| s.timestamp > end);
    let from = before.unwrap_or(0);
    let to = after.map_or(sys.len(), |a| a.saturating_add(1));
    sys.get(from..to).map(<[SysSample]>::to_vec).unwrap_or_default()
}

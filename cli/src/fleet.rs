//! Steps into the fleet's Prometheus: a Pushgateway push (`stepmon run
//! --push`, `stepmon push`) and node_exporter's textfile collector
//! (`--textfile DIR`), both in the Prometheus text format 0.0.4, and an
//! OpenTelemetry collector (`--otlp`, [`crate::otlp`]); what fails here is a
//! warning, never the step's failure (the textfile is written as every
//! result file is, [`crate::outputs`]).

use std::path::{Path, PathBuf};

use stepmon_export::prometheus;
use stepmon_report::Step;

use crate::error::CliError;
use crate::push::{self, Grouping};

/// The grouping key beyond the step's name (shared by `run` and `push`).
#[derive(Debug, clap::Args)]
pub struct PushGroup {
    /// `job` of the Pushgateway grouping key.
    #[arg(long, default_value = "stepmon", value_name = "JOB")]
    pub push_job: String,
    /// `instance` of the Pushgateway grouping key (default: this host's
    /// name). Each group holds only its last push: keep it one per runner.
    #[arg(long, value_name = "INSTANCE")]
    pub push_instance: Option<String>,
}

/// Arguments of `stepmon push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// A `stepmon run --output` file (or anything `stepmon report` reads);
    /// each step is pushed as its own group.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The Pushgateway, e.g. http://pushgateway:9091.
    #[arg(long, value_name = "URL", required_unless_present = "otlp")]
    pub to: Option<String>,
    /// Export the steps as OpenTelemetry spans and metrics over OTLP/HTTP
    /// to the collector the OTEL_EXPORTER_OTLP_* variables name (default
    /// http://localhost:4318); a provenance's BuildKit steps become spans
    /// under one build span, parented to TRACEPARENT when it is set.
    #[arg(long)]
    pub otlp: bool,
    #[command(flatten)]
    pub group: PushGroup,
}

/// This host's name (`/proc/sys/kernel/hostname`, what `uname -n` says).
pub(crate) fn hostname() -> Result<String, String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map_err(|e| format!("cannot read the host name from /proc/sys/kernel/hostname: {e}; give --push-instance"))?;
    let name = name.trim();
    if name.is_empty() { Err("the host name is empty; give --push-instance".to_owned()) } else { Ok(name.to_owned()) }
}

/// Pushes each step as its own group under `base`; the errors, one per
/// step that could not be pushed.
fn push_steps(base: &str, group: &PushGroup, steps: &[Step]) -> Vec<String> {
    let instance = match group.push_instance.clone().map_or_else(hostname, Ok) {
        Ok(instance) => instance,
        Err(e) => return vec![format!("not pushed: {e}")],
    };
    steps
        .iter()
        .filter_map(|step| {
            let grouping =
                Grouping { job: group.push_job.clone(), instance: instance.clone(), step: step.name.clone() };
            push::put(base, &grouping, &prometheus::render(std::slice::from_ref(step))).err()
        })
        .collect()
}

/// `DIR/stepmon_<name>.prom`: the name with every byte but `[A-Za-z0-9_.-]`
/// as `_` (node_exporter reads `*.prom` files only).
#[must_use]
pub fn textfile_path(dir: &Path, name: &str) -> PathBuf {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '_' }).collect();
    dir.join(format!("stepmon_{safe}.prom"))
}

/// What `stepmon run` was asked to deliver to the fleet.
#[derive(Debug)]
pub struct Delivery<'a> {
    /// `--push URL`.
    pub push: Option<&'a str>,
    /// Its grouping key.
    pub group: &'a PushGroup,
    /// `--textfile DIR`.
    pub textfile: Option<&'a Path>,
    /// `--otlp`.
    pub otlp: bool,
}

/// The process' environment, as [`crate::otlp`] reads it.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl Delivery<'_> {
    /// Refuses, before the step runs, what cannot work at all.
    pub fn check(&self) -> Result<(), CliError> {
        if let Some(base) = self.push {
            push::check_base(base).map_err(CliError::new)?;
        }
        if let Some(dir) = self.textfile
            && !dir.is_dir()
        {
            return Err(CliError::new(format!("--textfile {}: not a directory", dir.display())));
        }
        if self.otlp {
            crate::otlp::check(env).map_err(CliError::new)?;
        }
        Ok(())
    }

    /// Nothing to deliver: no push, no textfile, no OTLP export.
    pub fn is_empty(&self) -> bool {
        self.push.is_none() && self.textfile.is_none() && !self.otlp
    }

    /// Pushes `step` (Pushgateway, OTLP; `--textfile` is a result file of
    /// [`crate::outputs`]); the warnings (empty when all went well).
    pub fn deliver(&self, step: &Step) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some(base) = self.push {
            warnings.extend(push_steps(base, self.group, std::slice::from_ref(step)));
        }
        if self.otlp {
            match stepmon_otlp_env::Config::from_env(env) {
                Ok(config) => {
                    warnings.extend(crate::otlp::export(&config, std::slice::from_ref(step), &env, hostname().ok()));
                }
                Err(e) => warnings.push(format!("OTLP: nothing exported: {e}")),
            }
        }
        warnings
    }
}

/// Exit status of `stepmon push` when a step could not be pushed.
pub const NOT_PUSHED: i32 = 1;

/// `stepmon push`; returns the exit status.
pub fn push(args: &PushArgs) -> Result<i32, CliError> {
    if let Some(to) = &args.to {
        push::check_base(to).map_err(CliError::new)?;
    }
    let otlp = if args.otlp { Some(crate::otlp::check(env).map_err(CliError::new)?) } else { None };
    let steps = crate::reports::load(&args.file)?;
    let mut names = std::collections::BTreeSet::new();
    for step in steps.iter().filter(|_| args.to.is_some()) {
        if !names.insert(step.name.as_str()) {
            eprintln!(
                "stepmon: warning: two steps are named {:?}: the group keeps only the last one's push",
                step.name
            );
        }
    }
    let mut errors = match &args.to {
        Some(to) => push_steps(to, &args.group, &steps),
        None => Vec::new(),
    };
    if let Some(config) = &otlp {
        // Pushing is the whole job here: a failed export is an error.
        errors.extend(crate::otlp::export(config, &steps, &env, hostname().ok()));
    }
    for error in &errors {
        eprintln!("stepmon: error: {error}");
    }
    Ok(if errors.is_empty() { 0 } else { NOT_PUSHED })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textfile_names() {
        let dir = Path::new("/var/lib/node");
        assert_eq!(textfile_path(dir, "build"), Path::new("/var/lib/node/stepmon_build.prom"));
        assert_eq!(textfile_path(dir, "unit tests/ü"), Path::new("/var/lib/node/stepmon_unit_tests__.prom"));
    }
}

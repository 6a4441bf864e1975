//! `stepmon run`: arguments in, the step run by `stepmon-runner`, the
//! summary and the report out.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use stepmon_runner::NetMode;
use stepmon_runner::{CgroupMode, Limits, StepOptions};

use crate::error::CliError;
use crate::outputs::{Failed, Kept, Pending, Target};

/// Arguments of `stepmon run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Write the report to FILE (`-` for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Format of --output: document (default: BuildKit's resourceUsage and
    /// sysUsage plus stepmon's summary and verdicts; `stepmon report` reads
    /// it back), or any `stepmon report` format: text, json, trace,
    /// openmetrics, prometheus, gitlab-metrics, markdown, markdown-svg, html,
    /// svg.
    #[arg(short, long, default_value = "document", value_name = "FORMAT", requires = "output")]
    pub format: OutputFormat,
    /// Create the run's cgroups under DIR instead of this process's own
    /// cgroup (e.g. a delegated subtree); failing to is an error.
    #[arg(long, value_name = "DIR")]
    pub cgroup_parent: Option<PathBuf>,
    /// Refuse to run the step when it cannot get a cgroup of its own
    /// (default: run it and measure its process tree and the enclosing
    /// cgroup, each number labelled with its source).
    #[arg(long, conflicts_with = "no_cgroup")]
    pub require_cgroup: bool,
    /// Create no cgroup for the step (nothing is written to any cgroupfs):
    /// measure its process tree and the enclosing cgroup.
    #[arg(long)]
    pub no_cgroup: bool,
    /// After the main process exits, wait for every process of the step
    /// instead of killing what it left behind.
    #[arg(long)]
    pub wait_all: bool,
    /// Processes listed one by one in the document (taskstats, as root):
    /// the top N by CPU, by peak RSS and by IO, or `all`; per-command
    /// aggregates cover every process either way.
    #[arg(long, default_value = "20", value_name = "N|all")]
    pub processes: stepmon_model::processes::Keep,
    /// Network of the step: host (default; not counted), isolated (a new
    /// namespace with only loopback) or ns:PATH (join a namespace such as
    /// /run/netns/NAME and count its interfaces).
    #[arg(long, default_value = "host", value_name = "MODE")]
    pub net: NetMode,
    /// Count loopback traffic too (isolated or ns:PATH only).
    #[arg(long)]
    pub include_loopback: bool,
    /// Limit the step's memory (`memory.max` of its cgroup, or
    /// `memory.limit_in_bytes` in cgroup v1): N, N[KMGT], N[KMGT]B or
    /// N[KMGT]iB, all 1024-based, e.g. 512M, 2GiB.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub memory_max: Option<u64>,
    /// Limit the step's CPU (`cpu.max`, or `cpu.cfs_quota_us` in cgroup v1)
    /// to this many cores, a positive decimal, e.g. 1.5.
    #[arg(long, value_name = "CORES", value_parser = stepmon_report::units::parse_cores)]
    pub cpus: Option<f64>,
    /// Limit the step's number of tasks (`pids.max`), a whole number ≥ 1.
    #[arg(long, value_name = "N", value_parser = stepmon_report::units::parse_count)]
    pub pids_max: Option<u64>,
    /// Do not print the summary, nor the warning when the step's memory
    /// nears what bounds it (its limit, an enclosing cgroup's, the
    /// machine's available memory).
    #[arg(short, long)]
    pub quiet: bool,
    /// Every INTERVAL while the step runs (30s without a value; a number
    /// and ms, s, m or h), one line on stderr: its time so far, CPU cores
    /// now and on average, memory now, peak and limit, IO rates, stall
    /// shares, tasks. STEPMON_PROGRESS=INTERVAL (or 1) turns it on for
    /// every step.
    #[arg(
        long,
        value_name = "INTERVAL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "30s",
        value_parser = crate::watch_lines::parse_interval
    )]
    pub progress: Option<std::time::Duration>,
    /// Exit with 125 when the step ran but a result file (--output,
    /// --textfile) could not be written (default: say so on stderr and exit
    /// with the step's own status).
    #[arg(long)]
    pub strict_output: bool,
    /// The step's name in the report and the `step` label of the fleet
    /// exports (default: the program's base name, e.g. `make`).
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    pub name: Option<String>,
    /// A label of the step in the report and the fleet exports
    /// (repeatable); keep its values few (a role, not a run id).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<stepmon_model::labels::Label>,
    /// Push the step's metrics to the Pushgateway at URL (e.g.
    /// http://pushgateway:9091) after the report is written; a failed push
    /// is a warning, never the step's failure.
    #[arg(long, value_name = "URL")]
    pub push: Option<String>,
    /// Export the step as an OpenTelemetry span and metrics over OTLP/HTTP
    /// to the collector the OTEL_EXPORTER_OTLP_* variables name (default
    /// http://localhost:4318), a child of TRACEPARENT when it is set; a
    /// failed export is a warning.
    #[arg(long)]
    pub otlp: bool,
    #[command(flatten)]
    pub push_group: crate::fleet::PushGroup,
    /// Write the step's metrics to DIR/stepmon_<name>.prom (atomically) for
    /// node_exporter's textfile collector.
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,
    /// Append the step to the job record FILE (JSON Lines, created on first
    /// use): its start, its samples as they are taken, its end with its
    /// numbers in brief. Steps of one job, also ones running at once, share the file;
    /// `stepmon report FILE` shows the job, steps whose stepmon was killed
    /// as interrupted.
    #[arg(long, value_name = "FILE")]
    pub job: Option<PathBuf>,
    /// Add the step to the history file DB (created on first use) and
    /// judge it against the last comparable runs there (`stepmon baseline
    /// check`'s defaults; docs/baselines.md), the verdict with the summary.
    /// A step that exits 0 makes stepmon exit 1 when its memory or CPU
    /// regressed. The file is opened only with this option.
    #[arg(long, value_name = "DB")]
    pub baseline: Option<PathBuf>,
    /// The command and its arguments (executed directly, never through a shell).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// What `--output` gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// The run document.
    Document,
    /// A report format.
    Report(stepmon_export::Format),
}

impl std::str::FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "document" {
            return Ok(OutputFormat::Document);
        }
        s.parse().map(OutputFormat::Report).map_err(|e: String| e.replace("expected one of", "expected document,"))
    }
}

/// What the step's watch tells (`--progress`, `STEPMON_PROGRESS`, the
/// memory warning) and where: stderr, and the job record's `events`. The
/// memory is watched unless `-q` and nothing reads the run document.
fn watch(
    args: &RunArgs,
    progress: Option<std::time::Duration>,
    name: &str,
    events: Option<stepmon_job::EventAppender>,
    delivered: bool,
) -> stepmon_runner::watch::Watch {
    use stepmon_model::event::StepEvent;
    use stepmon_runner::watch::{Callback, Watch};

    use crate::watch_lines::{event_line, progress_line, say};
    let read = args.output.is_some() || args.job.is_some() || args.baseline.is_some() || delivered;
    let mut watch = Watch::default();
    watch.memory = !args.quiet || read;
    if let Some(interval) = progress {
        let name = name.to_owned();
        watch = watch.with_progress(interval, Callback::new(move |p| say(&progress_line(&name, p))));
    }
    let (name, quiet, events) = (name.to_owned(), args.quiet, events.map(std::sync::Mutex::new));
    watch.with_events(Callback::new(move |event: &StepEvent| {
        if !quiet && let Some(line) = event_line(&name, event) {
            say(&line);
        }
        if let Some(events) = &events {
            let _ = events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).append(event.clone());
        }
    }))
}

/// `512M`, `2G`, `1048576` → bytes (binary units; the accepted forms are
/// [`stepmon_report::units::parse_bytes`]'s).
fn parse_bytes(text: &str) -> Result<u64, String> {
    stepmon_report::units::parse_bytes(text)
}

/// A step name: any text but the empty one.
fn parse_name(text: &str) -> Result<String, String> {
    if text.is_empty() { Err("the name is empty".to_owned()) } else { Ok(text.to_owned()) }
}

use crate::error::INTERNAL_ERROR;

/// Flags that do not go together, said in flags (the runner says the same
/// of its options in its own words).
fn check_flags(args: &RunArgs) -> Result<(), CliError> {
    if args.include_loopback && args.net == NetMode::Host {
        return Err(CliError::new("--include-loopback needs --net isolated or --net ns:PATH")
            .hint("with --net host the step's traffic cannot be told from the host's"));
    }
    let needs_cgroup =
        args.cgroup_parent.is_some() || args.memory_max.is_some() || args.cpus.is_some() || args.pids_max.is_some();
    if args.no_cgroup && needs_cgroup {
        return Err(CliError::new(
            "--no-cgroup cannot go with --cgroup-parent, --memory-max, --cpus or --pids-max (they need a cgroup of the step's own)",
        ));
    }
    Ok(())
}

/// Runs the step; returns the exit status stepmon should exit with.
pub fn run(args: RunArgs) -> Result<i32, CliError> {
    let spawn_mode = stepmon_runner::Mode::from_env().map_err(CliError::new)?;
    check_flags(&args)?;
    let delivery = crate::fleet::Delivery {
        push: args.push.as_deref(),
        group: &args.push_group,
        textfile: args.textfile.as_deref(),
        otlp: args.otlp,
    };
    delivery.check()?;
    // `--progress`, else the variable a CI job sets for every step (checked
    // before anything is written).
    let progress = match args.progress {
        Some(interval) => Some(interval),
        None => {
            let variable = std::env::var(crate::watch_lines::PROGRESS_VARIABLE).ok();
            crate::watch_lines::from_env(variable.as_deref()).map_err(CliError::new)?
        }
    };
    // Fail before the step runs, not after, if a result cannot be written;
    // an earlier file stays as it is until the new one replaces it whole.
    let mut output_file = match args.output.as_deref() {
        Some(path) if path != Path::new("-") => Some(Pending::open(path, "--output")?),
        _ => None,
    };
    let command: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let name = args.name.clone().unwrap_or_else(|| stepmon_model::labels::default_name(&command));
    let mut textfile = match args.textfile.as_deref() {
        Some(dir) => Some(Pending::open(&crate::fleet::textfile_path(dir, &name), "--textfile")?),
        None => None,
    };
    let mut options = StepOptions::new(args.command.iter().cloned());
    options.name.clone_from(&args.name);
    options.labels.clone_from(&args.labels);
    options.cgroup_parent.clone_from(&args.cgroup_parent);
    options.cgroup = match (args.require_cgroup, args.no_cgroup) {
        (true, _) => CgroupMode::Require,
        (_, true) => CgroupMode::Never,
        _ => CgroupMode::Auto,
    };
    options.wait_all = args.wait_all;
    options.processes = args.processes;
    options.net = args.net.clone();
    options.include_loopback = args.include_loopback;
    let mut limits = Limits::default();
    limits.memory_max = args.memory_max;
    limits.cpus = args.cpus;
    limits.pids_max = args.pids_max;
    options.limits = limits;
    options.spawn_mode = spawn_mode;
    options.forward_signals = true;
    let mut job = None;
    let mut events = None;
    if let Some(path) = &args.job {
        let started = crate::job::start(path, args.name.as_deref(), &args.labels, &command)?;
        options.live = Some(started.samples);
        job = Some(started.thread);
        events = started.events;
    }
    options.watch = watch(&args, progress, &name, events, !delivery.is_empty());
    let mut finished = match crate::job::run_recorded(options, &mut job, !args.quiet, crate::job::warn)? {
        crate::job::Ran::Finished(finished) => *finished,
        crate::job::Ran::Exit(code) => return Ok(code),
    };
    for message in &finished.messages {
        eprintln!("stepmon: {message}");
    }
    // Nothing reads the report (`-q` without an output, a job record, a
    // baseline or a delivery): its summary and verdicts are not composed.
    let nothing_else_reads =
        args.quiet && args.output.is_none() && textfile.is_none() && args.baseline.is_none() && delivery.is_empty();
    if nothing_else_reads && job.is_none() {
        return Ok(finished.exit_code);
    }
    // The runner measured; the summary and the verdicts are the report's.
    stepmon_report::compose::complete(&mut finished.document);
    if let Some(info) = finished.document.stepmon.as_mut() {
        info.ci = stepmon_model::labels::CiContext::from_env(|name| std::env::var(name).ok());
    }
    if let Some(stopped) = crate::job::end(job, finished.exit_code, None, Some(finished.document.clone()))
        && let Some(info) = finished.document.stepmon.as_mut()
    {
        info.warnings.push(stopped);
    }
    // A launcher's action (`-q --job`): the record has it, nobody reads
    // verdicts.
    if nothing_else_reads {
        return Ok(finished.exit_code);
    }
    let document = &finished.document;
    let step = stepmon_report::Step::from_run(document);
    let verdicts = step.verdicts();
    if !args.quiet {
        eprint!("{}", stepmon_report::text::render(&step, &verdicts));
    }
    // Results that cannot be written once the step ran: said, each on its
    // own line, beside the step's status (not in its place).
    let mut failed = Vec::new();
    let mut output_written = false;
    if args.output.is_some() {
        let text = match args.format {
            OutputFormat::Document => {
                serde_json::to_string_pretty(document).map_err(|e| CliError::new(format!("JSON: {e}")))? + "\n"
            }
            OutputFormat::Report(format) => stepmon_export::render(format, std::slice::from_ref(&step)),
        };
        let written = match output_file.take() {
            Some(file) => file.finish(text.as_bytes()),
            None => crate::out::emit(&text).map_err(|e| Failed::stdout(&e)),
        };
        output_written = written.is_ok();
        failed.extend(written.err());
    }
    if let Some(file) = textfile.take() {
        // The step's name as the report has it (the default is the same).
        let file = match args.textfile.as_deref().map(|dir| crate::fleet::textfile_path(dir, &step.name)) {
            Some(path) if path != file.path() => Pending::open(&path, "--textfile").map_err(|e| Failed {
                target: Target::File(path),
                reason: e.message,
                kept: Kept::Nothing,
            }),
            _ => Ok(file),
        };
        let text = stepmon_export::prometheus::render(std::slice::from_ref(&step));
        failed.extend(file.and_then(|file| file.finish(text.as_bytes())).err());
    }
    // After the report is written: a history file that cannot be used
    // loses nothing either.
    let mut exit_code = finished.exit_code;
    if let Some(db) = &args.baseline {
        match crate::baseline::run_baseline(db, document, &args.labels) {
            Ok(true) if exit_code == 0 => exit_code = crate::baseline::REGRESSION,
            Ok(_) => {}
            Err(e) => eprintln!("stepmon: warning: baseline: {}", e.message),
        }
    }
    // After the report is written: a push that hangs or fails loses nothing.
    let warnings = delivery.deliver(&step);
    for warning in &warnings {
        eprintln!("stepmon: warning: {warning}");
    }
    if let (false, Some(path), OutputFormat::Document) = (warnings.is_empty(), &args.output, args.format)
        && path != Path::new("-")
        && output_written
    {
        let mut document = finished.document;
        if let Some(info) = document.stepmon.as_mut() {
            info.warnings.extend(warnings);
        }
        let text = serde_json::to_string_pretty(&document).map_err(|e| CliError::new(format!("JSON: {e}")))? + "\n";
        if let Err(e) = stepmon_outfile::write(path, &text) {
            failed.push(Failed {
                target: Target::File(path.clone()),
                reason: e.to_string(),
                kept: Kept::ThisRunsFirst,
            });
        }
    }
    for failure in &failed {
        eprintln!("{}", crate::outputs::error_line(failure, !args.quiet, exit_code, args.strict_output));
    }
    Ok(if !failed.is_empty() && args.strict_output { INTERNAL_ERROR } else { exit_code })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_net_modes() {
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("2GiB"), Ok(2 << 30));
        assert_eq!(parse_bytes("16m"), Ok(16 << 20));
        assert!(parse_bytes("12X").is_err() && parse_bytes("M").is_err());
        for junk in ["2iB", "5BB", "1.5G", "-1", ""] {
            assert!(parse_bytes(junk).is_err(), "{junk:?}");
        }
        assert_eq!("isolated".parse::<NetMode>(), Ok(NetMode::Isolated));
        assert_eq!("ns:/run/netns/x".parse::<NetMode>(), Ok(NetMode::Namespace(PathBuf::from("/run/netns/x"))));
        assert!("ns:".parse::<NetMode>().is_err() && "bridge".parse::<NetMode>().is_err());
    }
}

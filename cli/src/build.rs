//! `stepmon build [-o REPORT] [--format F] -- BUILD COMMAND`: the whole
//! build run as the job's outer step, each compiler run an action of it
//! (`stepmon wrap`, through the variables `stepmon_job::build::environment`
//! sets), then the build's report (`stepmon_report::build`, rendered by
//! `stepmon_export::build`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use stepmon_runner::StepOptions;

use crate::error::CliError;
use crate::outputs::Pending;

/// Arguments of `stepmon build`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The build runs as one measured step (its cgroup holds every action's); each compiler run is an
action of it, measured in a cgroup nested inside the build's and appended to the job record:
  cargo   RUSTC_WRAPPER=stepmon (a RUSTC_WRAPPER set already, e.g. sccache, runs behind it)
  CMake   CMAKE_C_COMPILER_LAUNCHER, CMAKE_CXX_COMPILER_LAUNCHER (read when a build tree is
          configured: configure it under `stepmon build` too); a launcher set already runs behind
  make    CC='stepmon wrap cc', CXX='stepmon wrap c++' where CC and CXX are unset
The report: every action's wall, CPU, memory peak, IO and stall, the longest and heaviest, the
critical path, the memory at the build's peak and what ran then, what the build spent outside
its actions (the remainder), and the -j the action peaks allow on this machine.")]
pub struct BuildArgs {
    /// Write the report to FILE (`-` for stdout; default: stderr, as
    /// `stepmon run` says its summary, so the build's stdout stays the
    /// build's).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The report's format: text, markdown (a CI job summary) or html (a
    /// self-contained page with the actions on lanes and the memory).
    #[arg(short, long, default_value = "text", value_name = "FORMAT")]
    pub format: BuildFormat,
    /// Keep the job record in FILE (appended to; `stepmon report FILE`
    /// shows it later). Default: a temporary file, removed at the end.
    #[arg(long, value_name = "FILE")]
    pub job: Option<PathBuf>,
    /// How many actions each ranking (longest, heaviest) shows in full.
    #[arg(long, default_value_t = stepmon_export::build::TOP, value_name = "N")]
    pub top: usize,
    /// Run nothing: report the build recorded in FILE (`stepmon build --job
    /// FILE` kept it).
    #[arg(long, value_name = "FILE", conflicts_with = "job")]
    pub from: Option<PathBuf>,
    /// The build command and its arguments (executed directly, never
    /// through a shell).
    #[arg(last = true, required_unless_present = "from", conflicts_with = "from", value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// The formats of the build's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildFormat {
    /// Text for a terminal.
    Text,
    /// Markdown for a CI job summary.
    Markdown,
    /// A self-contained HTML page.
    Html,
}

impl std::str::FromStr for BuildFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(BuildFormat::Text),
            "markdown" => Ok(BuildFormat::Markdown),
            "html" => Ok(BuildFormat::Html),
            _ => Err(format!("unknown format {s:?}; expected one of text, markdown, html")),
        }
    }
}

/// Where the job record is: the user's (kept), or a temporary directory's
/// (removed when dropped).
struct Record {
    path: PathBuf,
    scratch: Option<PathBuf>,
}

impl Record {
    fn new(given: Option<&Path>) -> Result<Record, CliError> {
        if let Some(path) = given {
            // Actions run in many directories: the record by an absolute path.
            let path = std::path::absolute(path).map_err(|e| CliError::input("--job: cannot resolve the path", &e))?;
            return Ok(Record { path, scratch: None });
        }
        let nanos = jiff::Timestamp::now().as_nanosecond();
        let dir = std::env::temp_dir().join(format!("stepmon-build.{}.{nanos}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| CliError::input(&format!("cannot create {}", dir.display()), &e))?;
        Ok(Record { path: dir.join("job.jsonl"), scratch: Some(dir) })
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_file(&self.path);
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Runs the build and writes its report; returns the build's exit status
/// (with `--from`, 0: a report, as `stepmon report`'s).
pub fn build(args: BuildArgs) -> Result<i32, CliError> {
    let output_file = match args.output.as_deref() {
        Some(path) if path != Path::new("-") => Some(Pending::open(path, "--output")?),
        _ => None,
    };
    if let Some(path) = &args.from {
        let report = read(path, None)?;
        write(&args, output_file, &report);
        return Ok(0);
    }
    let spawn_mode = stepmon_runner::Mode::from_env().map_err(CliError::new)?;
    let record = Record::new(args.job.as_deref())?;
    let stepmon = std::env::current_exe().map_err(|e| CliError::io("cannot find the stepmon binary", &e))?;
    let command: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut options = StepOptions::new(args.command.iter().cloned());
    options.spawn_mode = spawn_mode;
    options.forward_signals = true;
    // The actions' cgroups nest in the build's, with controllers of their
    // own on pure cgroup v2 too.
    options.nested_steps = true;
    options.envs(stepmon_job::build::environment(&stepmon, &record.path, |name| std::env::var_os(name)));
    let start = stepmon_job::start(None, &[], &command);
    let outer = start.step.clone();
    let started = crate::job::open(&record.path, start, crate::job::warn)?;
    options.live = Some(started.samples);
    let mut job = Some(started.thread);
    options.watch = crate::job::recording_events(std::mem::take(&mut options.watch), started.events);
    let mut finished = match crate::job::run_recorded(options, &mut job, true, crate::job::warn)? {
        crate::job::Ran::Finished(finished) => *finished,
        crate::job::Ran::Exit(code) => return Ok(code),
    };
    for message in &finished.messages {
        eprintln!("stepmon: {message}");
    }
    stepmon_report::compose::complete(&mut finished.document);
    if let Some(info) = finished.document.stepmon.as_mut() {
        info.ci = stepmon_model::labels::CiContext::from_env(|name| std::env::var(name).ok());
    }
    crate::job::end(job, finished.exit_code, None, Some(finished.document));
    // The build ran: a report that cannot be made is said, and its status stays.
    match read(&record.path, Some(&outer)) {
        Ok(report) => write(&args, output_file, &report),
        Err(e) => eprintln!("stepmon: error: no report: {}", e.message),
    }
    if record.scratch.is_none() {
        eprintln!("stepmon: the job record: {}", record.path.display());
    }
    Ok(finished.exit_code)
}

/// The build in the record `path`, its outer step `outer` (else the last
/// step that is no action).
fn read(path: &Path, outer: Option<&str>) -> Result<stepmon_report::build::Build, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::input(&format!("cannot read the job record {}", path.display()), &e))?;
    let record = stepmon_report::job::read(&text);
    for lost in &record.lost {
        eprintln!("stepmon: warning: {}: {lost}", path.display());
    }
    stepmon_report::build::Build::of_record(&record, &path.display().to_string(), outer)
        .map_err(|e| CliError::new(format!("{}: {e}", path.display())))
}

/// Writes the report of `build` where `args` say: `--output` (a file
/// opened before the build ran, or stdout for `-`), else stderr. A report
/// that cannot be written is said, and the build's status stays.
fn write(args: &BuildArgs, file: Option<Pending>, build: &stepmon_report::build::Build) {
    let rendered = match args.format {
        BuildFormat::Text => stepmon_export::build::text::render(build, args.top),
        BuildFormat::Markdown => stepmon_export::build::markdown::render(build, args.top),
        BuildFormat::Html => stepmon_export::build::html::render(build, args.top),
    };
    let written = match (file, args.output.is_some()) {
        (Some(file), _) => file.finish(rendered.as_bytes()).map_err(|f| CliError::new(f.reason)),
        (None, true) => crate::out::emit(&rendered),
        (None, false) => {
            eprint!("{rendered}");
            Ok(())
        }
    };
    if let Err(e) = written {
        eprintln!("stepmon: error: the report: {}", e.message);
    }
}

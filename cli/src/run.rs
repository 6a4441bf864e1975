//! `stepmon run`: the step's whole life — cgroups, network, sampling, the
//! process, leftovers, the final sample, cleanup, output.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use stepmon_sampler::cgroup::discover;
use stepmon_sampler::model::{StepUsage, UsageSummary};
use stepmon_sampler::{Monitor, MonitorOptions, NetworkSource};

use crate::error::CliError;
use crate::netns::HeldNamespace;
use crate::placement::{self, RunCgroups};
use crate::spawn;
use stepmon_report::{Collector, Host, NotEnabled, RunDocument, RunInfo};

/// How the step's network is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetMode {
    /// Share the host's namespace (not counted).
    Host,
    /// A new namespace with only loopback up.
    Isolated,
    /// Join an existing namespace.
    Namespace(PathBuf),
}

impl std::str::FromStr for NetMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "host" => Ok(NetMode::Host),
            "isolated" => Ok(NetMode::Isolated),
            _ => s
                .strip_prefix("ns:")
                .filter(|p| !p.is_empty())
                .map(|p| NetMode::Namespace(PathBuf::from(p)))
                .ok_or_else(|| format!("expected host, isolated or ns:PATH, got {s:?}")),
        }
    }
}

/// Arguments of `stepmon run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Write the report to FILE (`-` for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Format of --output: document (default: BuildKit's resourceUsage and
    /// sysUsage plus stepmon's summary and verdicts; `stepmon report` reads
    /// it back), or any `stepmon report` format: text, json, trace,
    /// openmetrics, markdown, markdown-svg, html, svg.
    #[arg(short, long, default_value = "document", value_name = "FORMAT", requires = "output")]
    pub format: OutputFormat,
    /// Create the run's cgroups under DIR instead of this process's own
    /// cgroup (e.g. a delegated subtree).
    #[arg(long, value_name = "DIR")]
    pub cgroup_parent: Option<PathBuf>,
    /// After the main process exits, wait for every process of the step
    /// instead of killing what it left behind.
    #[arg(long)]
    pub wait_all: bool,
    /// Network of the step: host (default; not counted), isolated (a new
    /// namespace with only loopback) or ns:PATH (join a namespace such as
    /// /run/netns/NAME and count its interfaces).
    #[arg(long, default_value = "host", value_name = "MODE")]
    pub net: NetMode,
    /// Count loopback traffic too (isolated or ns:PATH only).
    #[arg(long)]
    pub include_loopback: bool,
    /// Limit the step's memory (`memory.max` of its cgroup), e.g. 512M, 2G.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub memory_max: Option<u64>,
    /// Limit the step's CPU (`cpu.max` of its cgroup) to this many cores, e.g. 1.5.
    #[arg(long, value_name = "CORES")]
    pub cpus: Option<f64>,
    /// Limit the step's number of tasks (`pids.max` of its cgroup).
    #[arg(long, value_name = "N")]
    pub pids_max: Option<u64>,
    /// Do not print the summary.
    #[arg(short, long)]
    pub quiet: bool,
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
    Report(stepmon_report::export::Format),
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

/// `512M`, `2G`, `1048576` → bytes (binary units; the accepted forms are
/// [`stepmon_report::units::parse_bytes`]'s).
fn parse_bytes(text: &str) -> Result<u64, String> {
    stepmon_report::units::parse_bytes(text)
}

/// Writes the requested limits into the step's cgroup (which stepmon owns).
fn apply_limits(args: &RunArgs, cgroups: &RunCgroups) -> Result<(), CliError> {
    let mut limits: Vec<(&str, &str, String)> = Vec::new();
    if let Some(bytes) = args.memory_max {
        limits.push(("memory", "memory.max", bytes.to_string()));
    }
    if let Some(cores) = args.cpus {
        if !(cores > 0.0 && cores.is_finite()) {
            return Err(CliError::new(format!("--cpus must be a positive number, got {cores}")));
        }
        // The kernel's default period is 100 ms; quota = cores × period.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let quota = (cores * 100_000.0).round().max(1000.0) as u64;
        limits.push(("cpu", "cpu.max", format!("{quota} 100000")));
    }
    if let Some(n) = args.pids_max {
        limits.push(("pids", "pids.max", n.to_string()));
    }
    for (controller, file, value) in limits {
        if !cgroups.enabled.contains(&controller) {
            let why = cgroups.not_enabled.iter().find(|n| n.controller == controller).map_or("", |n| n.reason.as_str());
            return Err(CliError::new(format!(
                "cannot set {file}: the {controller} controller is not available ({why})"
            )));
        }
        std::fs::write(cgroups.leaf.join(file), &value)
            .map_err(|e| CliError::io(&format!("cannot set {file} to {value}"), &e))?;
    }
    Ok(())
}

/// Exit status of stepmon when it fails itself (not the step), as `env` and
/// container runners do.
pub const INTERNAL_ERROR: i32 = 125;

/// Finds `program` like `execvp` would, to report "not found" before any
/// cgroup is created: a path that exists, or a file of that name in `PATH`
/// (executable or not: exec then says why it cannot run it).
fn resolve(program: &OsStr) -> Option<PathBuf> {
    spawn::lookup::find_program(program, std::env::var_os("PATH").as_deref(), Path::is_file)
        .filter(|found| found.exists())
}

/// Removes the run's cgroups whatever happens (kill leftovers first).
struct Cleanup<'a> {
    cgroups: &'a RunCgroups,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = self.cgroups.kill_and_wait(Duration::from_secs(10));
        // rmdir can briefly fail with EBUSY right after the last task exits.
        for attempt in 0..50 {
            match self.cgroups.remove() {
                Ok(()) => return,
                Err(e) if attempt == 49 => {
                    eprintln!(
                        "stepmon: warning: could not remove {}: {e} (`stepmon gc` will)",
                        self.cgroups.parent.display()
                    );
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

fn exit_code(status: ExitStatus) -> (Option<i32>, Option<i32>, i32) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => (Some(code), None, code),
        (None, Some(signal)) => (None, Some(signal), 128 + signal),
        (None, None) => (None, None, INTERNAL_ERROR),
    }
}

fn host(mount: &Path, pure_v2: bool) -> Host {
    let mut host = Host::default();
    host.kernel = rustix::system::uname().release().to_string_lossy().into_owned();
    host.cgroup2_mount = mount.display().to_string();
    host.cgroup_layout = if pure_v2 { "unified" } else { "hybrid" }.to_owned();
    host.psi = Path::new("/proc/pressure").exists();
    host
}

/// Runs the step; returns the exit status stepmon should exit with.
pub fn run(args: RunArgs) -> Result<i32, CliError> {
    // Take over SIGINT/SIGTERM/SIGHUP before anything is created: a signal
    // from now on is forwarded to the step (or ends it right after it
    // starts), and cleanup always runs.
    let caught = crate::signals::Caught::install()?;
    let spawn_mode = spawn::Mode::from_env()?;
    let command: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let program = args.command.first().ok_or_else(|| CliError::new("no command given"))?;
    if resolve(program).is_none() {
        eprintln!(
            "stepmon: error: cannot run {}: command not found",
            stepmon_report::step::quote(&program.to_string_lossy())
        );
        return Ok(crate::trampoline::NOT_FOUND);
    }
    if args.include_loopback && args.net == NetMode::Host {
        return Err(CliError::new("--include-loopback needs --net isolated or --net ns:PATH")
            .hint("with --net host the step's traffic cannot be told from the host's"));
    }
    // Fail before the step runs, not after, if the report cannot be written.
    let mut output_file = match args.output.as_deref() {
        Some(path) if path != Path::new("-") => Some(
            std::fs::File::create(path).map_err(|e| CliError::io(&format!("cannot create {}", path.display()), &e))?,
        ),
        _ => None,
    };
    let location = discover::locate().map_err(|e| {
        CliError::new(e.to_string())
            .hint("stepmon needs cgroup v2 (mounted at /sys/fs/cgroup or /sys/fs/cgroup/unified)")
    })?;
    let base = args.cgroup_parent.clone().unwrap_or_else(|| location.own_dir.clone());
    if let Err(e) = placement::collect_garbage(&base, false) {
        eprintln!("stepmon: warning: cleaning up earlier runs under {}: {e}", base.display());
    }
    // Naming one's own cgroup as the parent means "it is delegated to me".
    let delegated = args.cgroup_parent.as_deref().is_some_and(|p| p == location.own_dir);
    let cgroups = RunCgroups::create(&base, delegated)
        .map_err(|e| CliError::io(&format!("cannot create a cgroup under {}", base.display()), &e))?;
    let cleanup = Cleanup { cgroups: &cgroups };
    apply_limits(&args, &cgroups)?;

    let namespace = match &args.net {
        NetMode::Host => None,
        NetMode::Isolated => {
            Some(HeldNamespace::isolated().map_err(|e| CliError::io("cannot create a network namespace", &e))?)
        }
        NetMode::Namespace(path) => Some(
            HeldNamespace::existing(path)
                .map_err(|e| CliError::io(&format!("cannot use the network namespace {}", path.display()), &e))?,
        ),
    };
    let network = match &namespace {
        None => NetworkSource::SharedNamespace,
        Some(ns) => NetworkSource::Namespace { path: ns.path(), include_loopback: args.include_loopback },
    };

    let monitor = Monitor::new(MonitorOptions::default()).map_err(|e| CliError::new(e.to_string()))?;
    let recorder = monitor.record(&cgroups.leaf, &network).map_err(|e| CliError::new(e.to_string()))?;

    let start = Timestamp::now();
    let started = Instant::now();
    // In the leaf (and namespace) from its first instruction (crate::spawn).
    let mut step = spawn::spawn(&cgroups.leaf, namespace.as_ref(), &args.command, spawn_mode)?;
    let status = caught.wait_forwarding(&mut step).map_err(|e| CliError::io("waiting for the step", &e))?;
    if args.wait_all {
        placement::wait_unpopulated(&cgroups.leaf, None)
            .map_err(|e| CliError::io("waiting for the step's processes", &e))?;
    } else if let Err(e) = cgroups.kill_and_wait(Duration::from_secs(10)) {
        eprintln!("stepmon: warning: killing what the step left behind: {e}");
    }
    let wall = started.elapsed();
    let end = Timestamp::now();

    let usage: StepUsage = recorder.close_blocking();
    monitor.shutdown_blocking();
    drop(cleanup);

    let (exit, signal, code) = exit_code(status);
    let summary = UsageSummary::of(&usage, wall.as_secs_f64());
    let (cpu_seconds, max_rss_bytes) = crate::report::own_usage();
    let mut not_measured: Vec<String> = Vec::new();
    let mut by_reason: Vec<(String, Vec<&str>)> = Vec::new();
    for missing in &cgroups.not_enabled {
        match by_reason.iter_mut().find(|(reason, _)| *reason == missing.reason) {
            Some((_, controllers)) => controllers.push(missing.controller),
            None => by_reason.push((missing.reason.clone(), vec![missing.controller])),
        }
    }
    for (reason, controllers) in by_reason {
        let names: Vec<&str> =
            controllers.iter().map(|c| if *c == "cpu" { "cpu throttling (cpu controller)" } else { c }).collect();
        not_measured.push(format!("{}: {reason}", names.join(", ")));
    }
    if namespace.is_none() {
        not_measured.push(
            "network: the step shares the host's network namespace (use --net isolated or --net ns:PATH to count it)"
                .to_owned(),
        );
    }
    if !Path::new("/proc/pressure").exists() {
        not_measured.push("stall: pressure stall information is disabled on this kernel (boot with psi=1)".to_owned());
    }
    let mut collector = Collector::default();
    collector.cpu_seconds = cpu_seconds;
    collector.max_rss_bytes = max_rss_bytes;
    collector.samples = usage.resource_usage.samples.len();
    collector.sys_samples = usage.sys_usage.len();
    let mut info = RunInfo::default();
    info.command = command;
    info.exit_code = exit;
    info.signal = signal;
    info.start = Some(start);
    info.end = Some(end);
    info.cgroup = cgroups.leaf.display().to_string();
    info.controllers = cgroups.enabled.iter().map(|c| (*c).to_owned()).collect();
    info.controllers_not_enabled =
        cgroups.not_enabled.iter().map(|n| NotEnabled::new(n.controller, n.reason.clone())).collect();
    info.host = host(&location.mount_point, location.pure_v2);
    info.collector = collector;
    info.summary = summary;
    info.not_measured = not_measured;
    let mut report = RunDocument::new(usage, info);
    let step = stepmon_report::Step::from_run(&report);
    let verdicts = step.verdicts();
    if let Some(info) = report.stepmon.as_mut() {
        info.verdicts = Some(verdicts.clone());
    }
    if !args.quiet {
        eprint!("{}", stepmon_report::text::render(&step, &verdicts));
    }
    if let Some(path) = &args.output {
        let text = match args.format {
            OutputFormat::Document => {
                serde_json::to_string_pretty(&report).map_err(|e| CliError::new(format!("JSON: {e}")))? + "\n"
            }
            OutputFormat::Report(format) => stepmon_report::export::render(format, std::slice::from_ref(&step)),
        };
        match output_file.as_mut() {
            Some(file) => std::io::Write::write_all(file, text.as_bytes())
                .map_err(|e| CliError::io(&format!("cannot write {}", path.display()), &e))?,
            None => crate::out::emit(&text)?,
        }
    }
    Ok(code)
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
        assert_eq!("isolated".parse::<NetMode>(), Ok(NetMode::Isolated));
        assert_eq!("ns:/run/netns/x".parse::<NetMode>(), Ok(NetMode::Namespace(PathBuf::from("/run/netns/x"))));
        assert!("ns:".parse::<NetMode>().is_err() && "bridge".parse::<NetMode>().is_err());
    }
}

//! `stepmon`: run a command as a measured step and report what it cost.
//! Placement, spawning, measurement and clean-up live in the library crates
//! (`stepmon-runner` and below); this binary parses arguments and prints.
#![forbid(unsafe_code)]
// A binary: `pub` marks what a module offers the rest of the crate.
#![allow(unreachable_pub)]

/// A run is short and starts threads at once: an allocator that takes memory
/// in large segments under one lock costs it the least (why not the C
/// library's: the workspace Cargo.toml, beside the dependency).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

#[cfg(target_os = "linux")]
mod baseline;
#[cfg(target_os = "linux")]
mod baseline_prom;
#[cfg(target_os = "linux")]
mod build;
#[cfg(target_os = "linux")]
mod commands;
#[cfg(target_os = "linux")]
mod doctor;
mod error;
#[cfg(target_os = "linux")]
mod fleet;
mod history;
#[cfg(target_os = "linux")]
mod http;
mod input;
#[cfg(target_os = "linux")]
mod job;
mod job_read;
#[cfg(target_os = "linux")]
mod otlp;
mod out;
#[cfg(target_os = "linux")]
mod outputs;
#[cfg(target_os = "linux")]
mod push;
mod reports;
#[cfg(target_os = "linux")]
mod run;
#[cfg(target_os = "linux")]
mod run_argv;
#[cfg(target_os = "linux")]
mod shell;
#[cfg(target_os = "linux")]
mod terminal;
#[cfg(target_os = "linux")]
mod top;
#[cfg(target_os = "linux")]
mod watch_lines;
#[cfg(target_os = "linux")]
mod wrap;

/// One command line everywhere; off Linux only `stepmon report` and
/// `stepmon diff` (pure data, for reading a CI job's record on a laptop)
/// exist, every other subcommand needs Linux's cgroups.
mod cli {
    use clap::{Parser, Subcommand};

    /// Measure what a build or CI step costs: CPU, memory, IO, pids, network
    /// and pressure stall, from the kernel's cgroup v2 counters, beside what
    /// the whole machine did meanwhile.
    #[derive(Debug, Parser)]
    #[command(name = "stepmon", version, propagate_version = true)]
    pub(crate) struct Cli {
        #[command(subcommand)]
        pub(crate) command: Cmd,
    }

    /// [`Cli`] with `run` alone: clap builds every subcommand's arguments
    /// before it parses, a cost (and page faults) paid at every `stepmon
    /// run`'s start (benches/README.md, "Figures behind code comments");
    /// the same name, version and words, so `stepmon run`'s help, usage and
    /// errors are [`Cli`]'s.
    #[cfg(target_os = "linux")]
    #[derive(Debug, Parser)]
    #[command(name = "stepmon", version, propagate_version = true)]
    pub(crate) struct RunOnly {
        #[command(subcommand)]
        pub(crate) command: RunCmd,
    }

    /// `run`: [`RunOnly`]'s one subcommand, and [`Cli`]'s first (flattened
    /// into [`Cmd`], so its words are written once).
    #[cfg(target_os = "linux")]
    #[derive(Debug, Subcommand)]
    pub(crate) enum RunCmd {
        /// Run a command as a monitored step and report its usage.
        Run(Box<crate::run::RunArgs>),
    }

    #[derive(Debug, Subcommand)]
    pub(crate) enum Cmd {
        #[cfg(target_os = "linux")]
        #[command(flatten)]
        Run(RunCmd),
        /// A saved run (or the steps of a BuildKit build's provenance) as
        /// text, JSON, a Chrome trace, OpenMetrics, Prometheus text,
        /// Markdown or HTML.
        Report(crate::reports::ReportArgs),
        /// Push a saved run's metrics to a Prometheus Pushgateway (text
        /// format 0.0.4), one group per step, or its steps to an
        /// OpenTelemetry collector (--otlp).
        #[cfg(target_os = "linux")]
        Push(crate::fleet::PushArgs),
        /// Compare two runs of the same step (or two builds) field by field;
        /// changes beyond the noise are flagged.
        Diff(crate::reports::DiffArgs),
        /// One sample of an existing cgroup (JSON on stdout).
        #[cfg(target_os = "linux")]
        Sample(crate::commands::SampleArgs),
        /// One sample of the whole machine (JSON on stdout).
        #[cfg(target_os = "linux")]
        Sys(crate::commands::SysArgs),
        /// The steps running on this machine now, one row each (name, job,
        /// time so far, cores, memory and limit, IO, stall, tasks), redrawn
        /// every second; q quits.
        #[cfg(target_os = "linux")]
        Top(crate::top::TopArgs),
        /// Remove cgroups left behind by runs whose stepmon was killed.
        #[cfg(target_os = "linux")]
        Gc(crate::commands::GcArgs),
        /// What this host supports (cgroup layout, controllers, PSI,
        /// privileges) and, for what it lacks, why and what to do.
        #[cfg(target_os = "linux")]
        Doctor(crate::doctor::DoctorArgs),
        /// Runs of steps kept in one SQLite file, and whether a run got
        /// worse than the last comparable ones (a CI gate).
        #[cfg(target_os = "linux")]
        Baseline(Box<crate::baseline::BaselineArgs>),
        /// Run one action of a build (a compile, a link) as a measured step
        /// appended to the job record STEPMON_JOB names, changing nothing the
        /// build sees: a compiler launcher (also RUSTC_WRAPPER=stepmon).
        #[cfg(target_os = "linux")]
        Wrap(crate::wrap::WrapArgs),
        /// Run a CI script as GitHub Actions' bash does, as a measured step
        /// of the job record STEPMON_JOB names (`shell: stepmon shell {0}`).
        #[cfg(target_os = "linux")]
        Shell(crate::shell::ShellArgs),
        /// Run a whole build (cargo, make, CMake, ninja) as a measured step
        /// with each compiler run an action of it, and report every action,
        /// the critical path, the memory at the peak and the -j it allows.
        #[cfg(target_os = "linux")]
        Build(crate::build::BuildArgs),
        /// Any other subcommand: Linux only.
        #[cfg(not(target_os = "linux"))]
        #[command(external_subcommand)]
        Other(Vec<String>),
    }
}

fn main() {
    use clap::Parser;
    #[cfg(target_os = "linux")]
    if std::env::args_os().nth(1).is_some_and(|first| first == "run") {
        let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
        let args = run_argv::common_run(&argv).unwrap_or_else(|| {
            let cli::RunCmd::Run(args) = cli::RunOnly::parse_from(argv).command;
            *args
        });
        exit_with(run::run(args));
    }
    // A launcher's command line (`stepmon wrap cc …`, cargo's `stepmon
    // rustc …`), before clap: thousands of them run in one build.
    #[cfg(target_os = "linux")]
    {
        let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if let Some(command) = wrap::action_of_argv(&argv) {
            exit_with(wrap::wrap(command));
        }
    }
    let result = match cli::Cli::parse().command {
        #[cfg(target_os = "linux")]
        cli::Cmd::Run(cli::RunCmd::Run(args)) => run::run(*args),
        cli::Cmd::Report(args) => reports::report(&args).map(|()| 0),
        #[cfg(target_os = "linux")]
        cli::Cmd::Push(args) => fleet::push(&args),
        cli::Cmd::Diff(args) => reports::diff(&args),
        #[cfg(target_os = "linux")]
        cli::Cmd::Sample(args) => commands::sample(&args).map(|()| 0),
        #[cfg(target_os = "linux")]
        cli::Cmd::Sys(args) => commands::sys(&args).map(|()| 0),
        #[cfg(target_os = "linux")]
        cli::Cmd::Top(args) => top::top(&args),
        #[cfg(target_os = "linux")]
        cli::Cmd::Gc(args) => commands::gc(&args).map(|()| 0),
        #[cfg(target_os = "linux")]
        cli::Cmd::Doctor(args) => doctor::doctor(&args),
        #[cfg(target_os = "linux")]
        cli::Cmd::Baseline(args) => baseline::baseline(&args),
        #[cfg(target_os = "linux")]
        cli::Cmd::Wrap(args) => wrap::wrap(args.command),
        #[cfg(target_os = "linux")]
        cli::Cmd::Shell(args) => shell::shell(&args),
        #[cfg(target_os = "linux")]
        cli::Cmd::Build(args) => build::build(args),
        #[cfg(not(target_os = "linux"))]
        cli::Cmd::Other(args) => {
            let name = args.first().map_or("", String::as_str);
            eprintln!(
                "stepmon: error: `stepmon {name}` runs steps in Linux cgroups; this platform has none\n  \
                 hint: `stepmon report` and `stepmon diff` read records made on Linux here"
            );
            std::process::exit(error::INTERNAL_ERROR);
        }
    };
    exit_with(result);
}

/// Exits with the command's status, or says what failed and exits 125.
fn exit_with(result: Result<i32, error::CliError>) -> ! {
    match result {
        Ok(code) => std::process::exit(code),
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(error::INTERNAL_ERROR);
        }
    }
}

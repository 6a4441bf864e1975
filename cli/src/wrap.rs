//! `stepmon wrap PROGRAM ARGS…` and `RUSTC_WRAPPER=stepmon`: one action of a
//! build run as a measured step, appended to the job record `STEPMON_JOB`
//! names, and nothing else — the action's stdout, stderr, exit status,
//! environment and working directory are the build's, so stepmon writes
//! nothing of its own unless `STEPMON_WRAP_VERBOSE` asks. What the action
//! builds is `stepmon_job::action::identify`'s.

use std::ffi::OsString;

use stepmon_runner::StepOptions;

use crate::error::CliError;

/// The variable naming the job record the actions are appended to.
pub const JOB_VARIABLE: &str = "STEPMON_JOB";
/// The variable that lets `stepmon wrap` speak on stderr.
pub const VERBOSE_VARIABLE: &str = "STEPMON_WRAP_VERBOSE";

/// Arguments of `stepmon wrap`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Environment:
  STEPMON_JOB=FILE         append each action to the job record FILE (JSON Lines, created on
                           first use; many launchers may append at once; an absolute path: a
                           build runs its actions in many directories); `stepmon report FILE`
                           shows the actions. Unset: the action runs measured, unrecorded.
  STEPMON_WRAP_VERBOSE=1   say on stderr what stepmon notices, the record's warnings and the
                           action's summary (by default stderr is the action's alone).

As a compiler launcher:
  RUSTC_WRAPPER=stepmon cargo build          (cargo runs `stepmon $RUSTC ARGS…`)
  make CC='stepmon wrap cc'
  cmake -DCMAKE_C_COMPILER_LAUNCHER='stepmon;wrap' …
  stepmon wrap sccache rustc …              (in front of another wrapper)

Each action is named by what it builds: a crate by its name, kind and version
(`serde 1.0.219 (lib)`, `serde 1.0.219 (build script)`), a C or C++ compile or link by its output
(`main.o (cc)`, `app (cc link)`); cargo's questions to rustc (`rustc -vV`, `--print`) and build
scripts' trial compiles are probes.")]
pub struct WrapArgs {
    /// The action: its program and arguments (executed directly, never
    /// through a shell).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "PROGRAM")]
    pub command: Vec<OsString>,
}

/// `stepmon`'s subcommands: a first argument that is one of these is never
/// an action (`RUSTC_WRAPPER=stepmon`'s test, [`action_of_argv`]).
const SUBCOMMANDS: &[&str] = &[
    "run", "report", "push", "diff", "sample", "sys", "top", "gc", "doctor", "baseline", "wrap", "shell", "build",
    "help",
];

/// The action of a `stepmon` command line (`argv`, the program first) run
/// as a launcher, without clap: `stepmon wrap [--] PROGRAM ARGS…`, and
/// cargo's `stepmon $RUSTC ARGS…` (`RUSTC_WRAPPER=stepmon`; also
/// `stepmon $RUSTC_WORKSPACE_WRAPPER $RUSTC ARGS…`) — a first argument
/// that is no subcommand, with a rustc first or second. `None`: clap's
/// (`stepmon wrap --help`, no program, any other subcommand).
pub fn action_of_argv(argv: &[OsString]) -> Option<Vec<OsString>> {
    let first = argv.get(1)?;
    if first == "wrap" {
        let rest = match argv.get(2..)? {
            [dash, rest @ ..] if dash == "--" => rest,
            rest => rest,
        };
        let program = rest.first()?;
        return (!program.as_encoded_bytes().starts_with(b"-")).then(|| rest.to_vec());
    }
    let text = first.to_str()?;
    let rustc_at = |at: usize| argv.get(at).and_then(|a| a.to_str()).is_some_and(stepmon_job::action::is_rustc);
    let launched = !text.starts_with('-') && !SUBCOMMANDS.contains(&text) && (rustc_at(1) || rustc_at(2));
    // A RUSTC_WRAPPER that `stepmon build` found set goes back in front of rustc.
    let next = || std::env::var_os(stepmon_job::build::NEXT_RUSTC_WRAPPER);
    launched.then(|| stepmon_job::build::chain_rustc_wrapper(argv[1..].to_vec(), next()))
}

/// Whether `STEPMON_WRAP_VERBOSE` asks stepmon to speak (set, not empty, not `0`).
fn verbose() -> bool {
    std::env::var_os(VERBOSE_VARIABLE).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Says nothing: without `STEPMON_WRAP_VERBOSE` stderr is the action's.
fn silent(_: &str) {}

/// Runs the action `command` as a measured step and appends it to the job
/// record `STEPMON_JOB` names; returns the status to exit with, or — when
/// the action died by a signal — dies by the same signal.
pub fn wrap(command: Vec<OsString>) -> Result<i32, CliError> {
    // `stepmon wrap stepmon wrap cc …` (CMake with both CC and its launcher
    // set by `stepmon build`) is one action.
    let command = match std::env::current_exe() {
        Ok(me) if command.get(1).is_some_and(|w| w == "wrap") => stepmon_job::build::unnested(&command, &me).to_vec(),
        _ => command,
    };
    let verbose = verbose();
    let spawn_mode = stepmon_runner::Mode::from_env().map_err(CliError::new)?;
    let argv: Vec<String> = command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut options = StepOptions::new(command);
    options.spawn_mode = spawn_mode;
    options.forward_signals = true;
    let say: crate::job::Say = if verbose { crate::job::warn } else { silent };
    let mut job = None;
    let mut events = None;
    // A record that cannot be opened leaves the action unrecorded, never
    // undone: the build goes on as it would without stepmon.
    if let Some(path) = std::env::var_os(JOB_VARIABLE).filter(|p| !p.is_empty()) {
        let mut start = stepmon_job::start(None, &[], &argv);
        start.action = Some(stepmon_job::action::identify(&argv, |name| std::env::var(name).ok()));
        match crate::job::open(std::path::Path::new(&path), start, say) {
            Ok(started) => {
                options.live = Some(started.samples);
                job = Some(started.thread);
                events = started.events;
            }
            Err(e) => say(&format!("{}; this action is not recorded", e.message)),
        }
    }
    // The memory events go to the record, never to stderr.
    options.watch = crate::job::recording_events(std::mem::take(&mut options.watch), events);
    // A program that cannot run ends as a shell's would: its status and
    // one line, which the build needs to say why.
    let mut finished = match crate::job::run_recorded(options, &mut job, verbose, say)? {
        crate::job::Ran::Finished(finished) => *finished,
        crate::job::Ran::Exit(code) => return Ok(code),
    };
    if verbose {
        for message in &finished.messages {
            eprintln!("stepmon: {message}");
        }
    }
    let signal = finished.document.stepmon.as_ref().and_then(|r| r.signal);
    if job.is_some() || verbose {
        stepmon_report::compose::complete(&mut finished.document);
        if let Some(info) = finished.document.stepmon.as_mut() {
            info.ci = stepmon_model::labels::CiContext::from_env(|name| std::env::var(name).ok());
        }
        if verbose {
            let step = stepmon_report::Step::from_run(&finished.document);
            eprint!("{}", stepmon_report::text::render(&step, &step.verdicts()));
        }
        crate::job::end_saying(job, finished.exit_code, None, Some(finished.document), say);
    }
    if let Some(signal) = signal {
        die_by(signal);
    }
    Ok(finished.exit_code)
}

/// Ends stepmon by `signal`, as the action ended, so that the build sees
/// what it would have seen without stepmon (make's "Interrupt", cargo's
/// "signal: 9, SIGKILL"); returns only where the signal cannot end it (one
/// whose default is to be ignored or to stop), and the caller exits with
/// 128 + `signal` then. No core file is written for stepmon: the core
/// that matters was the action's.
fn die_by(signal: i32) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut core = getrlimit(Resource::Core);
    core.current = Some(0);
    let _ = setrlimit(Resource::Core, core);
    // Resets the signal's handler to the default (stepmon catches SIGINT,
    // SIGTERM and SIGHUP to forward them) and raises it.
    let _ = signal_hook::low_level::emulate_default_handler(signal);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<OsString> {
        line.split(' ').map(Into::into).collect()
    }

    fn action(line: &str) -> Option<String> {
        action_of_argv(&argv(line))
            .map(|a| a.iter().map(|s| s.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" "))
    }

    #[test]
    fn launcher_command_lines_are_told_from_subcommands() {
        assert_eq!(action("stepmon wrap cc -c -o a.o a.c").as_deref(), Some("cc -c -o a.o a.c"));
        assert_eq!(action("stepmon wrap -- cc -v").as_deref(), Some("cc -v"));
        // cargo's RUSTC_WRAPPER, and RUSTC_WORKSPACE_WRAPPER in between.
        let rustc = "/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc";
        assert_eq!(action(&format!("stepmon {rustc} -vV")), Some(format!("{rustc} -vV")));
        assert_eq!(action("stepmon rustc - --crate-name ___").as_deref(), Some("rustc - --crate-name ___"));
        assert_eq!(
            action("stepmon clippy-driver rustc --crate-name a").as_deref(),
            Some("clippy-driver rustc --crate-name a")
        );
        // clap's: help, no program, subcommands, options.
        for line in [
            "stepmon wrap --help",
            "stepmon wrap",
            "stepmon wrap --",
            "stepmon run -- rustc",
            "stepmon report rustc",
            "stepmon --version",
            "stepmon cc -c a.c",
            "stepmon",
            "stepmon help rustc",
        ] {
            assert_eq!(action(line), None, "{line}");
        }
    }
}

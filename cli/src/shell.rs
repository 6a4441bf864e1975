//! `stepmon shell FILE`: a CI script run the way GitHub's default shell
//! runs it (`bash --noprofile --norc -eo pipefail FILE`), as a measured
//! step appended to the job record `STEPMON_JOB` names, so that one line of
//! a workflow (`defaults: run: shell: stepmon shell {0}`) measures every
//! `run:` step of a job.
//!
//! Not root, with passwordless sudo (GitHub's hosted runners), it runs
//! sudo of itself and waits: the root side places the step with root's
//! rights (a cgroup of its own) and the runner's child takes the caller's
//! ids back before it execs the script ([`caller`] carries them and the
//! environment across sudo). Without sudo, or when sudo refuses, the
//! script runs as the caller, measured where the caller's rights reach. Whatever stepmon cannot do is
//! a one-line notice on stderr: the script runs, and its status is stepmon's.

mod caller;
mod name;
mod notice;
mod step;
mod sudo;

use std::ffi::OsString;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::error::CliError;
use notice::notice;
use step::{JOB_VARIABLE, Outcome, Plan};
use stepmon_model::action::Script;

/// Arguments of `stepmon shell`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Environment:
  STEPMON_JOB=FILE   append the step to the job record FILE, as `stepmon run --job FILE` does
                     (an absolute path: steps may run in other directories; stderr stays the
                     script's; `stepmon report FILE` shows the job). Unset: the step's summary
                     goes to stderr, as `stepmon run`'s.
  GITHUB_ACTION      the step's name when the workflow gave the step an id (`id: build`); else
                     the script's first command line names it.
  STEPMON_PROGRESS   a progress line every INTERVAL, as for `stepmon run`.

Every `run:` step of a GitHub Actions job, measured:
  defaults:
    run:
      shell: stepmon shell {0}

Not root: with passwordless sudo (`sudo -n true` succeeds, as on GitHub's hosted runners) the
step gets root's placement and the script runs as you: your uid, groups, HOME, directory, umask
and whole environment. Without it the script runs as you, measured where your rights reach,
after a notice. Anything stepmon cannot do is a notice: the script runs, and its exit status is
stepmon's.")]
pub struct ShellArgs {
    /// Run the script with `sh -e FILE` (GitHub's `shell: sh`) instead of
    /// `bash --noprofile --norc -eo pipefail FILE`.
    #[arg(long, conflicts_with = "pwsh")]
    pub sh: bool,
    /// Run the script with PowerShell: `pwsh -command ". 'FILE'"` (GitHub's
    /// `shell: pwsh`).
    #[arg(long)]
    pub pwsh: bool,
    /// The root side, started through sudo by the caller's `stepmon shell`:
    /// the caller's ids and environment are in its memfd /proc/PID/fd/FD.
    #[arg(long = "from-caller", hide = true, value_name = "PID:FD")]
    pub from_caller: Option<caller::Handle>,
    /// The script (GitHub's `{0}`).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// The shells GitHub runs a `run:` step with, as it runs them
/// (<https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idstepsshell>).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shell {
    Bash,
    Sh,
    Pwsh,
}

impl Shell {
    fn of(args: &ShellArgs) -> Shell {
        match (args.sh, args.pwsh) {
            (true, _) => Shell::Sh,
            (_, true) => Shell::Pwsh,
            _ => Shell::Bash,
        }
    }

    /// Its command line for `file`.
    fn command(self, file: &Path) -> Vec<OsString> {
        let words = |words: &[&str]| words.iter().map(OsString::from).chain([file.into()]).collect();
        match self {
            Shell::Bash => words(&["bash", "--noprofile", "--norc", "-eo", "pipefail"]),
            Shell::Sh => words(&["sh", "-e"]),
            Shell::Pwsh => {
                // `. 'FILE'`: a quote inside PowerShell's single quotes is
                // written twice (about_Quoting_Rules).
                let mut script = OsString::from(". '");
                let text = file.as_os_str().to_string_lossy();
                if text.contains('\'') {
                    script.push(text.replace('\'', "''"));
                } else {
                    script.push(file);
                }
                script.push("'");
                vec!["pwsh".into(), "-command".into(), script]
            }
        }
    }

    /// Its program's name (an empty script's step name).
    fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Sh => "sh",
            Shell::Pwsh => "pwsh",
        }
    }

    /// Its option of `stepmon shell`, for the root side.
    fn flag(self) -> Option<&'static str> {
        match self {
            Shell::Bash => None,
            Shell::Sh => Some("--sh"),
            Shell::Pwsh => Some("--pwsh"),
        }
    }
}

/// Runs the script; the status to exit with (the script's).
pub fn shell(args: &ShellArgs) -> Result<i32, CliError> {
    let shell = Shell::of(args);
    if let Some(handle) = args.from_caller {
        return for_the_caller(handle, shell, &args.file);
    }
    if !rustix::process::geteuid().is_root() {
        match through_sudo(shell, &args.file) {
            Ok(code) => return Ok(code),
            Err(why) => notice(&format!(
                "{why}; the script runs with your own rights, measured where they reach (`stepmon doctor` says how far)"
            )),
        }
    }
    Ok(run(&plan(shell, &args.file, None)))
}

/// Runs the script through sudo of this `stepmon shell` when passwordless
/// sudo is there: its status; why not otherwise (the script has not run).
fn through_sudo(shell: Shell, file: &Path) -> Result<i32, String> {
    let sudo = sudo::find(std::env::var_os("PATH").as_deref()).ok_or("no sudo on PATH")?;
    sudo::passwordless(&sudo)?;
    let caller = caller::Caller::of_this_process().map_err(|e| format!("cannot read this process's groups: {e}"))?;
    // Made by the caller, the job record stays the caller's file (root
    // only appends to it): later steps and reports read it as the caller.
    // Not made: the root side says why.
    if let Some(path) = caller.var_os(JOB_VARIABLE).filter(|path| !path.is_empty()) {
        let _ = std::fs::OpenOptions::new().append(true).create(true).open(path);
    }
    sudo::run_through(&sudo, &caller, shell.flag(), file)
}

/// The root side: the script run for the caller whose ids and environment
/// `handle` holds.
fn for_the_caller(handle: caller::Handle, shell: Shell, file: &Path) -> Result<i32, CliError> {
    if !rustix::process::geteuid().is_root() {
        return Err(CliError::new(format!(
            "{} is for the root side of `stepmon shell`, which sudo starts",
            sudo::FROM_CALLER
        )));
    }
    let caller =
        handle.take_over().map_err(|why| CliError::new(format!("cannot take over the caller's environment: {why}")))?;
    Ok(run(&plan(shell, file, Some(caller))))
}

/// The most of a script read for its name.
const READ_FOR_NAME: u64 = 64 * 1024;

/// The step: `shell` running `file`, named from the CI's step id or the
/// script, for `caller` (`None`: this process).
fn plan(shell: Shell, file: &Path, caller: Option<caller::Caller>) -> Plan {
    // A script that cannot be read is the shell's to report.
    let mut script = Vec::new();
    if let Ok(opened) = std::fs::File::open(file) {
        let _ = opened.take(READ_FOR_NAME).read_to_end(&mut script);
    }
    let github_action = match &caller {
        Some(caller) => caller.var("GITHUB_ACTION").map(str::to_owned),
        None => std::env::var("GITHUB_ACTION").ok(),
    };
    let name = name::step_name(github_action.as_deref(), &script, shell.name());
    let script = Script::new(shell.name().to_owned(), name::first_command_line(&script));
    Plan { command: shell.command(file), name, script, caller }
}

/// Runs `plan` measured, else unmeasured; the status to exit with.
fn run(plan: &Plan) -> i32 {
    match step::measured(plan) {
        Outcome::Exited(code) => code,
        Outcome::Failed(error) => {
            eprintln!("{error}");
            crate::error::INTERNAL_ERROR
        }
        Outcome::NotStarted(why) => {
            notice(&format!("cannot measure the step ({why}); the script runs unmeasured"));
            step::unmeasured(plan)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shell_as_github_runs_it() {
        let file = Path::new("/runner/_temp/a b.sh");
        let line =
            |shell: Shell| shell.command(file).iter().map(|w| w.to_string_lossy().into_owned()).collect::<Vec<_>>();
        assert_eq!(line(Shell::Bash), ["bash", "--noprofile", "--norc", "-eo", "pipefail", "/runner/_temp/a b.sh"]);
        assert_eq!(line(Shell::Sh), ["sh", "-e", "/runner/_temp/a b.sh"]);
        assert_eq!(line(Shell::Pwsh), ["pwsh", "-command", ". '/runner/_temp/a b.sh'"]);
        let quoted = Shell::Pwsh.command(Path::new("/tmp/it's.ps1"));
        assert_eq!(quoted[2], ". '/tmp/it''s.ps1'");
    }
}

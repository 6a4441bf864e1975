//! The step's command as std's `Command`, with the environment, working
//! directory and streams its options hold.

use std::process::Command;

use crate::action::{Action, Kind, Stdio};
use crate::error::{RunError, RunErrorKind};
use crate::options::StepOptions;

/// `options`' command, not started.
pub(crate) fn command(options: &StepOptions) -> Result<Command, RunError> {
    let (program, args) =
        options.command.split_first().ok_or_else(|| RunError::new(RunErrorKind::InvalidOptions, "no command given"))?;
    let mut command = Command::new(program);
    command.args(args);
    apply(&options.action, &mut command)?;
    Ok(command)
}

fn apply(action: &Action, command: &mut Command) -> Result<(), RunError> {
    if action.env_clear {
        command.env_clear();
    }
    for (name, value) in &action.vars {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    if let Some(dir) = &action.current_dir {
        command.current_dir(dir);
    }
    let [stdin, stdout, stderr] = &action.stdio;
    if let Some(stdin) = stdin {
        command.stdin(std_stdio(stdin, "stdin")?);
    }
    if let Some(stdout) = stdout {
        command.stdout(std_stdio(stdout, "stdout")?);
    }
    if let Some(stderr) = stderr {
        command.stderr(std_stdio(stderr, "stderr")?);
    }
    Ok(())
}

/// std's `Stdio` for ours; a file is a copy of the caller's (the options
/// keep theirs).
fn std_stdio(stdio: &Stdio, name: &str) -> Result<std::process::Stdio, RunError> {
    Ok(match &stdio.0 {
        Kind::Inherit => std::process::Stdio::inherit(),
        Kind::Null => std::process::Stdio::null(),
        Kind::Piped => std::process::Stdio::piped(),
        Kind::File(file) => {
            std::process::Stdio::from(file.try_clone().map_err(|e| {
                RunError::with_source(RunErrorKind::Spawn, format!("cannot set up the step's {name}"), e)
            })?)
        }
    })
}

/// Why `command` did not start, as a [`RunError`] of the kind Linux gives.
pub(crate) fn spawn_error(program: &std::ffi::OsStr, error: std::io::Error) -> RunError {
    let program = stepmon_model::labels::quote(&program.to_string_lossy());
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            RunError::with_source(RunErrorKind::NotFound, format!("cannot run {program}: command not found"), error)
        }
        std::io::ErrorKind::PermissionDenied => {
            RunError::with_source(RunErrorKind::PermissionDenied, format!("cannot run {program}"), error)
        }
        _ => RunError::with_source(RunErrorKind::Spawn, format!("cannot run {program}"), error),
    }
}

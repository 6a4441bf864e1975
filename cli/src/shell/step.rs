//! The script run as a measured step, appended to the job record
//! `STEPMON_JOB` names, as another user's when a root stepmon runs it for
//! the caller; and, when the step cannot be measured at all, the script
//! run unmeasured all the same.

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::Path;

use stepmon_runner::{Mode, StepOptions};

use super::caller::Caller;
use super::notice::notice;
use crate::error::{CliError, INTERNAL_ERROR};

/// The variable naming the job record each step is appended to.
pub const JOB_VARIABLE: &str = "STEPMON_JOB";

/// The step to run.
pub struct Plan {
    /// The shell's command line.
    pub command: Vec<OsString>,
    /// The step's name in its record and report.
    pub name: String,
    /// The script in the CI's words (its shell and first command line),
    /// the record's action of the step: its command is only the shell and
    /// a temporary file.
    pub script: stepmon_model::action::Script,
    /// The caller, when this root stepmon runs the script for it (its ids,
    /// umask and environment are the script's); `None`: this process's.
    pub caller: Option<Caller>,
}

impl Plan {
    /// A variable of the script's environment (the caller's, or this
    /// process's), if set and valid UTF-8.
    pub fn var(&self, name: &str) -> Option<String> {
        self.var_os(name).and_then(|value| value.into_string().ok())
    }

    /// A variable of the script's environment, if set.
    pub fn var_os(&self, name: &str) -> Option<OsString> {
        match &self.caller {
            Some(caller) => caller.var_os(name).map(ToOwned::to_owned),
            None => std::env::var_os(name),
        }
    }
}

/// How a measured step ended.
pub enum Outcome {
    /// With this status: the script's, or a shell's 127 or 126 when the
    /// shell could not start.
    Exited(i32),
    /// Started, but its end could not be waited for.
    Failed(CliError),
    /// Not started, for this reason of stepmon's: the script can still run,
    /// unmeasured.
    NotStarted(String),
}

/// Runs the plan as a measured step.
pub fn measured(plan: &Plan) -> Outcome {
    let job_path = plan.var_os(JOB_VARIABLE).filter(|path| !path.is_empty());
    // With a job record the job's report tells the step: stderr is the
    // script's, but for what stepmon could not do.
    let quiet = job_path.is_some();
    let spawn_mode = Mode::from_env().unwrap_or_else(|why| {
        notice(&format!("{why}; starting the step the default way"));
        Mode::Auto
    });
    let progress = crate::watch_lines::from_env(plan.var(crate::watch_lines::PROGRESS_VARIABLE).as_deref())
        .unwrap_or_else(|why| {
            notice(&format!("{why}; no progress lines"));
            None
        });
    let mut options = StepOptions::new(plan.command.iter().cloned());
    options.name = Some(plan.name.clone());
    options.spawn_mode = spawn_mode;
    options.forward_signals = true;
    if let Some(caller) = &plan.caller {
        options.env_clear().envs(caller.env.iter().map(|(name, value)| (name, value)));
        options.uid(caller.uid).gid(caller.gid).groups(&caller.groups).umask(caller.umask);
    }
    let command: Vec<String> = plan.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut job = None;
    let mut events = None;
    if let Some(path) = &job_path {
        let mut start = stepmon_job::start(Some(&plan.name), &[], &command);
        start.action = Some(stepmon_model::action::Action::Script(plan.script.clone()));
        match crate::job::open(Path::new(path), start, crate::job::warn) {
            Ok(started) => {
                options.live = Some(started.samples);
                job = Some(started.thread);
                events = started.events;
            }
            Err(e) => notice(&format!("{}; the step is not recorded", e.message)),
        }
    }
    options.watch = watch(&plan.name, progress, quiet, events);
    let prepared = match stepmon_runner::prepare(options) {
        Ok(prepared) => prepared,
        Err(e) => {
            let code = crate::error::exit_code_of(&e);
            let error = CliError::from(e);
            crate::job::end(job, code, Some(error.message.clone()), None);
            // The shell not found or not executable: a shell's status and
            // one line, as a CI runner without stepmon would fail.
            if code != INTERNAL_ERROR {
                eprintln!("stepmon: error: {}", error.message);
                return Outcome::Exited(code);
            }
            return Outcome::NotStarted(error.message);
        }
    };
    for notice in prepared.notices() {
        if !quiet || notice.is_warning() {
            eprintln!("stepmon: {notice}");
        }
    }
    let step = match prepared.start() {
        Ok(step) => step,
        Err(e) => {
            let error = CliError::from(e);
            crate::job::end(job, INTERNAL_ERROR, Some(error.message.clone()), None);
            return Outcome::NotStarted(error.message);
        }
    };
    let mut finished = match step.wait() {
        Ok(finished) => finished,
        Err(e) => {
            let error = CliError::from(e);
            crate::job::end(job, INTERNAL_ERROR, Some(error.message.clone()), None);
            return Outcome::Failed(error);
        }
    };
    for message in &finished.messages {
        eprintln!("stepmon: {message}");
    }
    stepmon_report::compose::complete(&mut finished.document);
    if let Some(info) = finished.document.stepmon.as_mut() {
        info.ci = stepmon_model::labels::CiContext::from_env(|name| plan.var(name));
    }
    crate::job::end(job, finished.exit_code, None, Some(finished.document.clone()));
    if !quiet {
        let step = stepmon_report::Step::from_run(&finished.document);
        eprint!("{}", stepmon_report::text::render(&step, &step.verdicts()));
    }
    Outcome::Exited(finished.exit_code)
}

/// What the step's watch tells, as `stepmon run`'s: the memory always
/// (kept in the record's events), on stderr unless `quiet`; progress lines
/// every `progress` (`STEPMON_PROGRESS`).
fn watch(
    name: &str,
    progress: Option<std::time::Duration>,
    quiet: bool,
    events: Option<stepmon_job::EventAppender>,
) -> stepmon_runner::watch::Watch {
    use stepmon_model::event::StepEvent;
    use stepmon_runner::watch::{Callback, Watch};

    use crate::watch_lines::{event_line, progress_line, say};
    let mut watch = Watch::default();
    if let Some(interval) = progress {
        let name = name.to_owned();
        watch = watch.with_progress(interval, Callback::new(move |p| say(&progress_line(&name, p))));
    }
    let (name, events) = (name.to_owned(), events.map(std::sync::Mutex::new));
    watch.with_events(Callback::new(move |event: &StepEvent| {
        if !quiet && let Some(line) = event_line(&name, event) {
            say(&line);
        }
        if let Some(events) = &events {
            let _ = events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).append(event.clone());
        }
    }))
}

/// Replaces this process with the script, unmeasured: as the caller (its
/// ids, umask and environment) when there is one, else as this process.
/// Returns only when the shell could not be run: its status then (127 not
/// found, 126 otherwise, as a shell says), said on stderr.
pub fn unmeasured(plan: &Plan) -> i32 {
    let Some((program, args)) = plan.command.split_first() else {
        return INTERNAL_ERROR;
    };
    let mut command = std::process::Command::new(program);
    command.args(args);
    if let Some(caller) = &plan.caller {
        command.env_clear().envs(caller.env.iter().map(|(name, value)| (name, value)));
        // The ids of this thread, the one that execs (the others end at
        // the exec): the program starts with them (the kernel keeps
        // credentials per thread, credentials(7)).
        if let Err(e) = become_caller(caller) {
            eprintln!("stepmon: error: cannot take the ids of uid {} to run the script: {e}", caller.uid);
            return 126;
        }
    }
    let error = command.exec();
    eprintln!("stepmon: error: cannot run {}: {error}", program.to_string_lossy());
    if error.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 }
}

/// Takes `caller`'s groups, gid, uid (in that order: after the uid the
/// others could no longer be changed) and umask for this thread.
fn become_caller(caller: &Caller) -> std::io::Result<()> {
    use rustix::process::{Gid, Uid};
    let groups: Vec<Gid> = caller.groups.iter().map(|&g| Gid::from_raw(g)).collect();
    rustix::thread::set_thread_groups(&groups)?;
    let gid = Gid::from_raw(caller.gid);
    rustix::thread::set_thread_res_gid(gid, gid, gid)?;
    let uid = Uid::from_raw(caller.uid);
    rustix::thread::set_thread_res_uid(uid, uid, uid)?;
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(caller.umask));
    Ok(())
}

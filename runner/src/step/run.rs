//! Running a prepared step: spawn under its own subreaper, wait (blocking
//! or as a future), leftovers, the final samples, cleanup, and the run
//! document.

use std::future::{Future, IntoFuture};
use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::time::Instant;

use jiff::Timestamp;
use rustix::process::Signal;
use stepmon_model::result::{Cost, StepResult};
use stepmon_model::sample::StepUsage;
use stepmon_model::source::EnclosingCgroup;
use stepmon_model::{Collector, RunDocument, RunInfo};
use stepmon_sampler::Recorder;

use super::document::{exit_code, host, own_cpu_seconds};
use super::notices::not_measured;
use super::owned::KILL_TIMEOUT;
use super::owned::{OwnedCgroups, OwnedV1};
use super::{Finished, Prepared};
use crate::action::collect::Collect;
use crate::cgroup::placement::{self};
use crate::error::{RunError, RunErrorKind};
use crate::ladder::{self, Evidence};
use crate::netns::HeldNamespace;
use crate::processes::{Hub, Session};
use crate::spawn::subreaper::{self, Kept};
use crate::spawn::{self, Launch, Target};
use crate::tree::{Progress, Reaper};
use stepmon_model::SampleOf;

/// A running step: await it (it is a runtime-agnostic [`Future`] through
/// [`IntoFuture`]) or [`Step::wait`] for it; kill, freeze or thaw it
/// meanwhile. Dropped before its end, its processes are killed.
///
/// Its piped streams ([`crate::Stdio::piped`]) are its fields, as
/// `std::process::Child`'s are: take them to write and read while it runs,
/// or leave them to [`Step::wait_with_output`] / [`Step::output`].
#[derive(Debug)]
pub(crate) struct Step {
    /// This process's end of the step's stdin, when it is piped.
    pub(crate) stdin: Option<crate::action::pipe::ChildStdin>,
    /// This process's end of the step's stdout, when it is piped.
    pub(crate) stdout: Option<crate::action::pipe::ChildStdout>,
    /// This process's end of the step's stderr, when it is piped.
    pub(crate) stderr: Option<crate::action::pipe::ChildStderr>,
    prepared: Prepared,
    kept: Kept,
    reaper: Reaper,
    processes: Option<Session>,
    /// The tree's memory, sampled where no memory cgroup covers the step alone.
    tree_memory: Option<crate::tree_memory::TreeMemorySampler>,
    /// Its result, once the first process exited: the memory and the
    /// sampling thread's CPU time.
    tree_memory_done: Option<(stepmon_model::source::TreeMemory, f64)>,
    live: Option<std::thread::JoinHandle<()>>,
    /// Its progress and memory watch ([`crate::watch`]).
    watch: Option<crate::watch::Watching>,
    messages: Vec<String>,
    cpu_at_start: f64,
    start: Timestamp,
    started: Instant,
    /// When its first process was seen to exit.
    exited: Option<Instant>,
    /// From the start call to its first process created (with the time
    /// `prepare` took).
    placement: std::time::Duration,
    progress: Progress,
}

impl Prepared {
    /// Starts the step and returns at once: its first process runs in its
    /// cgroups (or the ladder below them), under a subreaper of its own
    /// that collects its orphans.
    pub(crate) fn start(mut self) -> Result<Step, RunError> {
        let mut messages = Vec::new();
        let cpu_at_start = own_cpu_seconds();
        let start = Timestamp::now();
        let started = Instant::now();
        let netns_path = self.namespace.as_ref().map(HeldNamespace::path);
        let v1_tasks = match &self.v1 {
            Some(v1) => {
                v1.get().tasks_files().map_err(|e| RunError::io("cannot open the step's cgroup v1 tasks files", &e))?
            }
            None => Vec::new(),
        };
        let mut stdio = crate::action::open::open(&self.options.action.stdio).map_err(|(name, e)| {
            RunError::with_source(RunErrorKind::Spawn, format!("cannot set up the step's {name}"), e)
        })?;
        let target = Target {
            v1_tasks: &v1_tasks,
            cgroup: self.cgroups.as_ref().map(|c| c.get().command.as_path()),
            netns: self.namespace.as_ref().map(HeldNamespace::as_fd),
            netns_path: netns_path.as_deref(),
        };
        // Listening before the spawn: the step's first fork is seen.
        let hub = self.hub.take().unwrap_or_else(Hub::start_for_one_step);
        let ticker = self.ticker.take().unwrap_or_default();
        let mut processes = Session::start(self.options.processes, &hub, &ticker);
        let tree_memory = (!self.memory_cgroup())
            .then(|| crate::tree_memory::TreeMemorySampler::start(self.options.tree_memory_interval, &ticker));
        let env = self.options.action.environment();
        let credentials = &self.options.action.credentials;
        let launch = Launch {
            env: env.as_deref(),
            dir: self.options.action.current_dir.as_deref(),
            stdio: stdio.child_fds(),
            credentials: (*credentials != crate::action::Credentials::default()).then_some(credentials),
        };
        let kept = subreaper::spawn(target, &self.options.command, &launch, self.options.spawn_mode)
            .map_err(|e| RunError::with_source(RunErrorKind::Spawn, e.what, e.error))?;
        drop(v1_tasks);
        stdio.spawned();
        // While the step runs: what earlier runs left (the notice of a
        // failure is one of the step's messages).
        let mut cleanup = Vec::new();
        if let Some(base) = self.sweeps.base.take() {
            self.host.sweep(&base, &mut cleanup);
        }
        if std::mem::take(&mut self.sweeps.v1) {
            self.host.sweep_v1(&mut cleanup);
        }
        messages.extend(cleanup.iter().map(ToString::to_string));
        if self.options.spawn_mode != spawn::Mode::Auto {
            messages.push(format!("started the step with {}", kept.way));
        }
        let placement = self.placing + started.elapsed();
        processes.set_root(kept.pid.as_raw_nonzero().get(), kept.subreaper_pid().as_raw_nonzero().get());
        if let Some(sampler) = &tree_memory {
            sampler.set_root(kept.subreaper_pid().as_raw_nonzero().get());
        }
        let live = self.options.live.take().and_then(|tx| match (&self.step_recorder, &self.enclosing_recorder) {
            (Some(recorder), _) => crate::live::forward(recorder, SampleOf::Step, tx),
            (None, Some(recorder)) => crate::live::forward(recorder, SampleOf::Enclosing, tx),
            (None, None) => None,
        });
        let cpu_times = Some(processes.cpu_times());
        let watch = Some(crate::watch::start(&self.options.watch, self.watch_target(start), cpu_times, &ticker));
        Ok(Step {
            stdin: stdio.stdin,
            stdout: stdio.stdout,
            stderr: stdio.stderr,
            prepared: self,
            kept,
            reaper: Reaper::new(),
            processes: Some(processes),
            tree_memory,
            tree_memory_done: None,
            live,
            watch,
            messages,
            cpu_at_start,
            start,
            started,
            exited: None,
            placement,
            progress: Progress::Running,
        })
    }
}

impl Step {
    /// The PID of the step's first process.
    #[must_use]
    pub(crate) fn pid(&self) -> u32 {
        self.kept.pid.as_raw_nonzero().get().unsigned_abs()
    }

    /// What the user should know about the step's placement (see
    /// [`Prepared::notices`]).
    #[must_use]
    pub(crate) fn notices(&self) -> &[crate::Notice] {
        self.prepared.notices()
    }

    /// Kills the step: SIGKILL to every process of its cgroup
    /// (`cgroup.kill`, Linux 5.14) or to its first process; the rest of its
    /// tree is killed when that one has exited, as at any step's end.
    pub(crate) fn kill(&self) -> io::Result<()> {
        if let Some(cgroups) = &self.prepared.cgroups {
            let _ = std::fs::write(cgroups.get().leaf.join("cgroup.kill"), "1");
        }
        match self.kept.signal_main(Signal::KILL) {
            Err(e) if e.raw_os_error() == Some(libc_esrch()) => Ok(()),
            other => other,
        }
    }

    /// Freezes every process of the step: its cgroup's `cgroup.freeze`
    /// (cgroup v2, Linux 5.2), or SIGSTOP to each process of its tree.
    pub(crate) fn freeze(&self) -> io::Result<()> {
        self.set_frozen(true)
    }

    /// Thaws what [`Step::freeze`] froze.
    pub(crate) fn thaw(&self) -> io::Result<()> {
        self.set_frozen(false)
    }

    fn set_frozen(&self, frozen: bool) -> io::Result<()> {
        if let Some(cgroups) = &self.prepared.cgroups {
            let file = cgroups.get().leaf.join("cgroup.freeze");
            if file.exists() {
                return std::fs::write(file, if frozen { "1" } else { "0" });
            }
        }
        let signal = if frozen { Signal::STOP } else { Signal::CONT };
        let subreaper = self.kept.subreaper_pid().as_raw_nonzero().get();
        for pid in crate::tree::children::tree_of(subreaper).into_iter().skip(1) {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
        Ok(())
    }

    /// Takes every event its subreaper has ready, without blocking.
    fn take_events(&mut self) -> io::Result<()> {
        while self.progress != Progress::Done {
            let Some(event) = self.kept.try_event()? else { break };
            match self.reaper.absorb(event) {
                Progress::Running => {}
                Progress::MainExited => {
                    self.exited = Some(Instant::now());
                    self.progress = Progress::MainExited;
                    self.end_leftovers();
                }
                Progress::Done => self.progress = Progress::Done,
            }
        }
        Ok(())
    }

    /// Its first process has exited: the last reading of its processes,
    /// then the kill (or wait) of what is left.
    fn end_leftovers(&mut self) {
        // An empty tree or cgroup has nothing left to read (no round trip to
        // the listener's thread for its list of live ones).
        let emptied =
            self.kept.left_nothing()
                || self.prepared.cgroups.as_ref().is_some_and(|c| {
                    crate::cgroup::placement::populated(&c.get().leaf).is_ok_and(|populated| !populated)
                });
        if let Some(processes) = &mut self.processes
            && !emptied
        {
            processes.query_running();
        }
        self.tree_memory_done = self.tree_memory.take().and_then(crate::tree_memory::TreeMemorySampler::finish);
        self.kept.end(self.prepared.options.wait_all);
    }

    /// Waits for the step's end (blocking the calling thread), then as
    /// [`Prepared::run`]. Its piped streams are not read: take them first
    /// (or see [`Step::wait_with_output`]), or a command that fills a pipe
    /// waits for a reader forever.
    pub(crate) fn wait(self) -> Result<Finished, RunError> {
        self.wait_reading(None)
    }

    /// [`Step::wait`], reading `output`'s pipes as they fill meanwhile.
    pub(super) fn wait_reading(mut self, mut output: Option<&mut Collect>) -> Result<Finished, RunError> {
        let waited = (|| -> io::Result<()> {
            loop {
                if let Some(caught) = &self.prepared.caught {
                    caught.forward(&self.kept);
                }
                self.take_events()?;
                if self.progress == Progress::Done {
                    return Ok(());
                }
                if let Some(output) = output.as_deref_mut() {
                    output.drain()?;
                }
                let events = self.kept.events_fd();
                let mut fds = vec![rustix::event::PollFd::new(&events, rustix::event::PollFlags::IN)];
                let wake = self.prepared.caught.as_ref().map(crate::signals::Caught::wake_fd);
                if let Some(wake) = &wake {
                    fds.push(rustix::event::PollFd::new(wake, rustix::event::PollFlags::IN));
                }
                let pipes = output.as_deref().map(Collect::poll_fds).unwrap_or_default();
                fds.extend(pipes.iter().map(|pipe| rustix::event::PollFd::new(pipe, rustix::event::PollFlags::IN)));
                match rustix::event::poll(&mut fds, None) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        })();
        waited.map_err(|e| RunError::io("waiting for the step", &e))?;
        self.stop_listening();
        self.kill_cgroup_leftovers();
        let step_usage = self.prepared.step_recorder.take().map(Recorder::close_blocking);
        let enclosing_usage = self.prepared.enclosing_recorder.take().map(Recorder::close_blocking);
        if self.prepared.own_monitor {
            self.prepared.monitor.shutdown_blocking();
        }
        self.finish(step_usage, enclosing_usage)
    }

    /// The step's end as a future (any executor: it waits on the
    /// subreaper's pipe with `async-io`).
    async fn wait_async(mut self) -> Result<Finished, RunError> {
        let waited = async {
            let events = async_io::Async::new(dup(self.kept.events_fd())?)?;
            let wake = match &self.prepared.caught {
                Some(caught) => Some(async_io::Async::new(dup(caught.wake_fd())?)?),
                None => None,
            };
            loop {
                if let Some(caught) = &self.prepared.caught {
                    caught.forward(&self.kept);
                }
                self.take_events()?;
                if self.progress == Progress::Done {
                    return Ok::<(), io::Error>(());
                }
                match &wake {
                    Some(wake) => {
                        let either = futures::future::select(Box::pin(events.readable()), Box::pin(wake.readable()));
                        match either.await {
                            futures::future::Either::Left((ready, _)) | futures::future::Either::Right((ready, _)) => {
                                ready?;
                            }
                        }
                    }
                    None => events.readable().await?,
                }
            }
        };
        waited.await.map_err(|e| RunError::io("waiting for the step", &e))?;
        self.stop_listening();
        self.kill_cgroup_leftovers();
        let step_usage = match self.prepared.step_recorder.take() {
            Some(recorder) => Some(recorder.close().await),
            None => None,
        };
        let enclosing_usage = match self.prepared.enclosing_recorder.take() {
            Some(recorder) => Some(recorder.close().await),
            None => None,
        };
        if self.prepared.own_monitor {
            self.prepared.monitor.shutdown().await;
        }
        self.finish(step_usage, enclosing_usage)
    }

    /// Its processes are reaped: the listener reads the records queued
    /// for them while this thread kills what the cgroups still hold and
    /// takes the final samples ([`Step::finish`] takes its tracker).
    fn stop_listening(&mut self) {
        if let Some(processes) = &mut self.processes {
            processes.stop();
        }
    }

    /// Whatever is still in the step's cgroups once its subreaper is done
    /// (a process that left its tree but not its cgroup): killed, or with
    /// `wait_all` waited for.
    fn kill_cgroup_leftovers(&mut self) {
        // The subreaper found no process left once it reaped the first
        // (`Kept::left_nothing`): none of the step's is left to kill or wait
        // for, and its cgroups are not read again. A process moved into them
        // from elsewhere keeps them busy; their removal kills it
        // (`Owned::release`).
        if self.kept.left_nothing() {
            return;
        }
        let prepared = &self.prepared;
        if prepared.options.wait_all {
            if let Some(cgroups) = &prepared.cgroups
                && let Err(e) = placement::wait_unpopulated(&cgroups.get().leaf, None)
            {
                self.messages.push(format!("warning: waiting for the step's processes: {e}"));
            }
            return;
        }
        if let Some(cgroups) = &prepared.cgroups
            && let Err(e) = cgroups.get().kill_and_wait(KILL_TIMEOUT)
        {
            self.messages.push(format!("warning: killing what the step left behind: {e}"));
        }
        // Every process of the step was spawned into its v2 leaf too: once
        // that is empty, so are its v1 directories (a process moved out of
        // the leaf alone keeps them busy; their removal then kills it,
        // `Owned::release`). Read only without a v2 leaf.
        if prepared.cgroups.is_none()
            && let Some(v1) = &prepared.v1
            && let Err(e) = v1.get().kill_and_wait(KILL_TIMEOUT)
        {
            self.messages.push(format!("warning: killing what the step left behind in cgroup v1: {e}"));
        }
    }

    /// The run document, from the final samples.
    fn finish(
        mut self,
        step_usage: Option<StepUsage>,
        enclosing_usage: Option<StepUsage>,
    ) -> Result<Finished, RunError> {
        let mut messages = std::mem::take(&mut self.messages);
        let not_started = self.kept.failure();
        messages.extend(not_started.as_ref().map(RunError::line));
        let status = self.reaper.main_status().ok_or_else(|| {
            RunError::io("ending the step", io::Error::other("the step's first process was not reaped"))
        })?;
        let (exit, signal, code) = exit_code(status);
        let session = self.processes.take();
        let reaper = &self.reaper;
        // The step ended when its first process exited: the kill of its
        // leftovers is not its time.
        let ended = self.exited.unwrap_or_else(Instant::now);
        let wall = ended.duration_since(self.started).as_secs_f64();
        let end = self.start + ended.duration_since(self.started);
        let stepmon_cpu = own_cpu_seconds() - self.cpu_at_start;
        // The recordings are finalised: their streams have ended.
        if let Some(forwarding) = self.live.take() {
            let _ = forwarding.join();
        }
        let start = self.start;
        let mut tree = reaper.tree();
        let tree_memory = self.tree_memory_done.take();
        let events = self.watch.take().map(crate::watch::Watching::finish).unwrap_or_default();
        tree.memory = tree_memory.map(|(memory, _)| memory);
        let placement = self.placement;
        let exited = self.exited;
        let mut this = self.prepared;
        let cgroups = this.cgroups.take();
        let leaf = cgroups.as_ref().map(|c| c.get().leaf.clone());
        let scope_unit = cgroups.as_ref().and_then(|c| c.get().scope.as_ref().map(|s| s.unit.clone()));
        let (enabled, not_enabled) = cgroups.as_ref().map_or((Vec::new(), Vec::new()), |c| {
            (c.get().enabled.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>(), c.get().not_enabled.clone())
        });
        if let Some(warning) = cgroups.and_then(OwnedCgroups::release) {
            messages.push(warning);
        }
        let v1 = this.v1.take();
        let v1_dirs: Vec<String> =
            v1.iter().flat_map(|v| v.get().dirs.iter().map(|(_, d)| d.display().to_string())).collect();
        // (v1 controller, its directory) of the step.
        let v1_controllers: Vec<(String, String)> = v1
            .iter()
            .flat_map(|v| v.get().dirs.iter())
            .flat_map(|(h, d)| h.controllers.iter().map(move |c| (c.clone(), d.display().to_string())))
            .collect();
        if let Some(warning) = v1.and_then(OwnedV1::release) {
            messages.push(warning);
        }
        // After the cgroups are removed: the listener reads its last
        // records meanwhile (on its own thread, woken at the reap).
        let mut processes = session.map(Session::finish).unwrap_or_default();
        // Sampled records miss what lived between two samples; the rusage
        // of what the subreaper reaped holds it (with the descendants each waited for).
        if processes.source == Some(stepmon_model::processes::ProcessSource::Sampled) {
            processes.add_reaped(reaper.reaped(), reaper.reaped_not_kept());
        }

        let enclosing = this.enclosing.as_ref().zip(enclosing_usage.as_ref()).map(|(e, usage)| {
            let mut info = EnclosingCgroup::default();
            info.cgroup = e.dir.display().to_string();
            info.root = e.root;
            info.other_processes_at_start = e.others_at_start;
            info.stepmon_cpu_seconds = Some(stepmon_cpu);
            info.memory_peak_since_start = e.peak_since_start();
            info.cgroup_v1 = e.v1_dirs();
            info.memory_usage_at_start = e.memory_usage_at_start;
            info.memory_peak_at_start = e.memory_peak_at_start;
            info.memory_v1 = e.memory_v1;
            info.samples.clone_from(&usage.resource_usage.samples);
            info
        });
        // resourceUsage holds the step's own cgroup samples only; without a
        // step cgroup it keeps the machine's numbers (sysCPUStat, sysUsage),
        // which mean the same whatever the placement.
        let mut usage: StepUsage = match (step_usage, enclosing_usage) {
            (Some(usage), _) => usage,
            (None, Some(mut usage)) => {
                usage.resource_usage.samples.clear();
                usage
            }
            (None, None) => StepUsage::default(),
        };
        if leaf.is_none() && v1_dirs.is_empty() {
            usage.resource_usage.samples.clear();
        }
        let sources = ladder::choose(&Evidence {
            step: (leaf.is_some() || !v1_dirs.is_empty()).then_some(usage.resource_usage.samples.as_slice()),
            leaf: leaf.as_deref(),
            v2_controllers: &enabled,
            v1: &v1_controllers,
            enclosing: enclosing.as_ref(),
            tree: &tree,
            own_network: this.namespace.is_some(),
            scope: scope_unit.as_deref(),
            machine_pressure: usage.sys_usage.iter().any(|s| s.cpu_pressure.is_some()),
        });
        let (cpu_seconds, max_rss_bytes) = crate::own::own_usage();
        let mut collector = Collector::default();
        collector.cpu_seconds = cpu_seconds;
        collector.max_rss_bytes = max_rss_bytes;
        collector.samples = match &enclosing {
            Some(e) if leaf.is_none() && v1_dirs.is_empty() => e.samples.len(),
            _ => usage.resource_usage.samples.len(),
        };
        collector.sys_samples = usage.sys_usage.len();
        collector.tree_memory_cpu_seconds = tree_memory.map(|(_, cpu)| cpu);
        let mut info = RunInfo::default();
        info.command = this.options.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        info.name =
            Some(this.options.name.clone().unwrap_or_else(|| stepmon_model::labels::default_name(&info.command)));
        info.labels.clone_from(&this.options.labels);
        info.exit_code = exit;
        info.signal = signal;
        info.start = Some(start);
        info.end = Some(end);
        info.cgroup = leaf.as_ref().map(|l| l.display().to_string()).unwrap_or_default();
        info.controllers = enabled;
        info.cgroup_v1.clone_from(&v1_dirs);
        info.not_measured = not_measured(
            &sources,
            v1_controllers.iter().any(|(c, _)| c == "cpu"),
            &not_enabled,
            this.no_cgroup.as_deref(),
            enclosing.as_ref(),
        );
        info.controllers_not_enabled = not_enabled;
        info.host = host(this.location.as_ref(), &this.host);
        info.collector = collector;
        info.placement = match (&leaf, &this.no_cgroup) {
            (Some(leaf), _) if scope_unit.is_some() => format!(
                "its own transient systemd scope {} (cgroup {})",
                scope_unit.as_deref().unwrap_or_default(),
                leaf.display()
            ),
            (Some(leaf), _) => format!("its own cgroup {}", leaf.display()),
            (None, Some(reason)) if !v1_dirs.is_empty() => {
                format!("its own cgroups in the v1 hierarchies, no cgroup v2 ({reason})")
            }
            (None, Some(reason)) => format!("no cgroup of its own ({reason})"),
            (None, None) => String::new(),
        };
        info.sources = sources;
        info.process_tree = Some(tree);
        info.enclosing_cgroup = enclosing;
        info.processes = Some(processes);
        info.events = events;
        // The numbers a person reads first, from each group's rung; report's
        // verdicts and exports start from them.
        info.summary = stepmon_model::summary::summary_of(&usage, Some(&info), Some(wall));
        let document = RunDocument::new(usage, info);
        let mut cost = Cost::default();
        cost.placement_seconds = Some(placement.as_secs_f64());
        cost.collector_cpu_seconds = Some(stepmon_cpu);
        cost.exit_to_result_seconds = exited.map(|at| at.elapsed().as_secs_f64());
        let result = StepResult::of(&document, cost);
        Ok(Finished {
            result,
            document,
            exit_code: code,
            messages,
            stdout: Vec::new(),
            stderr: Vec::new(),
            not_started,
        })
    }
}

impl IntoFuture for Step {
    type Output = Result<Finished, RunError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Finished, RunError>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.wait_async())
    }
}

/// A second fd of `fd` (for a reactor to own).
fn dup(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<OwnedFd> {
    rustix::io::fcntl_dupfd_cloexec(fd, 0).map_err(Into::into)
}

const fn libc_esrch() -> i32 {
    rustix::io::Errno::SRCH.raw_os_error()
}

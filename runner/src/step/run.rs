//! Running a prepared step: spawn, wait, leftovers, the final samples,
//! cleanup, and the run document.

use std::time::Instant;

use jiff::Timestamp;
use stepmon_model::source::EnclosingCgroup;
use stepmon_model::{Collector, RunDocument, RunInfo};
use stepmon_sampler::Recorder;
use stepmon_sampler::model::StepUsage;

use super::document::{exit_code, host, own_cpu_seconds};
use super::notices::not_measured;
use super::owned::{OwnedCgroups, OwnedV1};
use super::{Finished, KILL_TIMEOUT, Prepared};
use crate::cgroup::placement::{self};
use crate::error::RunError;
use crate::ladder::{self, Evidence};
use crate::netns::HeldNamespace;
use crate::options::SampleOf;
use crate::spawn::{self, Spawned, Target};
use crate::tree::Reaper;

impl Prepared {
    /// Runs the step to its end, kills (or with `wait_all` waits for) what it
    /// leaves behind, takes the final samples, removes its cgroups and
    /// returns the run document. The step's failure is not an error: its
    /// exit status is in [`Finished::exit_code`].
    pub fn run(mut self) -> Result<Finished, RunError> {
        let mut messages = Vec::new();
        let mut reaper = Reaper::start().map_err(|e| RunError::io("cannot become the step's child subreaper", &e))?;
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
        let target = Target {
            v1_tasks: &v1_tasks,
            cgroup: self.cgroups.as_ref().map(|c| c.get().leaf.as_path()),
            netns: self.namespace.as_ref().map(HeldNamespace::as_fd),
            netns_path: netns_path.as_deref(),
        };
        // Listening before the spawn: the step's first fork is seen.
        let mut processes = crate::processes::Session::start(self.options.processes);
        let tree_memory = (!self.memory_cgroup())
            .then(|| crate::tree_memory::TreeMemorySampler::start(self.options.tree_memory_interval));
        let spawned = spawn::spawn(target, &self.options.command, self.options.spawn_mode)
            .map_err(|e| RunError::new(e.to_string()))?;
        let live = self.options.live.take().and_then(|tx| match (&self.step_recorder, &self.enclosing_recorder) {
            (Some(recorder), _) => crate::live::forward(recorder, SampleOf::Step, tx),
            (None, Some(recorder)) => crate::live::forward(recorder, SampleOf::Enclosing, tx),
            (None, None) => None,
        });
        let (exit, signal, code) = match spawned {
            Spawned::NotStarted(not) => {
                if self.options.spawn_mode != spawn::Mode::Auto {
                    messages.push("started the step with fork".to_owned());
                }
                messages.push(not.message);
                (Some(not.code), None, not.code)
            }
            Spawned::Running(mut step) => {
                if self.options.spawn_mode != spawn::Mode::Auto {
                    messages.push(format!("started the step with {}", step.way));
                }
                reaper.set_main(step.pid);
                processes.set_root(step.pid.as_raw_nonzero().get());
                let status = match &self.caught {
                    Some(caught) => caught.wait_forwarding(step.pid, &mut reaper),
                    None => reaper.wait_main(),
                }
                .map_err(|e| RunError::io("waiting for the step", &e))?;
                if let Some(message) = step.failure_message() {
                    messages.push(message);
                }
                exit_code(status)
            }
        };
        processes.query_running();
        let tree_memory = tree_memory.and_then(crate::tree_memory::TreeMemorySampler::finish);
        if self.options.wait_all {
            if let Some(cgroups) = &self.cgroups {
                placement::wait_unpopulated(&cgroups.get().leaf, None)
                    .map_err(|e| RunError::io("waiting for the step's processes", &e))?;
            }
            reaper.wait_all();
        } else {
            if let Some(cgroups) = &self.cgroups
                && let Err(e) = cgroups.get().kill_and_wait(KILL_TIMEOUT)
            {
                messages.push(format!("warning: killing what the step left behind: {e}"));
            }
            if let Some(v1) = &self.v1
                && let Err(e) = v1.get().kill_and_wait(KILL_TIMEOUT)
            {
                messages.push(format!("warning: killing what the step left behind in cgroup v1: {e}"));
            }
            reaper.kill_leftovers(KILL_TIMEOUT);
        }
        let mut processes = processes.finish();
        // Sampled records miss what lived between two samples; the rusage
        // of what stepmon reaped holds it (with the descendants each waited for).
        if processes.source == Some(stepmon_model::processes::ProcessSource::Sampled) {
            processes.add_reaped(reaper.reaped(), reaper.reaped_not_kept());
        }
        let wall = started.elapsed().as_secs_f64();
        let end = Timestamp::now();
        let stepmon_cpu = own_cpu_seconds() - cpu_at_start;

        let step_usage = self.step_recorder.take().map(Recorder::close_blocking);
        let enclosing_usage = self.enclosing_recorder.take().map(Recorder::close_blocking);
        self.monitor.shutdown_blocking();
        // The recordings are finalised: their streams have ended.
        if let Some(forwarding) = live {
            let _ = forwarding.join();
        }
        let cgroups = self.cgroups.take();
        let leaf = cgroups.as_ref().map(|c| c.get().leaf.clone());
        let scope_unit = cgroups.as_ref().and_then(|c| c.get().scope.as_ref().map(|s| s.unit.clone()));
        let (enabled, not_enabled) = cgroups.as_ref().map_or((Vec::new(), Vec::new()), |c| {
            (c.get().enabled.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>(), c.get().not_enabled.clone())
        });
        if let Some(warning) = cgroups.and_then(OwnedCgroups::release) {
            messages.push(warning);
        }
        let v1 = self.v1.take();
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

        let enclosing = self.enclosing.as_ref().zip(enclosing_usage.as_ref()).map(|(e, usage)| {
            let mut info = EnclosingCgroup::default();
            info.cgroup = e.dir.display().to_string();
            info.root = e.root;
            info.other_processes_at_start = e.others_at_start;
            info.stepmon_cpu_seconds = Some(stepmon_cpu);
            info.memory_peak_since_start = e.peak_since_start();
            info.cgroup_v1 = e.v1_dirs();
            info.memory_usage_at_start = e.memory_usage_at_start;
            info.memory_peak_at_start = e.memory_peak_at_start;
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
        let mut tree = reaper.tree();
        tree.memory = tree_memory.map(|(memory, _)| memory);
        let sources = ladder::choose(&Evidence {
            step: (leaf.is_some() || !v1_dirs.is_empty()).then_some(usage.resource_usage.samples.as_slice()),
            leaf: leaf.as_deref(),
            v2_controllers: &enabled,
            v1: &v1_controllers,
            enclosing: enclosing.as_ref(),
            tree: &tree,
            own_network: self.namespace.is_some(),
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
        info.command = self.options.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        info.name =
            Some(self.options.name.clone().unwrap_or_else(|| stepmon_model::labels::default_name(&info.command)));
        info.labels.clone_from(&self.options.labels);
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
            self.no_cgroup.as_deref(),
            enclosing.as_ref(),
        );
        info.controllers_not_enabled = not_enabled;
        info.host = host(self.location.as_ref());
        info.collector = collector;
        info.placement = match (&leaf, &self.no_cgroup) {
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
        info.summary.wall_seconds = Some(wall);
        let document = RunDocument::new(usage, info);
        Ok(Finished { document, exit_code: code, messages })
    }
}

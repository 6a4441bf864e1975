//! What a step says about itself as OTLP attributes: the CI/CD semantic
//! conventions' task attributes
//! (<https://opentelemetry.io/docs/specs/semconv/registry/attributes/cicd/>,
//! status Development), the process' exit code, and the usage and verdicts
//! under `stepmon.`. A number that is not known is left out, never sent
//! as zero.

use super::proto::common::{AnyValue, ArrayValue, KeyValue, Value};
use stepmon_model::labels::CiContext;
use stepmon_report::step::{Origin, Step};

/// `cicd.pipeline.task.run.result`: `success`, `failure` or `cancellation`
/// (stopped by SIGINT, SIGTERM or SIGHUP: someone cancelled the job);
/// `None` when the end is not known (a BuildKit step).
#[must_use]
pub fn result(step: &Step) -> Option<&'static str> {
    let run = step.run.as_ref()?;
    match (run.exit_code, run.signal) {
        (_, Some(1 | 2 | 15)) => Some("cancellation"),
        (_, Some(_)) => Some("failure"),
        (Some(0), None) => Some("success"),
        (Some(_), None) => Some("failure"),
        (None, None) => None,
    }
}

/// `error.type` of a failed step: the signal (`SIGKILL`) or the exit code
/// (`2`), few distinct values as the convention asks.
#[must_use]
pub fn error_type(step: &Step) -> Option<String> {
    let run = step.run.as_ref()?;
    match (run.exit_code, run.signal) {
        (_, Some(signal)) => Some(signal_name(signal)),
        (Some(code), None) if code != 0 => Some(code.to_string()),
        _ => None,
    }
}

/// `SIGKILL` for 9: the Linux numbers of signal(7).
fn signal_name(signal: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(signal)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("signal {signal}"), |name| (*name).to_owned())
}

/// Attributes under construction: absent values are skipped.
#[derive(Default)]
pub(crate) struct Attributes(pub(crate) Vec<KeyValue>);

impl Attributes {
    pub(crate) fn text(&mut self, key: &str, value: impl Into<String>) {
        self.0.push(KeyValue::new(key, Value::StringValue(value.into())));
    }

    pub(crate) fn maybe_text(&mut self, key: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.text(key, v);
        }
    }

    pub(crate) fn int(&mut self, key: &str, value: Option<u64>) {
        if let Some(v) = value.and_then(|v| i64::try_from(v).ok()) {
            self.0.push(KeyValue::new(key, Value::IntValue(v)));
        }
    }

    pub(crate) fn float(&mut self, key: &str, value: Option<f64>) {
        if let Some(v) = value.filter(|v| v.is_finite()) {
            self.0.push(KeyValue::new(key, Value::DoubleValue(v)));
        }
    }

    pub(crate) fn texts(&mut self, key: &str, values: impl IntoIterator<Item = String>) {
        let values: Vec<AnyValue> =
            values.into_iter().map(|v| AnyValue { value: Some(Value::StringValue(v)) }).collect();
        self.0.push(KeyValue::new(key, Value::ArrayValue(ArrayValue { values })));
    }
}

/// The CI context as resource attributes: the pipeline (the CI/CD
/// `cicd.pipeline` entity), this run of it (`cicd.pipeline.run`) and the
/// worker; the provider and job under `stepmon.ci.`, which the
/// conventions have no name for.
pub(crate) fn ci(ci: &CiContext, out: &mut Attributes) {
    out.maybe_text("cicd.pipeline.name", ci.pipeline.as_deref());
    out.maybe_text("cicd.pipeline.run.id", ci.run_id.as_deref());
    out.maybe_text("cicd.pipeline.run.url.full", ci.url.as_deref());
    out.maybe_text("cicd.worker.name", ci.runner.as_deref());
    out.text("stepmon.ci.provider", ci.provider.clone());
    out.maybe_text("stepmon.ci.job", ci.job.as_deref());
    out.maybe_text("stepmon.ci.job_id", ci.job_id.as_deref());
    out.maybe_text("stepmon.ci.attempt", ci.attempt.as_deref());
}

/// `--label`s that give a CI/CD task attribute stepmon cannot know, and
/// the attribute: `--label task_type=build` is `cicd.pipeline.task.type`
/// (the convention's values: `build`, `test`, `deploy`). Label names are
/// Prometheus label names (no dots), hence the mapping.
pub const TASK_LABELS: [(&str, &str); 1] = [("task_type", "cicd.pipeline.task.type")];

/// The step's identity, also on each of its metric points: its task name
/// and its `--label`s as `stepmon.label.<key>`, those of [`TASK_LABELS`]
/// as their attribute.
pub(crate) fn identity(step: &Step, out: &mut Attributes) {
    out.text("cicd.pipeline.task.name", step.name.clone());
    for label in step.run.iter().flat_map(|r| &r.labels) {
        match TASK_LABELS.iter().find(|(key, _)| *key == label.key) {
            Some((_, attribute)) => out.text(attribute, label.value.clone()),
            None => out.text(&format!("stepmon.label.{}", label.key), label.value.clone()),
        }
    }
}

/// A serde enum's name (`cpu`, `busy`): what the JSON export calls it.
fn class_name(value: &impl serde::Serialize) -> Option<String> {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned))
}

/// Every attribute of the step's span; `run_id` is its
/// `cicd.pipeline.task.run.id`.
pub(crate) fn span(step: &Step, run_id: String) -> Vec<KeyValue> {
    let mut out = Attributes::default();
    identity(step, &mut out);
    out.text("cicd.pipeline.task.run.id", run_id);
    out.maybe_text("cicd.pipeline.task.run.result", result(step));
    out.maybe_text("error.type", error_type(step).as_deref());
    out.text("stepmon.origin", step.origin.name());
    if let Origin::BuildKit { step_id, digest } = &step.origin {
        out.text("stepmon.buildkit.step_id", step_id.clone());
        out.maybe_text("stepmon.buildkit.digest", digest.as_deref());
    }
    if let Some(run) = &step.run {
        if let Some(code) = run.exit_code {
            out.int("process.exit.code", u64::try_from(code).ok());
        }
        if !run.command.is_empty() {
            out.texts("process.command_args", run.command.iter().cloned());
        }
    }
    let s = &step.summary;
    out.float("stepmon.wall.seconds", step.wall_seconds);
    out.maybe_text("stepmon.wall.source", class_name(&step.wall_source).as_deref());
    out.float("stepmon.cpu.seconds", s.cpu.usage_seconds);
    out.float("stepmon.cpu.user_seconds", s.cpu.user_seconds);
    out.float("stepmon.cpu.system_seconds", s.cpu.system_seconds);
    out.float("stepmon.cpu.average_cores", s.cpu.average_cores);
    out.float("stepmon.cpu.throttled_seconds", s.cpu.throttled_seconds);
    out.int("stepmon.memory.peak_bytes", s.memory.peak_bytes);
    out.int("stepmon.memory.oom_kills", s.memory.oom_kills);
    out.int("stepmon.io.read_bytes", s.io.read_bytes);
    out.int("stepmon.io.write_bytes", s.io.write_bytes);
    out.int("stepmon.pids.peak", s.pids_peak);
    out.float("stepmon.stall.cpu.seconds", s.cpu_stall.some_seconds);
    out.float("stepmon.stall.memory.seconds", s.memory_stall.some_seconds);
    out.float("stepmon.stall.io.seconds", s.io_stall.some_seconds);
    out.int("stepmon.net.rx_bytes", s.net_rx_bytes);
    out.int("stepmon.net.tx_bytes", s.net_tx_bytes);
    out.float("stepmon.machine.cpu_busy_share", s.machine.cpu_busy_share);
    let verdicts = step.verdicts();
    out.maybe_text("stepmon.verdict.bottleneck", class_name(&verdicts.bottleneck.class).as_deref());
    out.maybe_text("stepmon.verdict.machine", class_name(&verdicts.machine.class).as_deref());
    out.maybe_text("stepmon.verdict.memory", class_name(&verdicts.memory.class).as_deref());
    if let Some(throttled) = verdicts.throttling.throttled {
        out.0.push(KeyValue::new("stepmon.verdict.throttled", Value::BoolValue(throttled)));
    }
    out.texts("stepmon.verdicts", verdicts.sentences().into_iter().map(str::to_owned));
    out.0
}

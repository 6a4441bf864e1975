//! [`Step`]: one recorded step in the form every verdict, export and diff
//! reads — a `stepmon run` document or one step of a BuildKit build.

use jiff::Timestamp;
use serde::Serialize;
use stepmon_model::sample::{StepSample, StepUsage, UsageSummary};

use stepmon_model::document::{RunDocument, RunInfo};
use stepmon_model::labels::quote;
use stepmon_model::source::Sources;
use stepmon_model::summary::Baseline;
use stepmon_model::verdict::PeakProcess;

/// Where a step was recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
#[non_exhaustive]
pub enum Origin {
    /// `stepmon run`.
    StepmonRun,
    /// An exec step of a BuildKit build, from its provenance attestation.
    #[serde(rename_all = "camelCase")]
    BuildKit {
        /// The step's id in the provenance's build config (`step3`).
        step_id: String,
        /// The LLB op digest that `digestMapping` maps to the step, when given.
        digest: Option<String>,
    },
}

impl Origin {
    /// Its name in the JSON (`stepmonRun`, `buildKit`), as the exports
    /// label it.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Origin::StepmonRun => "stepmonRun",
            Origin::BuildKit { .. } => "buildKit",
        }
    }
}

/// How the step's wall time is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum WallSource {
    /// Measured by stepmon (start to end of the step).
    Measured,
    /// Estimated from sample timestamps (BuildKit records no start or end:
    /// its first periodic sample comes about 2 s into the step).
    EstimatedFromSamples,
    /// From the BuildKit vertex the step belongs to (`started` to
    /// `completed` in the build's status stream).
    Vertex,
    /// Not known (e.g. a BuildKit step with only its final sample).
    Unknown,
}

impl WallSource {
    /// Its name in the JSON (`measured`, `estimatedFromSamples`, `vertex`,
    /// `unknown`), as the exports label it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            WallSource::Measured => "measured",
            WallSource::EstimatedFromSamples => "estimatedFromSamples",
            WallSource::Vertex => "vertex",
            WallSource::Unknown => "unknown",
        }
    }
}

/// Why a BuildKit step with a single sample has no pids or memory-split
/// numbers: BuildKit takes its final sample after the step's container
/// exited (moby/buildkit `executor/resources` `monitor.Close`), when the
/// cumulative counters (CPU, IO, stall time, `memory.peak`) are final but
/// the live gauges (`pids.current`, `memory.stat` anon/file) read an empty
/// cgroup.
pub const POST_EXIT_SAMPLE: &str =
    "BuildKit's only sample was taken after the step's container exited: live gauges read an empty cgroup";

/// One recorded step and what is known about it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Step {
    /// A name for people and the fleet's `step` label: the run's name
    /// (`stepmon run --name`, else the program's base name), the command of
    /// a run recorded before runs had names; for a BuildKit step its RUN
    /// command when the provenance has it, else its id.
    pub name: String,
    /// Where it was recorded.
    pub origin: Origin,
    /// The step's samples and the machine's samples.
    pub usage: StepUsage,
    /// When the step started, when known.
    pub start: Option<Timestamp>,
    /// When it ended, when known.
    pub end: Option<Timestamp>,
    /// Wall time, s, when known.
    pub wall_seconds: Option<f64>,
    /// How `wall_seconds` is known.
    pub wall_source: WallSource,
    /// Totals, peaks and shares over the step.
    pub summary: UsageSummary,
    /// What stepmon knows about its own run (exit status, host, collector);
    /// `None` for imported steps.
    pub run: Option<RunInfo>,
    /// Where each field group came from; empty for imported steps and
    /// documents of older versions (the step's own cgroup throughout).
    pub sources: Sources,
    /// Its process with the largest peak RSS: its document's per-process
    /// records', or what a job record's brief step end kept of them
    /// ([`stepmon_model::brief::StepBrief::largest_process`]).
    pub largest_process: Option<PeakProcess>,
}

impl Step {
    /// The step of a `stepmon run` document. Its summary is recomputed from
    /// the samples and the sources (the document's copy may come from an
    /// older version). A step without a cgroup of its own has the enclosing
    /// cgroup's samples as its series, labelled by [`Step::sources`].
    #[must_use]
    pub fn from_run(document: &RunDocument) -> Step {
        Step::from_run_document(document.clone())
    }

    /// [`Step::from_run`], taking the document rather than copying it.
    #[must_use]
    pub fn from_run_document(document: RunDocument) -> Step {
        let RunDocument { resource_usage, sys_usage, stepmon: run } = document;
        let mut usage = StepUsage::default();
        (usage.resource_usage, usage.sys_usage) = (resource_usage, sys_usage);
        let enclosing = run.as_ref().and_then(|r| r.enclosing_cgroup.as_ref());
        // The series: the step's samples, else the enclosing cgroup's.
        let series = match enclosing {
            Some(e) if usage.resource_usage.samples.is_empty() => &e.samples,
            _ => &usage.resource_usage.samples,
        };
        let (start, end) = run.as_ref().map_or((None, None), |r| (r.start, r.end));
        // The run's own wall time is measured on the monotonic clock; the
        // timestamps are the fallback.
        let measured = run.as_ref().and_then(|r| r.summary.wall_seconds).filter(|w| *w > 0.0).or(match (start, end) {
            (Some(start), Some(end)) => Some(end.duration_since(start).as_secs_f64().max(0.0)),
            _ => None,
        });
        let (wall_seconds, wall_source) = match measured {
            Some(wall) => (Some(wall), WallSource::Measured),
            None => estimate_wall(series, Baseline::FirstSample),
        };
        let name = match run.as_ref() {
            Some(RunInfo { name: Some(name), .. }) => name.clone(),
            Some(r) if !r.command.is_empty() => shown_command(&r.command),
            _ => "step".to_owned(),
        };
        let summary = stepmon_model::summary::summary_of(&usage, run.as_ref(), wall_seconds);
        if usage.resource_usage.samples.is_empty()
            && let Some(enclosing) = run.as_ref().and_then(|r| r.enclosing_cgroup.as_ref())
        {
            usage.resource_usage.samples.clone_from(&enclosing.samples);
        }
        let sources = run.as_ref().map(|r| r.sources.clone()).unwrap_or_default();
        let largest_process = run.as_ref().and_then(|r| r.processes.as_ref()).and_then(PeakProcess::of);
        Step {
            name,
            origin: Origin::StepmonRun,
            usage,
            start,
            end,
            wall_seconds,
            wall_source,
            summary,
            run,
            sources,
            largest_process,
        }
    }

    /// A step recorded by BuildKit: counters start at zero (the cgroup was
    /// created for the step) and the wall time is estimated from the samples.
    #[must_use]
    pub fn from_buildkit(name: String, step_id: String, digest: Option<String>, usage: StepUsage) -> Step {
        let (wall_seconds, wall_source) = estimate_wall(&usage.resource_usage.samples, Baseline::Zero);
        let end = usage.resource_usage.samples.last().map(|s| s.timestamp);
        let start = match (end, wall_seconds) {
            (Some(end), Some(wall)) => {
                jiff::SignedDuration::try_from_secs_f64(wall).ok().and_then(|d| end.checked_sub(d).ok())
            }
            _ => None,
        };
        let summary = buildkit_summary(&usage, wall_seconds);
        Step {
            name,
            origin: Origin::BuildKit { step_id, digest },
            usage,
            start,
            end,
            wall_seconds,
            wall_source,
            summary,
            run: None,
            sources: Sources::default(),
            largest_process: None,
        }
    }

    /// The step with its start and end from the BuildKit vertex it belongs
    /// to: the wall time, the shares and the verdicts become known; the
    /// trace draws it where it ran. Either end missing leaves the step as
    /// it was.
    #[must_use]
    pub fn with_vertex_timing(mut self, started: Option<Timestamp>, completed: Option<Timestamp>) -> Step {
        let (Some(start), Some(end)) = (started, completed) else { return self };
        let wall = end.duration_since(start).as_secs_f64().max(0.0);
        self.start = Some(start);
        self.end = Some(end);
        self.wall_seconds = Some(wall);
        self.wall_source = WallSource::Vertex;
        self.summary = buildkit_summary(&self.usage, Some(wall));
        self
    }

    /// Whether the step's only sample is BuildKit's final one, taken after
    /// its container exited ([`POST_EXIT_SAMPLE`]): its live gauges (pids,
    /// memory in use, anon/file) read an empty cgroup and are no reading of
    /// the step.
    #[must_use]
    pub fn only_post_exit_sample(&self) -> bool {
        matches!(self.origin, Origin::BuildKit { .. }) && self.usage.resource_usage.samples.len() == 1
    }

    /// The command it ran, as given (a `stepmon run`'s argv); empty when
    /// not known (imported steps, whose name is their command).
    #[must_use]
    pub fn command(&self) -> &[String] {
        self.run.as_ref().map_or(&[], |r| r.command.as_slice())
    }

    /// Its name where steps are listed: [`label`] of its name and command,
    /// so that two steps of one name (`make test`, `make lint`) stay apart.
    ///
    /// ```
    /// use stepmon_report::step::label;
    /// let exit = |code: &str| ["sh".to_owned(), "-c".to_owned(), format!("exit {code}")];
    /// assert_eq!(label("sh", &exit("3")), "sh (sh -c 'exit 3')");
    /// assert_eq!(label("make", &["make".to_owned()]), "make");
    /// ```
    #[must_use]
    pub fn label(&self) -> String {
        label(&self.name, self.command())
    }

    /// Where the step's time axis starts: its start, else its first sample.
    #[must_use]
    pub fn time_origin(&self) -> Option<Timestamp> {
        self.start.or_else(|| self.usage.resource_usage.samples.first().map(|s| s.timestamp))
    }

    /// When the first reading that `has` accepts was taken, seconds since
    /// [`Step::time_origin`]: for a BuildKit step with a known start, the
    /// start itself (its counters were zero when its cgroup was created),
    /// else the first sample holding it — where [`crate::series`] starts
    /// the first interval of a rate.
    #[must_use]
    pub fn first_reading(&self, has: impl Fn(&stepmon_model::sample::StepSample) -> bool) -> Option<f64> {
        if matches!(self.origin, Origin::BuildKit { .. }) && self.start.is_some() {
            return Some(0.0);
        }
        self.usage.resource_usage.samples.iter().find(|s| has(s)).map(|s| self.offset_seconds(s.timestamp))
    }

    /// Seconds from [`Step::time_origin`] to `t`.
    #[must_use]
    pub fn offset_seconds(&self, t: Timestamp) -> f64 {
        self.time_origin().map_or(0.0, |o| t.duration_since(o).as_secs_f64())
    }
}

/// BuildKit's minimum sampling interval: its first periodic sample comes this
/// long after the step started (moby/buildkit
/// `executor/resources/sampler.go`; `docs/data-model.md`, "When samples are
/// taken").
pub const BUILDKIT_FIRST_SAMPLE_SECONDS: f64 = 2.0;

/// The summary of a BuildKit step; a single (post-exit) sample gives no
/// pids peak and no anon/file split ([`POST_EXIT_SAMPLE`]), not zeros.
fn buildkit_summary(usage: &StepUsage, wall_seconds: Option<f64>) -> UsageSummary {
    let mut summary = stepmon_model::summary::with_baseline(usage, wall_seconds, Baseline::Zero);
    if usage.resource_usage.samples.len() == 1 {
        summary.pids_peak = None;
        summary.memory.anon_at_peak_bytes = None;
        summary.memory.file_at_peak_bytes = None;
    }
    summary
}

fn estimate_wall(samples: &[StepSample], baseline: Baseline) -> (Option<f64>, WallSource) {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else { return (None, WallSource::Unknown) };
    if samples.len() < 2 {
        return (None, WallSource::Unknown);
    }
    let span = last.timestamp.duration_since(first.timestamp).as_secs_f64().max(0.0);
    let lead = if baseline == Baseline::Zero { BUILDKIT_FIRST_SAMPLE_SECONDS } else { 0.0 };
    (Some(span + lead), WallSource::EstimatedFromSamples)
}

/// Characters of the command in a [`label`]: enough for a program and its
/// first arguments, short enough for a table's step column.
pub const LABEL_COMMAND_CHARS: usize = 40;

/// A step's `name` with a short form of its `command` in parentheses
/// (quoted as [`quote_command`], cut to [`LABEL_COMMAND_CHARS`] with `…`),
/// or the name alone when the command is unknown or is the name (`make`
/// run as `make`, a step named by its command).
#[must_use]
pub fn label(name: &str, command: &[String]) -> String {
    let quoted = quote_command(command);
    if command.is_empty() || quoted == name || command.join(" ") == name {
        return name.to_owned();
    }
    format!("{name} ({})", shorten(&quoted, LABEL_COMMAND_CHARS))
}

/// `text` in at most `max` characters, the elision marked ([`elide_to`]).
fn shorten(text: &str, max: usize) -> String {
    elide_to(text, max).into_owned()
}

/// A command line as one line for people: arguments that are not plain
/// words are quoted shell-style, control characters escaped. Whole: what
/// people are shown is [`shown_command`].
#[must_use]
pub fn quote_command(args: &[String]) -> String {
    args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

/// The most characters of a command line or a step's name that people are
/// shown (the summary's first line, the text, Markdown and HTML reports,
/// chart titles): a command of 100,000 arguments is one line, not 600 KB.
/// The JSON keeps the whole argv.
pub const SHOWN_CHARS: usize = 200;

/// [`quote_command`] of `args`, [`elide`]d.
#[must_use]
pub fn shown_command(args: &[String]) -> String {
    elide(&quote_command(args)).into_owned()
}

/// `text` for people, in at most [`SHOWN_CHARS`] characters ([`elide_to`]).
#[must_use]
pub fn elide(text: &str) -> std::borrow::Cow<'_, str> {
    elide_to(text, SHOWN_CHARS)
}

/// `text` in at most `max` characters: whole when it fits, else its first
/// characters followed by the elision mark `… (+N chars)` saying how many
/// were left out (a bare `…` where `max` has no room for the count).
#[must_use]
pub fn elide_to(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    // A UTF-8 string has at least as many bytes as characters.
    if text.len() <= max {
        return text.into();
    }
    let total = text.chars().count();
    if total <= max {
        return text.into();
    }
    // " (+N chars)" has at most this many characters, N being below `total`.
    let count_mark = " (+ chars)".len() + total.to_string().len();
    let (keep, counted) =
        if max >= 4 * (count_mark + 1) { (max - count_mark - 1, true) } else { (max.saturating_sub(1), false) };
    let mut out: String = text.chars().take(keep).collect();
    out.push('…');
    if counted {
        out.push_str(&format!(" (+{} chars)", total - keep));
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_elided_to_its_bound_with_the_elision_marked() {
        assert_eq!(elide("make -j8"), "make -j8");
        let args: Vec<String> =
            std::iter::once("true".to_owned()).chain((1..=100_000).map(|n| n.to_string())).collect();
        let whole = quote_command(&args);
        let shown = shown_command(&args);
        assert_eq!(shown.chars().count(), SHOWN_CHARS, "{shown}");
        let left = whole.chars().count() - (SHOWN_CHARS - " (+588894 chars)".len() - 1);
        assert!(shown.starts_with("true 1 2 3 ") && shown.ends_with(&format!("… (+{left} chars)")), "{shown}");
        assert!(whole.starts_with(shown.split('…').next().unwrap()));
        // Exactly at the bound: whole; one more: elided; multi-byte characters counted as one.
        let at = "é".repeat(SHOWN_CHARS);
        assert_eq!(elide(&at), at.as_str());
        let over = "é".repeat(SHOWN_CHARS + 1);
        assert!(elide(&over).chars().count() <= SHOWN_CHARS && elide(&over).ends_with("… (+15 chars)"));
        // No room for the count: a bare mark.
        assert_eq!(elide_to("abcdefghij", 5), "abcd…");
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("make"), "make");
        assert_eq!(quote("-j8"), "-j8");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("line\nbreak"), "'line\\nbreak'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote_command(&["sh".into(), "-c".into(), "exit 7".into()]), "sh -c 'exit 7'");
    }

    #[test]
    fn labels_tell_steps_of_one_name_apart() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(label("make", &args(&["make", "test"])), "make (make test)");
        assert_ne!(label("make", &args(&["make", "test"])), label("make", &args(&["make", "lint"])));
        assert_eq!(label("make", &args(&["make"])), "make");
        assert_eq!(label("build", &[]), "build");
        let long = args(&["cc", "-O2", "-Wall", "-Wextra", "-o", "very/long/output/path", "main.c"]);
        let shown = label("cc", &long);
        assert!(shown.starts_with("cc (cc -O2 -Wall -Wextra -o very/long/"), "{shown}");
        assert!(shown.ends_with("…)"), "{shown}");
        assert_eq!(shown.chars().count(), "cc ()".len() + LABEL_COMMAND_CHARS);
        // A step named by its command (a document without a name).
        assert_eq!(label("a b", &args(&["a b"])), "a b");
        assert_eq!(label("sh -c 'exit 7'", &args(&["sh", "-c", "exit 7"])), "sh -c 'exit 7'");
    }
}

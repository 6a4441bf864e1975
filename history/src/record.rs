//! One run of one step as the store keeps it: what makes runs comparable
//! (the key), when and at which commit it ran, whether its machine was
//! busy, and its measures.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use stepmon_model::verdict::MachineLoad;
use stepmon_report::Step;

use crate::metric::{Measure, measures_of};

/// What two runs must share to be compared: the step's name, its labels,
/// the repository, the CI job and the runner class. The branch is not part
/// of it: `check --branch main` compares with main's runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunKey {
    /// The step's name (`--name`, else the run's name).
    pub step: String,
    /// Its labels, sorted by key, as `key=value` pairs.
    pub labels: Vec<(String, String)>,
    /// The repository (`owner/name`), empty when unknown.
    pub repository: String,
    /// The CI job, empty when unknown.
    pub job: String,
    /// The class of machine it ran on (`Linux-X64`, `ubuntu-24.04-4core`),
    /// empty when unknown: runs of different classes are never compared.
    pub runner_class: String,
}

impl RunKey {
    /// The labels as one text, `k=v,k=v` (the store's `labels` column).
    #[must_use]
    pub fn labels_text(&self) -> String {
        self.labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
    }

    /// The labels of [`RunKey::labels_text`]'s text. Label keys have no `,`
    /// or `=` (`--label` refuses them); a value's `,` is told from the
    /// separator by what follows it (a `key=`).
    #[must_use]
    pub fn labels_of_text(text: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for part in text.split(',').filter(|p| !p.is_empty()) {
            match (part.split_once('='), out.last_mut()) {
                (Some((k, v)), _) if !k.is_empty() => out.push((k.to_owned(), v.to_owned())),
                (_, Some(last)) => {
                    last.1.push(',');
                    last.1.push_str(part);
                }
                (_, None) => out.push((part.to_owned(), String::new())),
            }
        }
        out
    }
}

/// Whether the machine was busy with other work while the run ran
/// (stepmon-report's machine verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Machine {
    /// Other work, steal and CPU pressure below their thresholds.
    Quiet,
    /// The machine was busy: the run's wall, CPU and stall times are left
    /// out of baselines.
    Busy,
    /// Not known (e.g. a BuildKit step).
    Unknown,
}

impl Machine {
    /// Its name in the store and in reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Machine::Quiet => "quiet",
            Machine::Busy => "busy",
            Machine::Unknown => "unknown",
        }
    }

    /// The machine of its stored name.
    #[must_use]
    pub fn of_name(name: &str) -> Option<Machine> {
        [Machine::Quiet, Machine::Busy, Machine::Unknown].into_iter().find(|m| m.name() == name)
    }

    fn of_step(step: &Step) -> Machine {
        match step.verdicts().machine.class {
            MachineLoad::Quiet => Machine::Quiet,
            MachineLoad::Busy => Machine::Busy,
            _ => Machine::Unknown,
        }
    }
}

/// Where a run ran, beyond the step itself: what the caller knows (command
/// line, CI environment). Empty fields are taken from the run's own
/// document where it has them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The step's name instead of the run's.
    pub name: Option<String>,
    /// Labels added to the run's own (same key: this one wins).
    pub labels: Vec<(String, String)>,
    /// The repository.
    pub repository: Option<String>,
    /// The branch.
    pub branch: Option<String>,
    /// The CI job.
    pub job: Option<String>,
    /// The runner class.
    pub runner_class: Option<String>,
    /// The commit.
    pub commit: Option<String>,
}

impl Context {
    /// What the CI environment says, read through `var`
    /// (`|k| std::env::var(k).ok()`): the commit (`GITHUB_SHA`,
    /// `CI_COMMIT_SHA`), the branch (`GITHUB_HEAD_REF` of a pull request,
    /// else `GITHUB_REF_NAME`; `CI_COMMIT_REF_NAME`), the repository
    /// (`GITHUB_REPOSITORY`, `CI_PROJECT_PATH`), the job (`GITHUB_JOB`,
    /// `CI_JOB_NAME`) and the runner class (`STEPMON_RUNNER_CLASS`, else
    /// GitHub's `RUNNER_OS-RUNNER_ARCH`).
    #[must_use]
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Context {
        let get = |name: &str| var(name).filter(|v| !v.is_empty());
        let runner = match (get("RUNNER_OS"), get("RUNNER_ARCH")) {
            (Some(os), Some(arch)) => Some(format!("{os}-{arch}")),
            _ => None,
        };
        Context {
            name: None,
            labels: Vec::new(),
            repository: get("GITHUB_REPOSITORY").or_else(|| get("CI_PROJECT_PATH")),
            branch: get("GITHUB_HEAD_REF").or_else(|| get("GITHUB_REF_NAME")).or_else(|| get("CI_COMMIT_REF_NAME")),
            job: get("GITHUB_JOB").or_else(|| get("CI_JOB_NAME")),
            runner_class: get("STEPMON_RUNNER_CLASS").or(runner),
            commit: get("GITHUB_SHA").or_else(|| get("CI_COMMIT_SHA")),
        }
    }

    /// `self` with the fields it lacks taken from `other` (the command
    /// line over the environment).
    #[must_use]
    pub fn or(self, other: Context) -> Context {
        let mut labels = other.labels;
        labels.retain(|(k, _)| !self.labels.iter().any(|(key, _)| key == k));
        labels.extend(self.labels);
        Context {
            name: self.name.or(other.name),
            labels,
            repository: self.repository.or(other.repository),
            branch: self.branch.or(other.branch),
            job: self.job.or(other.job),
            runner_class: self.runner_class.or(other.runner_class),
            commit: self.commit.or(other.commit),
        }
    }
}

/// One run of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// What makes runs comparable.
    pub key: RunKey,
    /// The branch, when known.
    pub branch: Option<String>,
    /// When it ran (its start; else its end; else when it was added).
    pub time: Timestamp,
    /// The commit, when known.
    pub commit: Option<String>,
    /// Whether its machine was busy.
    pub machine: Machine,
    /// What it measured.
    pub measures: Vec<Measure>,
    /// The step's name, start, end and measures as one line of JSON: the
    /// same run added twice is stored once. The identity itself rather than
    /// a digest of it: exact, with no hash to compute or to link.
    pub content_key: String,
}

impl RunRecord {
    /// The record of `step` in `context`.
    ///
    /// ```
    /// use stepmon_history::{Context, RunRecord};
    /// use stepmon_model::document::RunDocument;
    /// use stepmon_report::Step;
    /// let json = r#"{"resourceUsage": {"samples": []},
    ///   "stepmon": {"command": ["make"], "name": "build", "labels": [{"key": "team", "value": "infra"}],
    ///     "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
    /// let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
    /// let context = Context { commit: Some("abc123".into()), ..Context::default() };
    /// let record = RunRecord::of_step(&step, &context);
    /// assert_eq!(record.key.step, "build");
    /// assert_eq!(record.key.labels, [("team".to_owned(), "infra".to_owned())]);
    /// assert_eq!(record.commit.as_deref(), Some("abc123"));
    /// assert_eq!(record, RunRecord::of_step(&step, &context), "the same run, the same content key");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn of_step(step: &Step, context: &Context) -> RunRecord {
        let run = step.run.as_ref();
        let mut labels: Vec<(String, String)> =
            run.map(|r| r.labels.iter().map(|l| (l.key.clone(), l.value.clone())).collect()).unwrap_or_default();
        labels.retain(|(k, _)| !context.labels.iter().any(|(key, _)| key == k));
        labels.extend(context.labels.iter().cloned());
        labels.sort();
        let ci = run.and_then(|r| r.ci.as_ref());
        let key = RunKey {
            step: context.name.clone().unwrap_or_else(|| step.name.clone()),
            labels,
            repository: context.repository.clone().unwrap_or_default(),
            job: context.job.clone().or_else(|| ci.and_then(|c| c.job.clone())).unwrap_or_default(),
            runner_class: context.runner_class.clone().unwrap_or_default(),
        };
        let measures = measures_of(step);
        let content_key = content_key(step, &measures);
        RunRecord {
            key,
            branch: context.branch.clone(),
            time: step.start.or(step.end).unwrap_or_else(Timestamp::now),
            commit: context.commit.clone(),
            machine: Machine::of_step(step),
            measures,
            content_key,
        }
    }

    /// The value of `metric`, when measured.
    #[must_use]
    pub fn value(&self, metric: &str) -> Option<f64> {
        self.measures.iter().find(|m| m.metric == metric).map(|m| m.value)
    }
}

fn content_key(step: &Step, measures: &[Measure]) -> String {
    serde_json::json!({
        "step": step.name,
        "start": step.start,
        "end": step.end,
        "measures": measures,
    })
    .to_string()
}

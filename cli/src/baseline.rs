//! `stepmon baseline add` and `stepmon baseline check`: runs kept in one
//! SQLite file (stepmon-history) and a run judged against the last
//! comparable ones. docs/baselines.md has the schema and the defaults.

use std::path::{Path, PathBuf};

use stepmon_history::prometheus::Source;
use stepmon_history::show::ShowFormat;
use stepmon_history::{CheckReport, Context, Family, MetricFilter, Policy, RunRecord, Store, Test, render};
use stepmon_report::job::{self, Entry};

use crate::error::CliError;

/// Exit status of `stepmon baseline check` when a metric of `--fail-on` regressed.
pub const REGRESSION: i32 = 1;

/// `stepmon baseline …`.
#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    #[command(subcommand)]
    command: BaselineCmd,
}

#[derive(Debug, clap::Subcommand)]
enum BaselineCmd {
    /// Add runs to the history file DB (created on first use): each step
    /// of a run document, a job record or a build history bundle. A run
    /// already in DB is not added again.
    Add(AddArgs),
    /// Judge each step of FILE against the last comparable runs in DB:
    /// regression, improvement or within noise per metric; exit 1 when a
    /// metric of --fail-on regressed.
    Check(CheckArgs),
    /// The trend of each metric over the runs in DB: a table with
    /// sparklines, or charts with the gate's band, its regressions and the
    /// busy runs marked (the commit on hover).
    Show(ShowArgs),
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The history file, or prometheus+http://HOST:PORT.
    #[arg(value_name = "DB")]
    db: String,
    /// This step's runs only.
    #[arg(long, value_name = "NAME")]
    step: Option<String>,
    /// One family (cpu, wall, memory, io, stall, pids) or one metric
    /// (memory-peak-bytes, command-cpu-seconds:cc1).
    #[arg(long, value_name = "METRIC")]
    metric: Option<String>,
    /// The last N runs of each metric (0: all), each judged against the
    /// --window runs before it.
    #[arg(long, default_value = "100", value_name = "N")]
    last: usize,
    #[command(flatten)]
    policy: PolicyArgs,
    /// text (a table with sparklines), json, svg or html.
    #[arg(short, long, default_value = "text", value_name = "FORMAT")]
    format: ShowFormat,
}

/// Where the runs come from (the command line over the CI's environment).
#[derive(Debug, Clone, clap::Args)]
pub struct ContextArgs {
    /// The step's name instead of the run's (a file of one step only).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// A label added to the run's own (repeatable); runs compare only with
    /// runs of the same labels.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    labels: Vec<stepmon_model::labels::Label>,
    /// The commit (default: GITHUB_SHA, CI_COMMIT_SHA).
    #[arg(long, value_name = "SHA")]
    commit: Option<String>,
    /// The repository (default: GITHUB_REPOSITORY, CI_PROJECT_PATH).
    #[arg(long, value_name = "OWNER/NAME")]
    repository: Option<String>,
    /// The CI job (default: GITHUB_JOB, CI_JOB_NAME, else the run's own).
    #[arg(long, value_name = "JOB")]
    ci_job: Option<String>,
    /// The class of machine (default: STEPMON_RUNNER_CLASS, else GitHub's
    /// RUNNER_OS-RUNNER_ARCH); runs of different classes never compare.
    #[arg(long, value_name = "CLASS")]
    runner_class: Option<String>,
}

impl ContextArgs {
    fn context(&self, branch: Option<String>) -> Context {
        let given = Context {
            name: self.name.clone(),
            labels: self.labels.iter().map(|l| (l.key.clone(), l.value.clone())).collect(),
            repository: self.repository.clone(),
            branch,
            job: self.ci_job.clone(),
            runner_class: self.runner_class.clone(),
            commit: self.commit.clone(),
        };
        given.or(Context::from_env(|name| std::env::var(name).ok()))
    }
}

#[derive(Debug, clap::Args)]
struct AddArgs {
    /// The history file.
    #[arg(value_name = "DB")]
    db: PathBuf,
    /// Run documents (`stepmon run --output`), job records (`--job`),
    /// directories of them, provenances, history bundles.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    context: ContextArgs,
    /// The run's branch (default: GITHUB_HEAD_REF, GITHUB_REF_NAME, CI_COMMIT_REF_NAME).
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
}

/// How runs are judged (`stepmon baseline check`).
#[derive(Debug, Clone, clap::Args)]
pub struct PolicyArgs {
    /// The baseline: the last N comparable runs.
    #[arg(long, default_value = "30", value_name = "N")]
    window: usize,
    /// Fewer comparable runs than this: "not enough history" (2 to 10).
    #[arg(long, default_value = "5", value_name = "N", value_parser = clap::value_parser!(u8).range(2..=10))]
    min_runs: u8,
    /// The test: t (prediction interval at level α), z (standard
    /// deviations), percent (of the mean) or iqr (Tukey's fences).
    #[arg(long, default_value = "t", value_name = "TEST")]
    test: Test,
    /// A threshold of the test for a metric (repeatable): memory=5 (percent),
    /// cpu=0.001 (t's α), wall=4 (z), io=3 (iqr's k).
    #[arg(long = "threshold", value_name = "METRIC=VALUE", value_parser = family_value)]
    thresholds: Vec<(Family, f64)>,
    /// A change below which a metric is never flagged, in its unit
    /// (seconds, bytes, tasks; repeatable): memory=8388608, cpu=0.05.
    #[arg(long = "floor", value_name = "METRIC=VALUE", value_parser = family_value)]
    floors: Vec<(Family, f64)>,
    /// Exit 1 when one of these regressed (comma-separated: cpu, wall,
    /// memory, io, stall, pids; empty: never).
    #[arg(long, default_value = "memory,cpu", value_name = "METRICS", value_parser = families)]
    fail_on: Families,
}

/// A list of families (`--fail-on`).
#[derive(Debug, Clone)]
pub struct Families(Vec<Family>);

fn families(text: &str) -> Result<Families, String> {
    text.split(',').filter(|s| !s.is_empty()).map(str::parse).collect::<Result<_, _>>().map(Families)
}

fn family_value(text: &str) -> Result<(Family, f64), String> {
    let (family, value) = text.split_once('=').ok_or("expected METRIC=VALUE")?;
    let value: f64 = value.parse().map_err(|_| format!("`{value}` is not a number"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("`{value}` is not a number ≥ 0"));
    }
    Ok((family.parse()?, value))
}

impl PolicyArgs {
    fn policy(&self) -> Policy {
        let mut policy = Policy {
            test: self.test,
            window: self.window.max(1),
            min_runs: usize::from(self.min_runs),
            fail_on: self.fail_on.0.clone(),
            ..Policy::default()
        };
        policy.thresholds.extend(self.thresholds.iter().copied());
        policy.floors.extend(self.floors.iter().copied());
        policy
    }

    /// The defaults, for `stepmon run --baseline`.
    pub fn defaults() -> PolicyArgs {
        PolicyArgs {
            window: 30,
            min_runs: 5,
            test: Test::T,
            thresholds: Vec::new(),
            floors: Vec::new(),
            fail_on: Families(vec![Family::Memory, Family::Cpu]),
        }
    }
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// The history file, or prometheus+http://HOST:PORT (the runs that
    /// `--push` and `--textfile` exports left there; ?range=30d&step=60s).
    #[arg(value_name = "DB")]
    db: String,
    /// The run to judge (any file `baseline add` reads).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    #[command(flatten)]
    context: ContextArgs,
    /// Compare with this branch's runs only (e.g. main).
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    #[command(flatten)]
    policy: PolicyArgs,
    /// text, json, markdown (a table with a trend per metric, for a PR
    /// comment or $GITHUB_STEP_SUMMARY) or bmf (Bencher Metric Format).
    #[arg(short, long, default_value = "text", value_name = "FORMAT")]
    format: render::Format,
}

/// `stepmon baseline …`; returns the exit status.
pub fn baseline(args: &BaselineArgs) -> Result<i32, CliError> {
    match &args.command {
        BaselineCmd::Add(add) => {
            if Source::of(&add.db.to_string_lossy()).is_some() {
                return Err(CliError::new(format!("{}: runs are added to Prometheus by the export", add.db.display()))
                    .hint("push each run (stepmon run --push URL, or --textfile DIR for node_exporter); `add` is for history files"));
            }
            let records = records_of(&add.files, &add.context.context(add.branch.clone()))?;
            let added = open(&add.db)?.add(&records).map_err(store_error)?;
            eprintln!("stepmon: {}: {} run(s) added, {} already there", add.db.display(), added.added, added.already);
            Ok(0)
        }
        BaselineCmd::Check(check) => {
            let records = records_of(std::slice::from_ref(&check.file), &check.context.context(None))?;
            let policy = check.policy.policy();
            let report = match Source::of(&check.db) {
                Some(_) if check.branch.is_some() => {
                    return Err(CliError::new("--branch: a Prometheus history has no branch (it is not a label)")
                        .hint("give each branch's runs a label of their own (--label branch=main) and check with it"));
                }
                Some(source) => judge_prometheus(&source.map_err(CliError::new)?, &records, &policy)?,
                None => judge(Path::new(&check.db), &records, check.branch.as_deref(), &policy)?,
            };
            crate::out::emit(&render::render(&report, check.format))?;
            Ok(if report.failed { REGRESSION } else { 0 })
        }
        BaselineCmd::Show(show) => {
            let runs = match Source::of(&show.db) {
                Some(source) => {
                    crate::baseline_prom::runs(&source.map_err(CliError::new)?, show.step.as_deref(), &[], None)?
                }
                None => {
                    let db = Path::new(&show.db);
                    if !db.exists() {
                        return Err(no_history(db));
                    }
                    open(db)?.runs(show.step.as_deref()).map_err(store_error)?
                }
            };
            let filter = show.metric.as_deref().map_or(MetricFilter::All, MetricFilter::parse);
            let trends = stepmon_history::trends(&runs, &show.policy.policy(), &filter, show.last);
            crate::out::emit(&stepmon_history::show::show(&trends, show.format))?;
            Ok(0)
        }
    }
}

fn no_history(db: &Path) -> CliError {
    CliError::new(format!("{}: no such history file", db.display()))
        .hint("add runs first: stepmon baseline add DB RUN.json")
}

/// `records` judged against the runs a Prometheus server holds of their
/// step and labels that ended before each began.
fn judge_prometheus(source: &Source, records: &[RunRecord], policy: &Policy) -> Result<CheckReport, CliError> {
    let mut steps = Vec::with_capacity(records.len());
    for record in records {
        let mut history =
            crate::baseline_prom::runs(source, Some(&record.key.step), &record.key.labels, Some(&record.key))?;
        history.retain(|r| r.time < record.time);
        steps.push(stepmon_history::check(record, &history, policy));
    }
    Ok(CheckReport::new(steps, policy))
}

/// `records` judged against `db`'s comparable runs.
fn judge(db: &Path, records: &[RunRecord], branch: Option<&str>, policy: &Policy) -> Result<CheckReport, CliError> {
    if !db.exists() {
        return Err(no_history(db));
    }
    let store = open(db)?;
    let mut steps = Vec::with_capacity(records.len());
    for record in records {
        let history = store.history(&record.key, branch, policy.window).map_err(store_error)?;
        steps.push(stepmon_history::check(record, &history, policy));
    }
    Ok(CheckReport::new(steps, policy))
}

/// `stepmon run --baseline DB`: the run's step added to DB and judged
/// against the runs before it; the verdict goes to stderr with the
/// summary. Returns whether the gate failed.
pub fn run_baseline(
    db: &Path,
    document: &stepmon_model::document::RunDocument,
    labels: &[stepmon_model::labels::Label],
) -> Result<bool, CliError> {
    let args = ContextArgs {
        name: None,
        labels: labels.to_vec(),
        commit: None,
        repository: None,
        ci_job: None,
        runner_class: None,
    };
    let step = stepmon_report::Step::from_run(document);
    let record = RunRecord::of_step(&step, &args.context(None));
    let mut store = open(db)?;
    store.add(std::slice::from_ref(&record)).map_err(store_error)?;
    let policy = PolicyArgs::defaults().policy();
    let history = store.history(&record.key, None, policy.window).map_err(store_error)?;
    let report = CheckReport::new(vec![stepmon_history::check(&record, &history, &policy)], &policy);
    eprint!("baseline ({}):\n{}", db.display(), render::render(&report, render::Format::Text));
    Ok(report.failed)
}

fn open(db: &Path) -> Result<Store, CliError> {
    Store::open(db).map_err(store_error)
}

fn store_error(e: stepmon_history::StoreError) -> CliError {
    CliError::new(e.to_string())
}

/// Every ended step of `files` as a record in `context` (interrupted steps
/// of a job record are named on stderr and left out).
fn records_of(files: &[PathBuf], context: &Context) -> Result<Vec<RunRecord>, CliError> {
    let mut entries: Vec<Entry> = Vec::new();
    for path in files {
        if let Some(builds) = crate::history::load(std::slice::from_ref(path))? {
            entries.extend(crate::history::diff_entries(&builds, &path.display().to_string()));
            continue;
        }
        let (found, notes) = crate::job_read::load(std::slice::from_ref(path))?;
        for note in notes {
            eprintln!("stepmon: {note}");
        }
        entries.extend(found);
    }
    let ended: Vec<Entry> = entries
        .into_iter()
        .filter(|e| {
            let interrupted = matches!(e.status, job::StepStatus::Interrupted { .. });
            if interrupted {
                eprintln!("stepmon: {}: `{}` was interrupted: left out", e.from, e.step.name);
            }
            !interrupted
        })
        .collect();
    if context.name.is_some() && ended.len() > 1 {
        return Err(CliError::new(format!("--name names one step; the inputs have {}", ended.len())));
    }
    Ok(ended.iter().map(|e| RunRecord::of_step(&e.step, context)).collect())
}

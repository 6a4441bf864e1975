//! `stepmon report` and `stepmon diff`: saved runs (or the steps of a BuildKit
//! build's provenance) in every format `stepmon-export` renders.

use std::path::{Path, PathBuf};

use stepmon_export::{self as export, Format};
use stepmon_import::history::{self, Build};
use stepmon_report::Step;
use stepmon_report::job;

use crate::error::CliError;
use crate::input::Input;

/// Arguments of `stepmon report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A `stepmon run --output` file, a BuildKit provenance attestation (SLSA
    /// v1 or v0.2; in-toto statement or bare predicate) or a buildx metadata
    /// file, or a `docker buildx history export` bundle (`.dockerbuild`, or
    /// its unpacked directory); `-` reads stdin (a bundle too, gzip'd or
    /// not). A job record (`stepmon run --job`), a
    /// directory of such files (its *.json and *.jsonl) or several files
    /// are read as one job: a table of its steps.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Output format: text, json, trace (Chrome trace for Perfetto),
    /// openmetrics (for OpenMetrics scrapers), prometheus (text format
    /// 0.0.4, for Pushgateway and node_exporter's textfile collector),
    /// gitlab-metrics (GitLab's metrics report: the headline numbers with
    /// labels that stay the same from run to run, to three significant
    /// digits), markdown (for $GITHUB_STEP_SUMMARY; charts as Mermaid),
    /// markdown-svg (charts as inline SVG, for renderers that keep it), html
    /// (with SVG charts) or svg (the charts alone).
    #[arg(short, long, default_value = "text", value_name = "FORMAT")]
    pub format: Format,
    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Reads `path` (`-` = stdin) as recorded steps.
// `stepmon push` reads with it, which is Linux-only.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn load(path: &Path) -> Result<Vec<Step>, CliError> {
    crate::input::load_steps(path)
}

/// Writes `text` to `output` (a file) or stdout.
pub fn write(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    match output.filter(|p| *p != Path::new("-")) {
        Some(path) => {
            // Whole or not at all: a failure leaves an earlier file as it was.
            stepmon_outfile::write(path, text)
                .map_err(|e| CliError::output(&format!("cannot write {}", path.display()), &e))
        }
        None => crate::out::emit(text),
    }
}

/// `stepmon report`.
pub fn report(args: &ReportArgs) -> Result<(), CliError> {
    // An output that cannot be written fails before the inputs are read
    // (a build history bundle can take a while), touching nothing.
    if let Some(path) = args.output.as_deref().filter(|p| *p != Path::new("-")) {
        drop(
            stepmon_outfile::OutFile::create(path)
                .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))?,
        );
    }
    let (entries, notes) = match args.files.as_slice() {
        [path] if !path.is_dir() || crate::input::is_layout(path) => match crate::input::read(path)? {
            Input::Builds(builds) => return report_builds(args, &builds),
            // A predicate without per-step usage: a build-level report.
            Input::Build { build, .. } => return report_builds(args, &[*build]),
            Input::Steps(import) => {
                let steps = crate::input::steps(path, import)?;
                return write(args.output.as_deref(), &export::render(args.format, &steps));
            }
            input @ Input::Job(_) => crate::job_read::of_input(path, input)?,
        },
        _ => crate::job_read::load(&args.files)?,
    };
    // The text, JSON, Markdown and HTML views list the notes (lost lines
    // and the like); the other formats have no place for them.
    if !matches!(args.format, Format::Text | Format::Json | Format::Markdown | Format::MarkdownSvg | Format::Html) {
        for note in &notes {
            eprintln!("stepmon: {note}");
        }
    }
    let text = stepmon_export::job::render(args.format, &entries, &notes);
    write(args.output.as_deref(), &text)
}

/// `stepmon report` of builds.
fn report_builds(args: &ReportArgs, builds: &[Build]) -> Result<(), CliError> {
    write(args.output.as_deref(), &history::render_as(args.format, builds))
}

/// Arguments of `stepmon diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The earlier run: any file `stepmon report` reads, a job record
    /// (`stepmon run --job`) or a directory of them, or a `docker buildx
    /// history export` bundle; steps are paired by name (a build's with
    /// their platform).
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,
    /// The later run (the same kinds).
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Exit with 1 when a step, or (two jobs) the job's wall, CPU or peak
    /// memory, got heavier beyond the noise (for CI gates).
    #[arg(long)]
    pub fail_if_heavier: bool,
    /// When BEFORE does not exist (a CI job's first run, before any
    /// baseline was saved), say so in one `stepmon: notice:` line and exit
    /// 0 instead of failing.
    #[arg(long)]
    pub allow_missing_baseline: bool,
}

/// One side of a diff: its steps that ended (a job's interrupted steps are
/// named on stderr and left out: their numbers stop where the record does),
/// and whether it is a job (a job record or a directory).
fn diff_side(path: &Path, side: &str) -> Result<(Vec<job::Entry>, bool), CliError> {
    let (entries, notes) = if path.is_dir() && !crate::input::is_layout(path) {
        crate::job_read::load(std::slice::from_ref(&path.to_path_buf()))?
    } else {
        match crate::input::read(path)? {
            Input::Builds(builds) => return Ok((crate::history::diff_entries(&builds, side), true)),
            Input::Steps(import) => {
                let from = path.display().to_string();
                let steps = crate::input::steps(path, import)?;
                return Ok((steps.into_iter().map(|s| job::Entry::of_run(s, from.clone())).collect(), false));
            }
            Input::Build { no_steps, .. } => {
                return Err(CliError::new(format!("{}: {no_steps}", path.display())));
            }
            input @ Input::Job(_) => crate::job_read::of_input(path, input)?,
        }
    };
    for note in &notes {
        eprintln!("stepmon: {side}: {note}");
    }
    let mut kept = Vec::with_capacity(entries.len());
    for entry in entries {
        match entry.status {
            job::StepStatus::Interrupted { .. } => {
                eprintln!("stepmon: {side}: `{}` was interrupted: not compared", entry.step.name);
            }
            _ => kept.push(entry),
        }
    }
    Ok((kept, true))
}

/// A BEFORE that does not exist: with `--allow-missing-baseline` a notice
/// and exit status 0 (`Some(0)`), without it an error naming that flag. Only
/// a missing path counts: an unreadable or malformed baseline stays an error
/// either way, since it hides a comparison that could have been made.
fn missing_baseline(args: &DiffArgs) -> Result<Option<i32>, CliError> {
    let path = &args.before;
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        _ => return Ok(None),
    }
    if args.allow_missing_baseline {
        eprintln!(
            "stepmon: notice: no baseline at {}: nothing to compare with yet; \
             save this run's record there for the next run to compare with",
            path.display()
        );
        return Ok(Some(0));
    }
    Err(CliError::new(format!("cannot read {}: no such file or directory", path.display())).hint(
        "save a baseline there first, or pass --allow-missing-baseline to exit 0 with a notice while there is none \
         (a CI job's first run)",
    ))
}

/// Exit status of `stepmon diff --fail-if-heavier` when a step got heavier.
pub const HEAVIER: i32 = 1;

/// `stepmon diff`; returns the exit status.
pub fn diff(args: &DiffArgs) -> Result<i32, CliError> {
    use stepmon_report::diff::{JobTotals, RunDiff};
    if let Some(exit) = missing_baseline(args)? {
        return Ok(exit);
    }
    let (before, after) = (diff_side(&args.before, "before")?, diff_side(&args.after, "after")?);
    let steps = |entries: &[job::Entry]| entries.iter().map(|e| e.step.clone()).collect::<Vec<Step>>();
    let mut diff = RunDiff::between(&steps(&before.0), &steps(&after.0));
    // Two jobs: their totals too (wall, CPU, peak memory), also gated on.
    if before.1 && after.1 {
        diff = diff.with_totals(JobTotals::of(&before.0), JobTotals::of(&after.0));
    }
    let text = if args.json {
        serde_json::to_string_pretty(&diff).map_err(|e| CliError::new(format!("JSON: {e}")))? + "\n"
    } else {
        diff.render_text()
    };
    crate::out::emit(&text)?;
    Ok(if args.fail_if_heavier && diff.heavier() { HEAVIER } else { 0 })
}

//! The inputs of `stepmon report` read as one job: run files, provenances,
//! job records and directories of them.

use std::path::{Path, PathBuf};

use stepmon_report::job::{self, Entry};

use crate::error::CliError;

/// Every step of `paths` (a directory: its `*.json` and `*.jsonl` files,
/// by name) and the notes to show with them: lost lines, lines of unknown
/// kinds, files of a directory that hold no step.
pub fn load(paths: &[PathBuf]) -> Result<(Vec<Entry>, Vec<String>), CliError> {
    let (mut entries, mut notes) = (Vec::new(), Vec::new());
    for path in paths {
        if path.is_dir() {
            for file in files_of(path)? {
                if let Err(e) = load_file(&file, &mut entries, &mut notes) {
                    notes.push(format!("skipped {}: {}", file.display(), e.message));
                }
            }
        } else {
            load_file(path, &mut entries, &mut notes)?;
        }
    }
    nonempty(entries, notes)
}

/// The job of one input's `text` (a job record, a run file, a provenance),
/// already read from `path` (`-`: stdin, which can be read once).
pub fn of_text(path: &Path, text: &str) -> Result<(Vec<Entry>, Vec<String>), CliError> {
    let (mut entries, mut notes) = (Vec::new(), Vec::new());
    add_text(path, text, &mut entries, &mut notes)?;
    nonempty(entries, notes)
}

fn nonempty(entries: Vec<Entry>, notes: Vec<String>) -> Result<(Vec<Entry>, Vec<String>), CliError> {
    if entries.is_empty() {
        return Err(CliError::new("no step with recorded usage in the inputs".to_owned()));
    }
    Ok((entries, notes))
}

fn files_of(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let read = std::fs::read_dir(dir).map_err(|e| CliError::input(&format!("cannot read {}", dir.display()), &e))?;
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

fn load_file(path: &Path, entries: &mut Vec<Entry>, notes: &mut Vec<String>) -> Result<(), CliError> {
    add_text(path, &crate::reports::read_text(path)?, entries, notes)
}

fn add_text(path: &Path, text: &str, entries: &mut Vec<Entry>, notes: &mut Vec<String>) -> Result<(), CliError> {
    let from = path.display().to_string();
    if !job::looks_like_record(text) {
        let steps = crate::reports::steps_of(path, text)?;
        entries.extend(steps.into_iter().map(|step| Entry::of_run(step, from.clone())));
        return Ok(());
    }
    let record = job::read(text);
    notes.extend(record.lost.iter().map(|lost| format!("{from}: {lost}")));
    notes.extend(
        record.unknown.iter().map(|u| {
            format!("{from}: line {} skipped: a record of kind {:?}, unknown to this stepmon", u.line, u.kind)
        }),
    );
    entries.extend(record.steps.into_iter().map(|step| Entry::from_job(step, from.clone())));
    Ok(())
}

//! The inputs of `stepmon report` read as one job: run files, provenances,
//! job records and directories of them.

use std::path::{Path, PathBuf};

use stepmon_report::job::{Entry, JobRecord};

use crate::error::CliError;
use crate::input::{self, Input};

/// Every step of `paths` (a directory: its `*.json` and `*.jsonl` files,
/// by name) and the notes to show with them: lost lines, lines of unknown
/// kinds, files of a directory that hold no step.
pub fn load(paths: &[PathBuf]) -> Result<(Vec<Entry>, Vec<String>), CliError> {
    let (mut entries, mut notes) = (Vec::new(), Vec::new());
    for path in paths {
        if path.is_dir() && !input::is_layout(path) {
            for file in input::job_files(path)? {
                if let Err(e) = input::read(&file).and_then(|input| add(&file, input, &mut entries, &mut notes)) {
                    notes.push(format!("skipped {}: {}", file.display(), e.message));
                }
            }
        } else {
            add(path, input::read(path)?, &mut entries, &mut notes)?;
        }
    }
    nonempty(entries, notes)
}

/// The job of one input, already read from `path` (`-`: stdin, which can
/// be read once).
pub fn of_input(path: &Path, input: Input) -> Result<(Vec<Entry>, Vec<String>), CliError> {
    let (mut entries, mut notes) = (Vec::new(), Vec::new());
    add(path, input, &mut entries, &mut notes)?;
    nonempty(entries, notes)
}

fn nonempty(entries: Vec<Entry>, notes: Vec<String>) -> Result<(Vec<Entry>, Vec<String>), CliError> {
    if entries.is_empty() {
        return Err(CliError::new("no step with recorded usage in the inputs".to_owned()));
    }
    Ok((entries, notes))
}

fn add(path: &Path, input: Input, entries: &mut Vec<Entry>, notes: &mut Vec<String>) -> Result<(), CliError> {
    let from = path.display().to_string();
    match input {
        Input::Job(record) => add_record(&from, record, entries, notes),
        Input::Steps(import) => {
            let steps = input::steps(path, import)?;
            entries.extend(steps.into_iter().map(|step| Entry::of_run(step, from.clone())));
        }
        Input::Build { no_steps, .. } => return Err(CliError::new(format!("{from}: {no_steps}"))),
        Input::Builds(builds) => {
            let (kept, left_out) = stepmon_import::history::diff_entries(&builds);
            for name in left_out {
                notes.push(format!("{from}: `{name}` never completed: left out"));
            }
            entries.extend(kept);
        }
    }
    Ok(())
}

fn add_record(from: &str, record: JobRecord, entries: &mut Vec<Entry>, notes: &mut Vec<String>) {
    notes.extend(record.lost.iter().map(|lost| format!("{from}: {lost}")));
    notes.extend(
        record.unknown.iter().map(|u| {
            format!("{from}: line {} skipped: a record of kind {:?}, unknown to this stepmon", u.line, u.kind)
        }),
    );
    entries.extend(record.steps.into_iter().map(|step| Entry::from_job(step, from.to_owned())));
}

//! `stepmon report` and `stepmon diff`: saved runs (or the steps of a BuildKit
//! build's provenance) in every format `stepmon-report` renders.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use stepmon_report::Step;
use stepmon_report::export::{self, Format};

use crate::error::CliError;

/// Arguments of `stepmon report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A `stepmon run --output` file, a BuildKit provenance attestation (SLSA
    /// v1 or v0.2; in-toto statement or bare predicate) or a buildx metadata
    /// file; `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output format: text, json, trace (Chrome trace for Perfetto),
    /// openmetrics, markdown (for $GITHUB_STEP_SUMMARY; charts as Mermaid),
    /// html (with SVG charts) or svg (the charts alone).
    #[arg(short, long, default_value = "text", value_name = "FORMAT")]
    pub format: Format,
    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Reads `path` (`-` = stdin) as recorded steps.
pub fn load(path: &Path) -> Result<Vec<Step>, CliError> {
    let text = if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| CliError::io("cannot read stdin", &e))?;
        text
    } else {
        std::fs::read_to_string(path).map_err(|e| CliError::io(&format!("cannot read {}", path.display()), &e))?
    };
    let steps = stepmon_report::import::steps(&text).map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    if steps.is_empty() {
        return Err(CliError::new(format!("{}: no step with recorded usage", path.display())));
    }
    Ok(steps)
}

/// Writes `text` to `output` (a file) or stdout.
pub fn write(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    match output.filter(|p| *p != Path::new("-")) {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| CliError::io(&format!("cannot write {}", path.display()), &e))
        }
        None => crate::out::emit(text),
    }
}

/// `stepmon report`.
pub fn report(args: &ReportArgs) -> Result<(), CliError> {
    let steps = load(&args.file)?;
    write(args.output.as_deref(), &export::render(args.format, &steps))
}

//! Reading recorded steps: a `stepmon run` document, or a BuildKit
//! provenance attestation (TODO(helper)).

use crate::document::RunDocument;
use crate::step::Step;

/// Why a file could not be read as recorded steps.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The steps in `text`: a `stepmon run --output` document or a BuildKit
/// provenance attestation.
///
/// # Errors
/// When `text` is neither.
pub fn steps(text: &str) -> Result<Vec<Step>, ImportError> {
    let document: RunDocument = serde_json::from_str(text)?;
    Ok(vec![Step::from_run(&document)])
}

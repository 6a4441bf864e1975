//! Writing results to stdout.

use std::io::{self, Write as _};

use crate::error::CliError;

/// Writes to stdout; a reader that went away (`| head`) is not an error
/// (`println!` would panic).
pub fn emit(text: &str) -> Result<(), CliError> {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(CliError::io("cannot write to stdout", &e)),
        _ => Ok(()),
    }
}

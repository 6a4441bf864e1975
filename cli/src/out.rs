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

/// A command line as one line for people: arguments that are not plain
/// words are quoted, control characters (newlines, ...) escaped.
pub fn quote_command(args: &[String]) -> String {
    args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

/// One argument, shell-style: as is when plain, else in single quotes with
/// control characters escaped.
pub fn quote(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c));
    if plain {
        return arg.to_owned();
    }
    let mut out = String::from("'");
    for c in arg.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

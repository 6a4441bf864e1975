//! The one error type every parser in this crate (and the sibling `stepmon-psi`,
//! `stepmon-sysusage` and `stepmon-netns-stats` crates) returns.

/// What was wrong with the input. See [`ParseError`] for where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input was empty where the format requires a value (e.g. a 0-byte
    /// `memory.current`).
    #[error("empty input")]
    Empty,
    /// A number was expected but the token is not plain ASCII decimal
    /// (signs, spaces, `\r`, hex and the like are all rejected).
    #[error("not a decimal number")]
    InvalidNumber,
    /// A number is larger than its type can hold (e.g. more than `u64::MAX`).
    #[error("number out of range")]
    Overflow,
    /// A line lacks the separator its format class requires
    /// (`KEY VAL`, `SUB=VAL`, `ID:CTRL:PATH`, ...).
    #[error("missing separator")]
    MissingSeparator,
    /// A key or name is empty or holds bytes no kernel emits there
    /// (control characters, `\r`, non-ASCII, ...).
    #[error("invalid key or name")]
    InvalidKey,
    /// A line is empty where the format has no empty lines.
    #[error("empty line")]
    EmptyLine,
    /// More data follows a value that must stand alone (e.g. `memory.max`).
    #[error("unexpected trailing data")]
    TrailingData,
    /// A flag was neither `0` nor `1`.
    #[error("flag is not 0 or 1")]
    InvalidFlag,
    /// A line has fewer fields than its format requires.
    #[error("missing field")]
    MissingField,
    /// A field has the right place but a value the format does not allow
    /// (e.g. a `MAJ:MIN` without a colon, a PSI average with three decimals).
    #[error("invalid field")]
    InvalidField,
    /// A header line that the format requires is missing
    /// (e.g. the two header lines of `/proc/net/dev`).
    #[error("missing header")]
    MissingHeader,
}

/// A parse failure: what went wrong, on which line, at which byte.
///
/// `Copy` and allocation-free, so parsers can return it from `no_std`
/// code. `line` is 1-based; `offset` is the 0-based byte offset from the start
/// of the input where the offending token (or line) begins. Both saturate at
/// `u32::MAX`, far beyond any kernel file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("{kind} at line {line}, byte {offset}")]
pub struct ParseError {
    /// What was wrong.
    pub kind: ErrorKind,
    /// 1-based line number.
    pub line: u32,
    /// 0-based byte offset from the start of the input.
    pub offset: u32,
}

impl ParseError {
    /// A new error at `line` (1-based) and byte `offset`.
    #[must_use]
    pub fn new(kind: ErrorKind, line: usize, offset: usize) -> Self {
        ParseError {
            kind,
            line: u32::try_from(line).unwrap_or(u32::MAX),
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
        }
    }
}

/// Result alias used by every parser here.
pub type Result<T, E = ParseError> = core::result::Result<T, E>;

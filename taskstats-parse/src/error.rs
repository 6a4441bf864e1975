//! The one error type of every parser here.

use core::fmt;

/// What was wrong with the bytes, and where (`offset` is from the start of
/// the slice given to the parser that failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The input ended inside a header or a fixed-size field.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where it started.
        offset: usize,
    },
    /// A length field is smaller than its own header or points past the end.
    BadLength {
        /// Which length field.
        what: &'static str,
        /// Where the header holding it starts.
        offset: usize,
        /// The declared length.
        declared: usize,
    },
    /// A required attribute was not in the message.
    MissingAttribute {
        /// Which attribute.
        what: &'static str,
    },
    /// The message is of another kind than this parser reads.
    UnexpectedKind {
        /// What was expected.
        expected: &'static str,
        /// The type or command found.
        found: u32,
    },
}

/// `core::result::Result` with [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Truncated { what, offset } => write!(f, "input ends inside {what} (at byte {offset})"),
            Error::BadLength { what, offset, declared } => {
                write!(f, "{what} at byte {offset} declares length {declared}, which does not fit")
            }
            Error::MissingAttribute { what } => write!(f, "no {what} attribute"),
            Error::UnexpectedKind { expected, found } => write!(f, "expected {expected}, found type {found}"),
        }
    }
}

impl core::error::Error for Error {}

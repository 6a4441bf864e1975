//! The format classes of cgroup v2 interface files, as reusable building
//! blocks: see <https://docs.kernel.org/admin-guide/cgroup-v2.html#format>.
//!
//! | class | building block |
//! |---|---|
//! | single value (incl. `max`) | [`single`], [`Limit`](single::Limit) |
//! | flat keyed `KEY VAL` | [`flat::FlatKeyed`] |
//! | nested keyed `KEY SUB=VAL ...` | [`nested::NestedKeyed`] |
//! | space separated | [`list::SpaceList`] |
//! | newline separated | [`list::NewlineList`] |
//!
//! The typed parsers of this crate are built from these; other crates (and
//! files this crate does not type) can use them directly.

pub mod flat;
pub mod list;
pub mod nested;
pub mod single;

use crate::error::ErrorKind;

/// Validates a key or name: non-empty, printable ASCII without blanks or `=`.
/// The kernel's keys are `[a-z0-9_.:]`; being a little wider keeps
/// forward compatibility while still rejecting `\r`, control bytes and
/// non-ASCII garbage.
#[inline]
pub(crate) fn ascii_key(bytes: &[u8]) -> Result<&str, ErrorKind> {
    if bytes.is_empty() || !bytes.iter().all(|&b| is_key_byte(b)) {
        return Err(ErrorKind::InvalidKey);
    }
    core::str::from_utf8(bytes).map_err(|_| ErrorKind::InvalidKey)
}

/// A byte [`ascii_key`] accepts: printable ASCII other than `=`.
#[inline]
pub(crate) fn is_key_byte(b: u8) -> bool {
    b.is_ascii_graphic() && b != b'='
}

/// Validates printable ASCII text that may contain single spaces (e.g.
/// `cgroup.type`'s `domain threaded`).
#[inline]
pub(crate) fn ascii_text(bytes: &[u8]) -> Result<&str, ErrorKind> {
    if bytes.is_empty() || !bytes.iter().all(|&b| b.is_ascii_graphic() || b == b' ') {
        return Err(ErrorKind::InvalidKey);
    }
    core::str::from_utf8(bytes).map_err(|_| ErrorKind::InvalidKey)
}

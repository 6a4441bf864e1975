//! What the Windows and the macOS/BSD steps share: both start the command
//! with std's `Command` (its environment, directory and streams from the
//! step's options), read its pipes through std's ends, wait for it on a
//! thread for the async calls, and build the same kind of run document from
//! what the OS accounted.

pub(crate) mod check;
pub(crate) mod command;
pub(crate) mod ends;
pub(crate) mod finish;
pub(crate) mod prepare;
pub(crate) mod thread;

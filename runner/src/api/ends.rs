//! This process's ends of a step's pipes ([`crate::Stdio::piped`]), as
//! `std::process::Child` hands them out: [`ChildStdin`] to write, and
//! [`ChildStdout`] and [`ChildStderr`] to read — each with `std::io`'s
//! blocking traits and `futures::io`'s async ones, on any executor.
//!
//! How one end serves both is the platform's. Linux: a non-blocking
//! descriptor, waited for with `poll(2)` by a blocking call and registered
//! with `async-io`'s reactor by the first async one. Elsewhere: std's pipe
//! end, read or written directly by a blocking call; the first async call
//! moves it to a thread of its own that reads ahead (or writes what it is
//! handed) through a bounded channel, since Windows cannot wait for an
//! anonymous pipe in a reactor.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::io::{AsyncRead, AsyncWrite};

use crate::imp;

/// The step's stdin, when it is [`crate::Stdio::piped`]: write to it
/// (`std::io::Write`, `futures::io::AsyncWrite`); drop it (or
/// `AsyncWriteExt::close`) to give the command end of file.
#[derive(Debug)]
pub struct ChildStdin(pub(super) imp::ChildStdin);

/// The step's stdout, when it is [`crate::Stdio::piped`]: read it
/// (`std::io::Read`, `futures::io::AsyncRead`) while the step runs, or let
/// [`crate::Step::wait_with_output`] collect it.
#[derive(Debug)]
pub struct ChildStdout(pub(super) imp::ChildStdout);

/// The step's stderr, when it is [`crate::Stdio::piped`]; as [`ChildStdout`].
#[derive(Debug)]
pub struct ChildStderr(pub(super) imp::ChildStderr);

macro_rules! conversions {
    ($($name:ident),*) => {$(
        impl TryFrom<$name> for crate::Stdio {
            type Error = io::Error;

            /// The pipe end as another step's stream (blocking again, as a
            /// command expects its stdin and stdout).
            fn try_from(end: $name) -> io::Result<crate::Stdio> {
                crate::Stdio::try_from(end.0)
            }
        }

        #[cfg(unix)]
        impl TryFrom<$name> for std::os::fd::OwnedFd {
            type Error = io::Error;

            /// The descriptor, blocking again (as std's pipe ends are).
            fn try_from(end: $name) -> io::Result<std::os::fd::OwnedFd> {
                std::os::fd::OwnedFd::try_from(end.0)
            }
        }

        #[cfg(windows)]
        impl TryFrom<$name> for std::os::windows::io::OwnedHandle {
            type Error = io::Error;

            /// The pipe's handle (back from its thread if an async call
            /// moved it there).
            fn try_from(end: $name) -> io::Result<std::os::windows::io::OwnedHandle> {
                std::os::windows::io::OwnedHandle::try_from(end.0)
            }
        }
    )*};
}

conversions!(ChildStdin, ChildStdout, ChildStderr);

macro_rules! reader {
    ($($name:ident),*) => {$(
        impl Read for $name {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf)
            }
        }

        impl AsyncRead for $name {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
            }
        }
    )*};
}

reader!(ChildStdout, ChildStderr);

impl Write for ChildStdin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl AsyncWrite for ChildStdin {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    /// Closes this end: the command reads end of file.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_close(cx)
    }
}

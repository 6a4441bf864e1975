//! This process's ends of a step's pipes ([`crate::Stdio::piped`]), as
//! `std::process::Child` hands them out: [`ChildStdin`] to write, and
//! [`ChildStdout`] and [`ChildStderr`] to read — each with `std::io`'s
//! blocking traits and `futures::io`'s async ones, on any executor.
//!
//! How one end serves both: its descriptor is non-blocking from the start.
//! A blocking `read`/`write` that finds it not ready waits in `poll(2)` for
//! it and tries again, so it blocks as std's does without a reactor; the
//! first async poll registers the descriptor with `async-io`'s reactor
//! (which any executor can drive: tokio, smol, `futures::executor`), and a
//! blocking call after that still works (the reactor only waits for
//! readiness; the reads are this end's). An end that is only read blocking
//! never starts `async-io`'s thread. `OwnedFd::try_from(end)` gives the
//! descriptor itself, blocking again (std's pipe ends are).

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use async_io::Async;
use futures::io::{AsyncRead, AsyncWrite};
use rustix::event::{PollFd, PollFlags};

/// One end, blocking until an async poll registers it.
#[derive(Debug)]
enum End {
    Plain(File),
    Registered(Async<File>),
    /// Closed by `AsyncWrite::poll_close`, or lost to a failed registration.
    Closed,
}

impl End {
    fn file(&self) -> io::Result<&File> {
        match self {
            End::Plain(file) => Ok(file),
            End::Registered(registered) => Ok(registered.get_ref()),
            End::Closed => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the step's pipe end is closed")),
        }
    }

    /// `op` until it does not find the end unready, waiting for `ready` in
    /// between.
    fn blocking<R>(&self, ready: PollFlags, mut op: impl FnMut(&File) -> io::Result<R>) -> io::Result<R> {
        let file = self.file()?;
        loop {
            match op(file) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let mut fds = [PollFd::new(file, ready)];
                    match rustix::event::poll(&mut fds, None) {
                        Ok(_) | Err(rustix::io::Errno::INTR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }

    /// The end in `async-io`'s reactor (registered on first use).
    fn registered(&mut self) -> io::Result<&mut Async<File>> {
        if let End::Plain(_) = self {
            let End::Plain(file) = std::mem::replace(self, End::Closed) else { unreachable!() };
            *self = End::Registered(Async::new(file)?);
        }
        match self {
            End::Registered(registered) => Ok(registered),
            _ => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the step's pipe end is closed")),
        }
    }

    /// The descriptor, blocking again (its new owner expects std's).
    fn into_owned(self) -> io::Result<OwnedFd> {
        let file = match self {
            End::Plain(file) => file,
            End::Registered(registered) => registered.into_inner()?,
            End::Closed => return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the step's pipe end is closed")),
        };
        rustix::fs::fcntl_setfl(&file, rustix::fs::OFlags::empty())?;
        Ok(OwnedFd::from(file))
    }
}

macro_rules! end_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name(End);

        impl $name {
            /// This process's end of a pipe (non-blocking, close-on-exec).
            pub(crate) fn new(fd: OwnedFd) -> $name {
                $name(End::Plain(File::from(fd)))
            }
        }

        impl TryFrom<$name> for OwnedFd {
            type Error = io::Error;

            /// The descriptor, blocking again (as std's pipe ends are);
            /// out of the reactor if an async poll put it there.
            fn try_from(end: $name) -> io::Result<OwnedFd> {
                end.0.into_owned()
            }
        }

        impl TryFrom<$name> for crate::Stdio {
            type Error = io::Error;

            /// The pipe end as another step's stream (blocking again, as a
            /// command expects its stdin and stdout).
            fn try_from(end: $name) -> io::Result<crate::Stdio> {
                OwnedFd::try_from(end).map(crate::Stdio::from)
            }
        }
    };
}

end_type!(
    /// The step's stdin, when it is [`crate::Stdio::piped`]: write to it
    /// (`std::io::Write`, `futures::io::AsyncWrite`); drop it (or
    /// `AsyncWriteExt::close`) to give the command end of file.
    ChildStdin
);
end_type!(
    /// The step's stdout, when it is [`crate::Stdio::piped`]: read it
    /// (`std::io::Read`, `futures::io::AsyncRead`) while the step runs, or
    /// let [`crate::Step::wait_with_output`] collect it.
    ChildStdout
);
end_type!(
    /// The step's stderr, when it is [`crate::Stdio::piped`]; as
    /// [`ChildStdout`].
    ChildStderr
);

macro_rules! reader {
    ($name:ident) => {
        impl $name {
            /// The end's file, non-blocking (for a caller that polls it).
            pub(crate) fn file(&self) -> io::Result<&File> {
                self.0.file()
            }
        }

        impl Read for $name {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.blocking(PollFlags::IN, |mut file| file.read(buf))
            }
        }

        impl AsyncRead for $name {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                match self.get_mut().0.registered() {
                    Ok(registered) => Pin::new(registered).poll_read(cx, buf),
                    Err(e) => Poll::Ready(Err(e)),
                }
            }
        }
    };
}

reader!(ChildStdout);
reader!(ChildStderr);

impl Write for ChildStdin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.blocking(PollFlags::OUT, |mut file| file.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsyncWrite for ChildStdin {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut().0.registered() {
            Ok(registered) => Pin::new(registered).poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Closes this end: the command reads end of file.
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().0 = End::Closed;
        Poll::Ready(Ok(()))
    }
}

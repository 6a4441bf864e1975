//! This process's ends of a step's pipes off Linux: std's, read and written
//! directly by the blocking calls. The first async call hands the end to a
//! thread of its own (Windows cannot wait for an anonymous pipe in a
//! reactor), which reads ahead 64 KiB at a time, or writes what it is
//! given, through a channel of one chunk: a reader that stops reading
//! stops the thread's reads too, as a pipe would.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::channel::{mpsc, oneshot};
use futures::io::{AsyncRead, AsyncWrite};
use futures::{Stream, StreamExt};

const CHUNK: usize = 64 * 1024;

fn moved() -> io::Error {
    io::Error::other("the pipe end is served by its thread since an async call")
}

/// A read end: std's, or its thread's chunks.
#[derive(Debug)]
pub(crate) enum Reader<R> {
    Direct(R),
    Thread {
        chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
        /// The chunk being handed out, and how much of it is.
        pending: Vec<u8>,
        at: usize,
    },
}

impl<R: Read + Send + 'static> Reader<R> {
    /// The end handed to a thread (once).
    fn threaded(&mut self) -> io::Result<()> {
        if let Reader::Direct(_) = self {
            let (mut tx, rx) = mpsc::channel::<io::Result<Vec<u8>>>(1);
            let Reader::Direct(mut end) =
                std::mem::replace(self, Reader::Thread { chunks: rx, pending: Vec::new(), at: 0 })
            else {
                unreachable!()
            };
            std::thread::Builder::new().name("stepmon-pipe".into()).spawn(move || {
                loop {
                    let mut chunk = vec![0; CHUNK];
                    let read = match end.read(&mut chunk) {
                        Ok(0) => return,
                        Ok(n) => {
                            chunk.truncate(n);
                            Ok(chunk)
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let last = read.is_err();
                    let ready = futures::executor::block_on(futures::future::poll_fn(|cx| tx.poll_ready(cx)));
                    if ready.is_err() || tx.start_send(read).is_err() || last {
                        return;
                    }
                }
            })?;
        }
        Ok(())
    }

    fn poll_chunk(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        if let Err(e) = self.threaded() {
            return Poll::Ready(Err(e));
        }
        let Reader::Thread { chunks, pending, at } = self else { unreachable!() };
        loop {
            if *at < pending.len() {
                let n = buf.len().min(pending.len() - *at);
                buf[..n].copy_from_slice(&pending[*at..*at + n]);
                *at += n;
                return Poll::Ready(Ok(n));
            }
            match Pin::new(&mut *chunks).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => (*pending, *at) = (chunk, 0),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(None) => return Poll::Ready(Ok(0)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Reader::Direct(end) => end.read(buf),
            Reader::Thread { .. } => {
                futures::executor::block_on(futures::future::poll_fn(|cx| self.poll_chunk(cx, buf)))
            }
        }
    }

    pub(crate) fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.poll_chunk(cx, buf)
    }

    /// std's end back (not once a thread serves it).
    pub(crate) fn into_std(self) -> io::Result<R> {
        match self {
            Reader::Direct(end) => Ok(end),
            Reader::Thread { .. } => Err(moved()),
        }
    }
}

/// A write end: std's, or its thread's channel.
#[derive(Debug)]
pub(crate) enum Writer<W> {
    Direct(W),
    Thread {
        chunks: mpsc::Sender<Vec<u8>>,
        /// The thread's first write error, or `Ok` once it closed the pipe.
        done: oneshot::Receiver<io::Result<()>>,
    },
    Closed,
}

impl<W: Write + Send + 'static> Writer<W> {
    fn threaded(&mut self) -> io::Result<()> {
        if let Writer::Direct(_) = self {
            let (tx, mut rx) = mpsc::channel::<Vec<u8>>(1);
            let (done_tx, done) = oneshot::channel();
            let Writer::Direct(mut end) = std::mem::replace(self, Writer::Thread { chunks: tx, done }) else {
                unreachable!()
            };
            std::thread::Builder::new().name("stepmon-pipe".into()).spawn(move || {
                let mut result = Ok(());
                while let Some(chunk) = futures::executor::block_on(rx.next()) {
                    if let Err(e) = end.write_all(&chunk) {
                        result = Err(e);
                        break;
                    }
                }
                // The command reads end of file once `end` is closed.
                drop(end);
                let _ = done_tx.send(result);
            })?;
        }
        Ok(())
    }

    pub(crate) fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if let Err(e) = self.threaded() {
            return Poll::Ready(Err(e));
        }
        let Writer::Thread { chunks, done } = self else {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the step's stdin is closed")));
        };
        match chunks.poll_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) if chunks.start_send(buf.to_vec()).is_ok() => Poll::Ready(Ok(buf.len())),
            // The thread stopped: its error.
            Poll::Ready(_) => Poll::Ready(match done.try_recv() {
                Ok(Some(Err(e))) => Err(e),
                _ => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the step's stdin is closed")),
            }),
        }
    }

    pub(crate) fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Writer::Direct(_) => {
                *self = Writer::Closed;
                Poll::Ready(Ok(()))
            }
            Writer::Thread { chunks, done } => {
                chunks.close_channel();
                match Pin::new(done).poll(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(result) => {
                        *self = Writer::Closed;
                        Poll::Ready(result.unwrap_or(Ok(())))
                    }
                }
            }
            Writer::Closed => Poll::Ready(Ok(())),
        }
    }

    pub(crate) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Writer::Direct(end) => end.write(buf),
            Writer::Thread { .. } => {
                futures::executor::block_on(futures::future::poll_fn(|cx| self.poll_write(cx, buf)))
            }
            Writer::Closed => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the step's stdin is closed")),
        }
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match self {
            Writer::Direct(end) => end.flush(),
            // What the thread was given is on its way: a pipe has no
            // buffer of this process's to flush.
            _ => Ok(()),
        }
    }

    pub(crate) fn into_std(self) -> io::Result<W> {
        match self {
            Writer::Direct(end) => Ok(end),
            Writer::Thread { .. } => Err(moved()),
            Writer::Closed => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the step's stdin is closed")),
        }
    }
}

use std::future::Future as _;

/// The three ends, as the platform modules name them: std's wrapped.
macro_rules! ends {
    ($($name:ident: $wrap:ident<$std:ty>),*) => {$(
        #[derive(Debug)]
        pub(crate) struct $name(pub(crate) $wrap<$std>);

        impl $name {
            pub(crate) fn new(end: $std) -> $name {
                $name($wrap::Direct(end))
            }
        }

        impl TryFrom<$name> for crate::Stdio {
            type Error = io::Error;
            fn try_from(end: $name) -> io::Result<crate::Stdio> {
                end.0.into_std().map(crate::Stdio::from)
            }
        }

        #[cfg(unix)]
        impl TryFrom<$name> for std::os::fd::OwnedFd {
            type Error = io::Error;
            fn try_from(end: $name) -> io::Result<std::os::fd::OwnedFd> {
                end.0.into_std().map(std::os::fd::OwnedFd::from)
            }
        }

        #[cfg(windows)]
        impl TryFrom<$name> for std::os::windows::io::OwnedHandle {
            type Error = io::Error;
            fn try_from(end: $name) -> io::Result<std::os::windows::io::OwnedHandle> {
                end.0.into_std().map(std::os::windows::io::OwnedHandle::from)
            }
        }
    )*};
}

ends!(ChildStdin: Writer<std::process::ChildStdin>, ChildStdout: Reader<std::process::ChildStdout>, ChildStderr: Reader<std::process::ChildStderr>);

macro_rules! readers {
    ($($name:ident),*) => {$(
        impl Read for $name {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf)
            }
        }

        impl AsyncRead for $name {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.get_mut().0.poll_read(cx, buf)
            }
        }
    )*};
}

readers!(ChildStdout, ChildStderr);

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
        self.get_mut().0.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.get_mut().0.flush())
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().0.poll_close(cx)
    }
}

//! A step's piped stdout and stderr read whole while it runs, so that a
//! command writing more than a pipe holds (64 KiB, pipe(7)) to both never
//! blocks on a full one: [`crate::Step::wait_with_output`] (blocking: the
//! step's wait loop polls the pipes with its subreaper's pipe, no thread),
//! and [`crate::Step::output`] (async: both read concurrently with the
//! step's future).

use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};

use futures::io::AsyncReadExt;

use super::pipe::{ChildStderr, ChildStdout};

/// What one read takes at most.
const CHUNK: usize = 64 * 1024;

/// The pipes still open, and what each gave so far.
#[derive(Debug, Default)]
pub(crate) struct Collect {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    out: Vec<u8>,
    err: Vec<u8>,
}

impl Collect {
    pub(crate) fn new(stdout: Option<ChildStdout>, stderr: Option<ChildStderr>) -> Collect {
        Collect { stdout, stderr, ..Collect::default() }
    }

    /// The pipes not at their end yet, to poll for input.
    pub(crate) fn poll_fds(&self) -> Vec<BorrowedFd<'_>> {
        let out = self.stdout.as_ref().and_then(|end| end.file().ok());
        let err = self.stderr.as_ref().and_then(|end| end.file().ok());
        out.into_iter().chain(err).map(AsFd::as_fd).collect()
    }

    /// Reads what each pipe holds now, without blocking; a pipe at its end
    /// is closed.
    pub(crate) fn drain(&mut self) -> io::Result<()> {
        if let Some(end) = &self.stdout
            && drain_one(end.file()?, &mut self.out)?
        {
            self.stdout = None;
        }
        if let Some(end) = &self.stderr
            && drain_one(end.file()?, &mut self.err)?
        {
            self.stderr = None;
        }
        Ok(())
    }

    /// Reads each pipe to its end (blocking), then gives stdout's bytes and
    /// stderr's.
    pub(crate) fn finish(mut self) -> io::Result<(Vec<u8>, Vec<u8>)> {
        if let Some(mut end) = self.stdout.take() {
            Read::read_to_end(&mut end, &mut self.out)?;
        }
        if let Some(mut end) = self.stderr.take() {
            Read::read_to_end(&mut end, &mut self.err)?;
        }
        Ok((self.out, self.err))
    }
}

/// Appends what `file` (non-blocking) holds to `into`; whether it is at
/// its end.
fn drain_one(mut file: &std::fs::File, into: &mut Vec<u8>) -> io::Result<bool> {
    loop {
        let at = into.len();
        into.resize(at + CHUNK, 0);
        let read = file.read(&mut into[at..]);
        into.truncate(at + *read.as_ref().unwrap_or(&0));
        match read {
            Ok(0) => return Ok(true),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Everything `end` gives until its end, read asynchronously (empty for
/// `None`: the stream was not piped).
pub(crate) async fn read_all<R: futures::io::AsyncRead + Unpin>(end: Option<R>) -> io::Result<Vec<u8>> {
    let mut all = Vec::new();
    if let Some(mut end) = end {
        end.read_to_end(&mut all).await?;
    }
    Ok(all)
}

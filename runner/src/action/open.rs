//! The step's stdin, stdout and stderr made real at its start: pipes,
//! `/dev/null`, copies of the caller's files.
//!
//! Every descriptor made here is close-on-exec: the step's subreaper, and
//! every other step's started meanwhile in this process, inherit a copy at
//! their clone; the command's child `dup2`s its ends onto 0, 1 and 2 (which
//! clears the flag on the copy), and any other copy goes at an exec or with
//! the subreaper's clean-up (`spawn::subreaper`), so a pipe's reader sees
//! end of file once the step's own processes have closed it. (A source that
//! is itself fd 0, 1 or 2 is copied above them before the clone:
//! `spawn::clone3::Exec`.)

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{Mode, OFlags};

use super::pipe::{ChildStderr, ChildStdin, ChildStdout};
use super::{Kind, Stdio};

/// The streams of one start.
#[derive(Debug, Default)]
pub(crate) struct Opened {
    /// What the command's fds 0, 1 and 2 become (`None`: inherited), held
    /// until the spawn has returned.
    child: [Option<OwnedFd>; 3],
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
}

impl Opened {
    /// The command's fds 0, 1 and 2 as the spawn takes them.
    pub(crate) fn child_fds(&self) -> [Option<BorrowedFd<'_>>; 3] {
        [0, 1, 2].map(|i| self.child[i].as_ref().map(AsFd::as_fd))
    }

    /// Closes this process's copies of the command's ends: once the
    /// command's processes close theirs, a reader sees end of file.
    pub(crate) fn spawned(&mut self) {
        self.child = [None, None, None];
    }
}

const NAMES: [&str; 3] = ["stdin", "stdout", "stderr"];

/// Opens what `stdio` (fds 0, 1, 2; `None`: inherited) asks for; the
/// error names the stream.
pub(crate) fn open(stdio: &[Option<Stdio>; 3]) -> Result<Opened, (&'static str, io::Error)> {
    let mut opened = Opened::default();
    for (fd, (wanted, name)) in stdio.iter().zip(NAMES).enumerate() {
        let failed = |e: io::Error| (name, e);
        let Some(Stdio(kind)) = wanted else { continue };
        opened.child[fd] = match kind {
            Kind::Inherit => None,
            Kind::Null => {
                let access = if fd == 0 { OFlags::RDONLY } else { OFlags::WRONLY };
                let null = rustix::fs::open("/dev/null", access | OFlags::CLOEXEC, Mode::empty())
                    .map_err(|e| failed(e.into()))?;
                Some(null)
            }
            // A copy: the options (and their clones) keep the file.
            Kind::File(file) => Some(rustix::io::fcntl_dupfd_cloexec(file.as_fd(), 3).map_err(|e| failed(e.into()))?),
            Kind::Piped => {
                let (read, write) =
                    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| failed(e.into()))?;
                let (child, ours) = if fd == 0 { (read, write) } else { (write, read) };
                rustix::fs::fcntl_setfl(&ours, OFlags::NONBLOCK).map_err(|e| failed(e.into()))?;
                match fd {
                    0 => opened.stdin = Some(ChildStdin::new(ours)),
                    1 => opened.stdout = Some(ChildStdout::new(ours)),
                    _ => opened.stderr = Some(ChildStderr::new(ours)),
                }
                Some(child)
            }
        };
    }
    Ok(opened)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn every_descriptor_is_close_on_exec_and_above_stdio() {
        let file = tempfile::tempfile().unwrap();
        let stdio = [Some(Stdio::null()), Some(Stdio::piped()), Some(Stdio::from(file))];
        let opened = open(&stdio).unwrap();
        for fd in opened.child_fds().into_iter().map(Option::unwrap) {
            assert!(fd.as_raw_fd() > 2);
            assert!(rustix::io::fcntl_getfd(fd).unwrap().contains(rustix::io::FdFlags::CLOEXEC));
        }
        let ours = opened.stdout.as_ref().unwrap().file().unwrap();
        assert!(rustix::io::fcntl_getfd(ours).unwrap().contains(rustix::io::FdFlags::CLOEXEC));
        assert!(rustix::fs::fcntl_getfl(ours).unwrap().contains(OFlags::NONBLOCK));
        assert!(opened.stdin.is_none() && opened.stderr.is_none());
        assert!(open(&[None, None, Some(Stdio::inherit())]).unwrap().child_fds().iter().all(Option::is_none));
    }
}

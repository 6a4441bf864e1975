//! `/proc/PID/cmdline`: the process's arguments, each followed by a NUL
//! byte. Spec: <https://docs.kernel.org/filesystems/proc.html#process-specific-subdirectories>
//! (Table 1-1, `cmdline`) and proc_pid_cmdline(5)
//! (<https://man7.org/linux/man-pages/man5/proc_pid_cmdline.5.html>).
//!
//! What the file can hold, and how each is read here:
//!
//! * `arg0\0arg1\0...argN\0`, the usual layout: N + 1 arguments; an empty
//!   argument (`""` on the command line) is two NULs in a row.
//! * No final NUL: a process that rewrote its argument area
//!   (`setproctitle`, `prctl(PR_SET_MM_ARG_*)`) may leave the last argument
//!   unterminated, or put its whole title, spaces included, in one string;
//!   the bytes after the last NUL are one more argument.
//! * Empty: a zombie (its memory is gone) or a kernel thread: no arguments.
//!
//! Any bytes are some command line, so there is no error to report: the
//! parser only splits, borrowing the input.

use core::iter::FusedIterator;

/// The arguments of one `/proc/PID/cmdline` reading, borrowed.
///
/// ```
/// use stepmon_sysusage::parse::CmdLine;
/// let line = CmdLine::new(b"cc1plus\0-quiet\0src/foo.cpp\0");
/// assert_eq!(line.args().collect::<Vec<_>>(), [&b"cc1plus"[..], b"-quiet", b"src/foo.cpp"]);
/// assert_eq!(line.argv0(), Some(&b"cc1plus"[..]));
/// assert!(CmdLine::new(b"").is_empty()); // a zombie or a kernel thread
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdLine<'a> {
    bytes: &'a [u8],
}

impl<'a> CmdLine<'a> {
    /// The arguments in `input` (the whole file). Never allocates.
    #[must_use]
    pub const fn new(input: &'a [u8]) -> CmdLine<'a> {
        CmdLine { bytes: input }
    }

    /// The bytes as read.
    #[must_use]
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Whether there are no arguments (an empty file).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The arguments in order, without their NULs.
    #[must_use]
    pub const fn args(&self) -> Args<'a> {
        Args { rest: self.bytes }
    }

    /// How many arguments there are (walks the input).
    #[must_use]
    pub fn len(&self) -> usize {
        self.args().count()
    }

    /// The first argument (the program as it was invoked).
    #[must_use]
    pub fn argv0(&self) -> Option<&'a [u8]> {
        self.args().next()
    }
}

/// The arguments of a [`CmdLine`], each borrowed from the input.
#[derive(Debug, Clone)]
pub struct Args<'a> {
    /// What is left: the next argument starts here.
    rest: &'a [u8],
}

impl<'a> Iterator for Args<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        match self.rest.iter().position(|&b| b == 0) {
            Some(nul) => {
                let arg = self.rest.get(..nul).unwrap_or_default();
                // The NUL ends this argument; it never starts an empty one
                // after it (`a\0` is one argument, `a\0\0` two).
                self.rest = self.rest.get(nul.saturating_add(1)..).unwrap_or_default();
                Some(arg)
            }
            None => Some(core::mem::take(&mut self.rest)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // At least one argument when bytes are left, at most one per byte.
        (usize::from(!self.rest.is_empty()), Some(self.rest.len()))
    }
}

impl FusedIterator for Args<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(input: &[u8]) -> Vec<&[u8]> {
        CmdLine::new(input).args().collect()
    }

    #[test]
    fn the_usual_layout_with_a_final_nul() {
        let input = b"/usr/lib/gcc/x86_64-linux-gnu/14/cc1plus\0-quiet\0-I\0include\0src/foo.cpp\0-o\0/tmp/cc.s\0";
        let line = CmdLine::new(input);
        assert_eq!(line.len(), 7);
        assert_eq!(line.argv0(), Some(&b"/usr/lib/gcc/x86_64-linux-gnu/14/cc1plus"[..]));
        assert_eq!(args(input)[4], b"src/foo.cpp");
        assert_eq!(args(input).last(), Some(&&b"/tmp/cc.s"[..]));
    }

    #[test]
    fn an_empty_file_has_no_arguments() {
        let line = CmdLine::new(b"");
        assert!(line.is_empty());
        assert_eq!((line.len(), line.argv0()), (0, None));
    }

    #[test]
    fn without_the_final_nul_the_rest_is_the_last_argument() {
        assert_eq!(args(b"sh\0-c\0true"), [&b"sh"[..], b"-c", b"true"]);
        // A rewritten title: one string, spaces and all.
        assert_eq!(args(b"postgres: writer process   "), [&b"postgres: writer process   "[..]]);
    }

    #[test]
    fn empty_arguments_are_kept() {
        // `printf ''`: argv = ["printf", ""].
        assert_eq!(args(b"printf\0\0"), [&b"printf"[..], b""]);
        assert_eq!(args(b"\0"), [&b""[..]]);
        assert_eq!(args(b"\0\0x"), [&b""[..], b"", b"x"]);
    }

    #[test]
    fn any_bytes_split_at_nul_and_the_iterator_is_fused() {
        let input = b"\xff\xfe\0caf\xc3\xa9\0";
        let mut it = CmdLine::new(input).args();
        assert_eq!(it.size_hint(), (1, Some(input.len())));
        assert_eq!(it.next(), Some(&b"\xff\xfe"[..]));
        assert_eq!(it.next(), Some(&b"caf\xc3\xa9"[..]));
        assert_eq!((it.next(), it.next()), (None, None));
        assert_eq!(it.size_hint(), (0, Some(0)));
    }
}

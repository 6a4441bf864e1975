//! A process's arguments, from `/proc/PID/cmdline`
//! (<https://docs.kernel.org/filesystems/proc.html#process-specific-subdirectories>,
//! proc_pid_cmdline(5)), kept short: the command name alone (`comm`, 15
//! bytes) does not say which of 312 compiler runs peaked, its input file
//! does. Read while the process runs: a zombie's file is empty. Secrets
//! are hidden before the arguments are kept (`super::redact`).

use stepmon_sysusage::parse::CmdLine;

/// Arguments kept per process: argv\[0\] and the next two, and the last
/// five: a compiler's input comes after its many `-I` and `-D` options.
const MAX_ARGS: usize = 8;
/// Of them, from the start.
const FIRST_ARGS: usize = 3;
/// Bytes kept of each argument.
const MAX_ARG_BYTES: usize = 80;
/// The longest UTF-8 encoding of a char: bytes read past the cut so that a
/// char starting before it is whole (not taken for invalid UTF-8).
const MAX_CHAR_BYTES: usize = 4;

/// The arguments of `pid`, at most [`MAX_ARGS`] of at most [`MAX_ARG_BYTES`]
/// bytes each (invalid UTF-8 replaced); `None` when the file cannot be read
/// (the process is gone, another user's under `hidepid`) or is empty (a
/// zombie, a kernel thread, and a process in the middle of its exec: the
/// kernel sets the new arguments' place (`mm->arg_start`, fs/binfmt_elf.c)
/// after the point where the exec cannot fail any more, so a parent told
/// that its child's exec succeeded can still read an empty file).
pub(super) fn of(pid: u32) -> Option<Vec<String>> {
    let bytes = stepmon_fdread::read_path(format!("/proc/{pid}/cmdline")).ok()?;
    let mut args = kept(CmdLine::new(&bytes));
    super::redact::redact(&mut args);
    (!args.is_empty()).then_some(args)
}

/// The arguments of `line` as [`of`] keeps them.
fn kept(line: CmdLine<'_>) -> Vec<String> {
    let count = line.args().count();
    let skipped = count.saturating_sub(MAX_ARGS);
    line.args()
        .enumerate()
        .filter(|(i, _)| *i < FIRST_ARGS || *i >= FIRST_ARGS + skipped)
        .map(|(_, a)| cut(a))
        .collect()
}

/// `arg` as text of at most [`MAX_ARG_BYTES`] bytes, cut at a char boundary.
fn cut(arg: &[u8]) -> String {
    let head = arg.get(..MAX_ARG_BYTES.saturating_add(MAX_CHAR_BYTES)).unwrap_or(arg);
    let mut text = String::from_utf8_lossy(head).into_owned();
    if text.len() > MAX_ARG_BYTES {
        let mut end = MAX_ARG_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn at_most_eight_args_of_eighty_bytes() {
        let mut file = Vec::new();
        for i in 0..12 {
            file.extend_from_slice(format!("arg{i}").as_bytes());
            file.push(0);
        }
        let args = kept(CmdLine::new(&file));
        assert_eq!(args, ["arg0", "arg1", "arg2", "arg7", "arg8", "arg9", "arg10", "arg11"]);
        let long = vec![b'x'; 500];
        assert_eq!(kept(CmdLine::new(&long)), ["x".repeat(80)]);
        assert_eq!(cut(&[b'y'; 80]), "y".repeat(80), "exactly 80 bytes stay whole");
    }

    #[test]
    fn cut_at_a_char_boundary_and_invalid_utf8_replaced() {
        // 79 ASCII bytes then "é" (2 bytes): it would end at byte 81, so it goes.
        let mut arg = vec![b'a'; 79];
        arg.extend_from_slice("é".as_bytes());
        arg.extend_from_slice(b"tail");
        assert_eq!(cut(&arg), "a".repeat(79));
        // A 4-byte char starting at byte 76 ends at 80: kept whole.
        let mut arg = vec![b'a'; 76];
        arg.extend_from_slice("🦀".as_bytes());
        arg.extend_from_slice(b"more");
        assert_eq!(cut(&arg), format!("{}🦀", "a".repeat(76)));
        assert_eq!(cut(b"caf\xff.c"), "caf\u{fffd}.c");
    }

    /// The args of `pid` once its exec of `program` has set them up (see
    /// [`of`]; before the exec a spawned child is a copy of the test binary,
    /// seen in the VM tier's slow guest), or what there is after 5 s.
    pub(in crate::processes) fn until_read(pid: u32, program: &str) -> Option<Vec<String>> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let args = of(pid);
            let execed = args.as_ref().and_then(|a| a.first()).is_some_and(|a| a == program);
            if execed || std::time::Instant::now() > deadline {
                return args;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn a_running_process_has_its_args_and_a_zombie_or_gone_one_none() {
        let _children = crate::CHILDREN_OF_THE_TEST_PROCESS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let args = until_read(child.id(), "sleep");
        child.kill().unwrap();
        // Not reaped yet: a zombie, whose cmdline is empty once it has exited.
        let zombie = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !zombie(child.id()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(zombie(child.id()), "the killed child is a zombie until reaped");
        let as_zombie = of(child.id());
        child.wait().unwrap();
        assert_eq!(args, Some(vec!["sleep".to_owned(), "5".to_owned()]));
        assert_eq!(as_zombie, None, "a zombie's cmdline is empty");
        assert_eq!(of(child.id()), None, "reaped: no /proc/PID");
    }
}

//! One process's procfs files: `/proc/PID/stat`, `/proc/PID/status` and
//! `/proc/PID/io`, spec: <https://docs.kernel.org/filesystems/proc.html#process-specific-subdirectories>
//! (Table 1-2 `status`, Table 1-4 `stat`, section 3.3 `io`), and proc_pid_stat(5).

use stepmon_cgroupfs_parse::lines::Lines;
use stepmon_cgroupfs_parse::number::parse_u64;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

/// The fields of `/proc/PID/stat` that per-process accounting uses, in the
/// kernel's units (clock ticks, USER_HZ, for the times).
///
/// The command (field 2) is in parentheses and may itself hold spaces and
/// parentheses; the fields after it start after the *last* `)`.
///
/// ```
/// use stepmon_sysusage::parse::ProcStat;
/// let s = ProcStat::parse(b"42 (a b) c) S 7 42 42 0 -1 4194560 120 0 3 0 15 4 0 0 20 0 2 0 9876 1 2\n")?;
/// assert_eq!((s.comm, s.ppid, s.utime, s.stime, s.threads, s.start_ticks), (&b"a b) c"[..], 7, 15, 4, 2, 9876));
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcStat<'a> {
    /// Field 1: the process id.
    pub pid: u64,
    /// Field 2 without its parentheses: the command name (`comm`, 15 bytes at most).
    pub comm: &'a [u8],
    /// Field 4: the parent's process id.
    pub ppid: u64,
    /// Field 10: minor faults.
    pub minflt: u64,
    /// Field 12: major faults.
    pub majflt: u64,
    /// Field 14: user CPU, clock ticks.
    pub utime: u64,
    /// Field 15: system CPU, clock ticks.
    pub stime: u64,
    /// Field 20: threads.
    pub threads: u64,
    /// Field 22: start time, clock ticks after boot.
    pub start_ticks: u64,
}

impl<'a> ProcStat<'a> {
    /// Parses the one-line file. Never allocates.
    pub fn parse(input: &'a [u8]) -> Result<ProcStat<'a>> {
        let err = |kind, offset| ParseError::new(kind, 1, offset);
        let open = input.iter().position(|&b| b == b'(').ok_or(err(ErrorKind::MissingField, 0))?;
        let close =
            input.iter().rposition(|&b| b == b')').filter(|&c| c > open).ok_or(err(ErrorKind::MissingField, open))?;
        let head = input.get(..open).unwrap_or_default();
        let pid_text = head.strip_suffix(b" ").ok_or(err(ErrorKind::MissingSeparator, open))?;
        let pid = parse_u64(pid_text).map_err(|k| err(k, 0))?;
        let comm = input.get(open.saturating_add(1)..close).unwrap_or_default();
        let rest = input.get(close.saturating_add(1)..).unwrap_or_default();
        let rest = rest.strip_suffix(b"\n").unwrap_or(rest);
        let rest = rest.strip_prefix(b" ").ok_or(err(ErrorKind::MissingSeparator, close.saturating_add(1)))?;
        let mut stat =
            ProcStat { pid, comm, ppid: 0, minflt: 0, majflt: 0, utime: 0, stime: 0, threads: 0, start_ticks: 0 };
        let mut offset = close.saturating_add(2);
        let mut last = 0;
        // Fields 3.. after the command.
        for (field, token) in (3usize..).zip(rest.split(|&b| b == b' ')) {
            let slot = match field {
                4 => &mut stat.ppid,
                10 => &mut stat.minflt,
                12 => &mut stat.majflt,
                14 => &mut stat.utime,
                15 => &mut stat.stime,
                20 => &mut stat.threads,
                22 => &mut stat.start_ticks,
                _ => {
                    offset = offset.saturating_add(token.len()).saturating_add(1);
                    continue;
                }
            };
            *slot = parse_u64(token).map_err(|k| err(k, offset))?;
            offset = offset.saturating_add(token.len()).saturating_add(1);
            last = field;
            if field == 22 {
                break;
            }
        }
        if last < 22 {
            return Err(err(ErrorKind::MissingField, input.len()));
        }
        Ok(stat)
    }
}

/// The value of `key` in a `Key:   value [kB]` file, as a number (`None`
/// when the key is absent).
fn keyed(input: &[u8], key: &[u8]) -> Result<Option<u64>> {
    for line in Lines::new(input) {
        let Some(rest) = line.bytes.strip_prefix(key).and_then(|r| r.strip_prefix(b":")) else { continue };
        let value = rest.trim_ascii_start();
        let value = value.strip_suffix(b" kB").unwrap_or(value);
        return parse_u64(value.trim_ascii_end()).map(Some).map_err(|k| line.error(k));
    }
    Ok(None)
}

/// The fields of `/proc/PID/status` that per-process accounting uses.
///
/// ```
/// use stepmon_sysusage::parse::ProcStatus;
/// let s = ProcStatus::parse(b"Name:\tsleep\nVmHWM:\t    1024 kB\nThreads:\t1\n")?;
/// assert_eq!((s.vm_hwm_kib, s.threads), (Some(1024), Some(1)));
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProcStatus {
    /// `VmHWM`: peak resident set, kB; absent for a kernel thread or a zombie.
    pub vm_hwm_kib: Option<u64>,
    /// `Threads`.
    pub threads: Option<u64>,
    /// `RssAnon`: resident anonymous memory, kB (4.5+).
    pub rss_anon_kib: Option<u64>,
    /// `RssShmem`: resident shared memory (shmem, tmpfs), kB (4.5+).
    pub rss_shmem_kib: Option<u64>,
}

impl ProcStatus {
    /// Parses the file. Never allocates.
    pub fn parse(input: &[u8]) -> Result<ProcStatus> {
        Ok(ProcStatus {
            vm_hwm_kib: keyed(input, b"VmHWM")?,
            threads: keyed(input, b"Threads")?,
            rss_anon_kib: keyed(input, b"RssAnon")?,
            rss_shmem_kib: keyed(input, b"RssShmem")?,
        })
    }
}

/// The proportional set sizes of `/proc/PID/smaps_rollup` (Linux 5.3+):
/// each page shared by N processes counts 1/N in each, so a tree's sum
/// counts a shared page once
/// (<https://docs.kernel.org/filesystems/proc.html#proc-pid-smaps-rollup>).
///
/// ```
/// use stepmon_sysusage::parse::SmapsRollup;
/// let s = SmapsRollup::parse(b"55a0-7ffd ---p 00000000 00:00 0    [rollup]\nRss:    2048 kB\nPss:    1024 kB\nPss_Anon:    512 kB\nPss_File:    256 kB\nPss_Shmem:    256 kB\n")?;
/// assert_eq!((s.pss_anon_kib, s.pss_shmem_kib), (Some(512), Some(256)));
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SmapsRollup {
    /// `Pss_Anon`, kB.
    pub pss_anon_kib: Option<u64>,
    /// `Pss_Shmem`, kB.
    pub pss_shmem_kib: Option<u64>,
}

impl SmapsRollup {
    /// Parses the file (its first line, the mapping header, is skipped as
    /// no key matches it). Never allocates.
    pub fn parse(input: &[u8]) -> Result<SmapsRollup> {
        Ok(SmapsRollup { pss_anon_kib: keyed(input, b"Pss_Anon")?, pss_shmem_kib: keyed(input, b"Pss_Shmem")? })
    }
}

/// The storage bytes of `/proc/PID/io` (task IO accounting).
///
/// ```
/// use stepmon_sysusage::parse::ProcIo;
/// let io = ProcIo::parse(b"rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n")?;
/// assert_eq!((io.read_bytes, io.write_bytes), (Some(4096), Some(8192)));
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProcIo {
    /// `read_bytes`: bytes the process caused to be read from storage.
    pub read_bytes: Option<u64>,
    /// `write_bytes`: bytes it caused to be written to storage.
    pub write_bytes: Option<u64>,
}

impl ProcIo {
    /// Parses the file. Never allocates.
    pub fn parse(input: &[u8]) -> Result<ProcIo> {
        Ok(ProcIo { read_bytes: keyed(input, b"read_bytes")?, write_bytes: keyed(input, b"write_bytes")? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_of_a_real_line_and_garbage() {
        let line = b"1234 (cargo build) R 1 1234 1234 0 -1 4194304 5000 0 7 0 321 45 0 0 20 0 9 0 123456 100000 500 18446744073709551615\n";
        let s = ProcStat::parse(line).unwrap();
        assert_eq!((s.pid, s.comm, s.ppid), (1234, &b"cargo build"[..], 1));
        assert_eq!((s.minflt, s.majflt, s.utime, s.stime, s.threads, s.start_ticks), (5000, 7, 321, 45, 9, 123456));
        for bad in
            [&b""[..], b"12 (x", b"12 (x) S 1", b"x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", b")("]
        {
            assert!(ProcStat::parse(bad).is_err(), "{:?}", core::str::from_utf8(bad));
        }
    }

    #[test]
    fn status_and_io_keys() {
        assert_eq!(ProcStatus::parse(b"Name:\tkthreadd\nThreads:\t1\n").unwrap().vm_hwm_kib, None);
        assert!(ProcStatus::parse(b"VmHWM:\tlots kB\n").is_err());
        assert_eq!(ProcIo::parse(b"rchar: 1\n").unwrap(), ProcIo::default());
        // `read_bytes` must not match `cancelled_write_bytes` or a longer key.
        let io = ProcIo::parse(b"cancelled_write_bytes: 9\nwrite_bytes: 3\n").unwrap();
        assert_eq!(io.write_bytes, Some(3));
    }
}

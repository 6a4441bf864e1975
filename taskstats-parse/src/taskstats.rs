//! `struct taskstats` (`include/uapi/linux/taskstats.h`;
//! <https://docs.kernel.org/accounting/taskstats.html>) and the replies that
//! carry it: the record the kernel sends a cpumask listener at every task's
//! exit (`TASKSTATS_CMD_NEW` with `TASKSTATS_TYPE_AGGR_PID`, plus
//! `TASKSTATS_TYPE_AGGR_TGID` when the last thread of a multi-threaded
//! process exits) and the answer to `TASKSTATS_CMD_GET`.
//!
//! The struct only grows: a new version appends fields and bumps `version`,
//! so this parser reads it by its declared length (the attribute's
//! `nla_len`), not by version: a field past the end of an older kernel's
//! record is `None`, and a newer kernel's extra bytes are ignored. Offsets
//! follow the header's alignment attributes and were checked against
//! version-16 records of 560 bytes captured on Linux 6.18 (`tests/data/`).
//!
//! Units (`Documentation/accounting/taskstats-struct.rst`): times marked
//! `_us` are µs, `_ns` ns, `ac_btime` is seconds since the epoch,
//! `hiwater_rss` and `hiwater_vm` are KiB. The delay fields are only
//! counted while delay accounting is on (`kernel.task_delayacct=1` or the
//! `delayacct` boot option; `Documentation/accounting/delay-accounting.rst`):
//! with it off they are 0, which a caller must not read as "no delay". The
//! CPU fields are the exception: `cpu_count`, `cpu_delay_total` and
//! `cpu_run_virtual_total` come from the scheduler's own `sched_info` and
//! `sum_exec_runtime`, filled either way (seen in the captures, taken with
//! `kernel.task_delayacct=0`).

use crate::bytes::{u8_at, u32_at, u64_at};
use crate::genl::{Attrs, GenlMessage, find, until_nul};
use crate::{Error, Result};

/// `TASKSTATS_GENL_NAME`.
pub const FAMILY_NAME: &[u8] = b"TASKSTATS";
/// `TASKSTATS_CMD_GET`: user to kernel, ask for a pid's or tgid's record.
pub const CMD_GET: u8 = 1;
/// `TASKSTATS_CMD_NEW`: kernel to user, a record.
pub const CMD_NEW: u8 = 2;
/// `TASKSTATS_TYPE_PID` (u32).
pub const TYPE_PID: u16 = 1;
/// `TASKSTATS_TYPE_TGID` (u32).
pub const TYPE_TGID: u16 = 2;
/// `TASKSTATS_TYPE_STATS` (`struct taskstats`).
pub const TYPE_STATS: u16 = 3;
/// `TASKSTATS_TYPE_AGGR_PID` (nested: PID, STATS).
pub const TYPE_AGGR_PID: u16 = 4;
/// `TASKSTATS_TYPE_AGGR_TGID` (nested: TGID, STATS).
pub const TYPE_AGGR_TGID: u16 = 5;
/// `TASKSTATS_CMD_ATTR_PID`: the pid asked for by `TASKSTATS_CMD_GET`.
pub const CMD_ATTR_PID: u16 = 1;
/// `TASKSTATS_CMD_ATTR_TGID`.
pub const CMD_ATTR_TGID: u16 = 2;
/// `TASKSTATS_CMD_ATTR_REGISTER_CPUMASK`: a cpulist string such as `"0-7"`.
pub const CMD_ATTR_REGISTER_CPUMASK: u16 = 3;
/// `TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK`.
pub const CMD_ATTR_DEREGISTER_CPUMASK: u16 = 4;
/// `TS_COMM_LEN`: the size of `ac_comm`.
pub const COMM_LEN: usize = 32;

/// `AFORK` in `ac_flag` (`include/uapi/linux/acct.h`): forked but did not exec.
pub const AFLAG_FORK: u8 = 0x01;

/// Byte offsets of the fields in `struct taskstats` (x86-64 and every
/// other Linux ABI: the header aligns each group to 8 explicitly).
mod at {
    pub(super) const VERSION: usize = 0;
    pub(super) const AC_EXITCODE: usize = 4;
    pub(super) const AC_FLAG: usize = 8;
    pub(super) const AC_NICE: usize = 9;
    pub(super) const CPU_COUNT: usize = 16;
    pub(super) const CPU_DELAY_TOTAL: usize = 24;
    pub(super) const BLKIO_COUNT: usize = 32;
    pub(super) const BLKIO_DELAY_TOTAL: usize = 40;
    pub(super) const SWAPIN_COUNT: usize = 48;
    pub(super) const SWAPIN_DELAY_TOTAL: usize = 56;
    pub(super) const CPU_RUN_REAL_TOTAL: usize = 64;
    pub(super) const CPU_RUN_VIRTUAL_TOTAL: usize = 72;
    pub(super) const AC_COMM: usize = 80;
    pub(super) const AC_UID: usize = 120;
    pub(super) const AC_GID: usize = 124;
    pub(super) const AC_PID: usize = 128;
    pub(super) const AC_PPID: usize = 132;
    pub(super) const AC_BTIME: usize = 136;
    pub(super) const AC_ETIME: usize = 144;
    pub(super) const AC_UTIME: usize = 152;
    pub(super) const AC_STIME: usize = 160;
    pub(super) const AC_MINFLT: usize = 168;
    pub(super) const AC_MAJFLT: usize = 176;
    pub(super) const HIWATER_RSS: usize = 200;
    pub(super) const HIWATER_VM: usize = 208;
    pub(super) const READ_CHAR: usize = 216;
    pub(super) const WRITE_CHAR: usize = 224;
    pub(super) const READ_BYTES: usize = 248;
    pub(super) const WRITE_BYTES: usize = 256;
    pub(super) const CANCELLED_WRITE_BYTES: usize = 264;
    pub(super) const NVCSW: usize = 272;
    pub(super) const NIVCSW: usize = 280;
    pub(super) const FREEPAGES_COUNT: usize = 312;
    pub(super) const FREEPAGES_DELAY_TOTAL: usize = 320;
    pub(super) const THRASHING_COUNT: usize = 328;
    pub(super) const THRASHING_DELAY_TOTAL: usize = 336;
    pub(super) const AC_BTIME64: usize = 344;
    pub(super) const COMPACT_COUNT: usize = 352;
    pub(super) const COMPACT_DELAY_TOTAL: usize = 360;
    pub(super) const AC_TGID: usize = 368;
    pub(super) const AC_TGETIME: usize = 376;
    pub(super) const WPCOPY_COUNT: usize = 400;
    pub(super) const WPCOPY_DELAY_TOTAL: usize = 408;
    pub(super) const IRQ_COUNT: usize = 416;
    pub(super) const IRQ_DELAY_TOTAL: usize = 424;
}

/// One `struct taskstats`, borrowed. Accessors return `None` for a field
/// the record is too short to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskStats<'a> {
    bytes: &'a [u8],
}

macro_rules! u64_fields {
    ($($(#[$doc:meta])* $name:ident = $at:ident;)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $name(&self) -> Option<u64> {
            u64_at(self.bytes, at::$at)
        }
    )*};
}

impl<'a> TaskStats<'a> {
    /// The smallest record read: up to `ac_btime`, which identifies the
    /// task (pid reuse) — version 3's accounting fields.
    pub const MIN_LEN: usize = at::AC_BTIME + 4;

    /// Wraps a `TASKSTATS_TYPE_STATS` payload.
    pub fn new(bytes: &'a [u8]) -> Result<TaskStats<'a>> {
        if bytes.len() < Self::MIN_LEN {
            return Err(Error::Truncated { what: "struct taskstats", offset: 0 });
        }
        Ok(TaskStats { bytes })
    }

    /// The record's bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// `version` (`TASKSTATS_VERSION` of the kernel that sent it).
    #[must_use]
    pub fn version(&self) -> u16 {
        crate::bytes::u16_at(self.bytes, at::VERSION).unwrap_or(0)
    }

    /// `ac_exitcode`: the wait status of the task's exit.
    #[must_use]
    pub fn exit_code(&self) -> Option<u32> {
        u32_at(self.bytes, at::AC_EXITCODE)
    }

    /// `ac_flag` (`AFORK`, `ASU`, `ACORE`, `AXSIG`).
    #[must_use]
    pub fn flags(&self) -> Option<u8> {
        u8_at(self.bytes, at::AC_FLAG)
    }

    /// `ac_nice`.
    #[must_use]
    pub fn nice(&self) -> Option<i8> {
        u8_at(self.bytes, at::AC_NICE).map(|b| i8::from_ne_bytes([b]))
    }

    /// `ac_comm` up to its NUL: the task's command name (at most 15 bytes
    /// in practice: the kernel's `TASK_COMM_LEN` is 16).
    #[must_use]
    pub fn comm(&self) -> &'a [u8] {
        let end = at::AC_COMM.saturating_add(COMM_LEN);
        until_nul(self.bytes.get(at::AC_COMM..end).unwrap_or_default())
    }

    /// `ac_uid`.
    #[must_use]
    pub fn uid(&self) -> Option<u32> {
        u32_at(self.bytes, at::AC_UID)
    }

    /// `ac_gid`.
    #[must_use]
    pub fn gid(&self) -> Option<u32> {
        u32_at(self.bytes, at::AC_GID)
    }

    /// `ac_pid`: the task's id (a thread id for a thread).
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        u32_at(self.bytes, at::AC_PID)
    }

    /// `ac_ppid`: the parent's tgid at the time of the record (after
    /// reparenting: the subreaper or init for an orphan).
    #[must_use]
    pub fn ppid(&self) -> Option<u32> {
        u32_at(self.bytes, at::AC_PPID)
    }

    /// `ac_btime`: start, seconds since the epoch (32 bits).
    #[must_use]
    pub fn btime(&self) -> Option<u32> {
        u32_at(self.bytes, at::AC_BTIME)
    }

    /// The start in seconds since the epoch: `ac_btime64` where the record
    /// has it, else `ac_btime`.
    #[must_use]
    pub fn start_seconds(&self) -> Option<u64> {
        u64_at(self.bytes, at::AC_BTIME64).or_else(|| self.btime().map(u64::from))
    }

    /// `ac_tgid`: the thread group (process) id.
    #[must_use]
    pub fn tgid(&self) -> Option<u32> {
        u32_at(self.bytes, at::AC_TGID)
    }

    u64_fields! {
        /// `cpu_count`: delay accounting's count of CPU waits.
        cpu_count = CPU_COUNT;
        /// `cpu_delay_total`, ns: time runnable but waiting for a CPU.
        cpu_delay_total_ns = CPU_DELAY_TOTAL;
        /// `blkio_count`.
        blkio_count = BLKIO_COUNT;
        /// `blkio_delay_total`, ns: waiting for synchronous block IO.
        blkio_delay_total_ns = BLKIO_DELAY_TOTAL;
        /// `swapin_count`.
        swapin_count = SWAPIN_COUNT;
        /// `swapin_delay_total`, ns.
        swapin_delay_total_ns = SWAPIN_DELAY_TOTAL;
        /// `cpu_run_real_total`, ns: user + system time as the tick-sampled
        /// `ac_utime + ac_stime` (kernel/delayacct.c `delayacct_add_tsk`).
        cpu_run_real_total_ns = CPU_RUN_REAL_TOTAL;
        /// `cpu_run_virtual_total`, ns: the scheduler's exact run time
        /// (`sum_exec_runtime`), not sampled at ticks.
        cpu_run_virtual_total_ns = CPU_RUN_VIRTUAL_TOTAL;
        /// `ac_etime`, µs: elapsed time since the start.
        elapsed_us = AC_ETIME;
        /// `ac_utime`, µs: user CPU, sampled at timer ticks.
        utime_us = AC_UTIME;
        /// `ac_stime`, µs: system CPU, sampled at timer ticks.
        stime_us = AC_STIME;
        /// `ac_minflt`.
        minor_faults = AC_MINFLT;
        /// `ac_majflt`.
        major_faults = AC_MAJFLT;
        /// `hiwater_rss`, KiB: peak resident set size of its memory map.
        hiwater_rss_kib = HIWATER_RSS;
        /// `hiwater_vm`, KiB: peak virtual size.
        hiwater_vm_kib = HIWATER_VM;
        /// `read_char`: bytes read through read(2) and the like.
        read_chars = READ_CHAR;
        /// `write_char`.
        write_chars = WRITE_CHAR;
        /// `read_bytes`: bytes the task caused to be read from storage.
        read_bytes = READ_BYTES;
        /// `write_bytes`: bytes the task caused to be written to storage.
        write_bytes = WRITE_BYTES;
        /// `cancelled_write_bytes`: dirtied, then truncated before writeback.
        cancelled_write_bytes = CANCELLED_WRITE_BYTES;
        /// `nvcsw`: voluntary context switches.
        voluntary_switches = NVCSW;
        /// `nivcsw`: involuntary context switches.
        involuntary_switches = NIVCSW;
        /// `freepages_count`.
        freepages_count = FREEPAGES_COUNT;
        /// `freepages_delay_total`, ns: memory reclaim.
        freepages_delay_total_ns = FREEPAGES_DELAY_TOTAL;
        /// `thrashing_count`.
        thrashing_count = THRASHING_COUNT;
        /// `thrashing_delay_total`, ns.
        thrashing_delay_total_ns = THRASHING_DELAY_TOTAL;
        /// `compact_count`.
        compact_count = COMPACT_COUNT;
        /// `compact_delay_total`, ns.
        compact_delay_total_ns = COMPACT_DELAY_TOTAL;
        /// `ac_tgetime`, ns: the thread group's elapsed time.
        thread_group_elapsed_ns = AC_TGETIME;
        /// `wpcopy_count`.
        wpcopy_count = WPCOPY_COUNT;
        /// `wpcopy_delay_total`, ns: write-protect copy.
        wpcopy_delay_total_ns = WPCOPY_DELAY_TOTAL;
        /// `irq_count`.
        irq_count = IRQ_COUNT;
        /// `irq_delay_total`, ns.
        irq_delay_total_ns = IRQ_DELAY_TOTAL;
    }
}

/// A `TASKSTATS_CMD_NEW` message: the task's record, and the process's
/// aggregate when the message reports the exit of its last thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TaskstatsReply<'a> {
    /// `TASKSTATS_TYPE_AGGR_PID`: the pid and its record.
    pub pid: Option<(u32, TaskStats<'a>)>,
    /// `TASKSTATS_TYPE_AGGR_TGID`: the tgid and the thread group's sums.
    pub tgid: Option<(u32, TaskStats<'a>)>,
}

impl<'a> TaskstatsReply<'a> {
    /// Reads a taskstats netlink message's payload (genetlink header and attributes).
    pub fn parse(payload: &'a [u8]) -> Result<TaskstatsReply<'a>> {
        let message = GenlMessage::parse(payload)?;
        if message.cmd != CMD_NEW {
            return Err(Error::UnexpectedKind { expected: "TASKSTATS_CMD_NEW", found: u32::from(message.cmd) });
        }
        let mut reply = TaskstatsReply::default();
        for attr in message.attrs() {
            let attr = attr?;
            match attr.kind {
                TYPE_AGGR_PID => reply.pid = Some(aggregate(attr.nested(), TYPE_PID, "TASKSTATS_TYPE_PID")?),
                TYPE_AGGR_TGID => reply.tgid = Some(aggregate(attr.nested(), TYPE_TGID, "TASKSTATS_TYPE_TGID")?),
                _ => {}
            }
        }
        Ok(reply)
    }
}

fn aggregate<'a>(attrs: Attrs<'a>, id_kind: u16, id_name: &'static str) -> Result<(u32, TaskStats<'a>)> {
    let id = find(attrs.clone(), id_kind)?.ok_or(Error::MissingAttribute { what: id_name })?.u32()?;
    let stats = find(attrs, TYPE_STATS)?.ok_or(Error::MissingAttribute { what: "TASKSTATS_TYPE_STATS" })?;
    Ok((id, TaskStats::new(stats.payload)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::Messages;

    fn reply(datagram: &[u8]) -> TaskstatsReply<'_> {
        let mut messages = Messages::new(datagram);
        let m = messages.next().unwrap().unwrap();
        assert!(messages.next().is_none());
        TaskstatsReply::parse(m.payload).unwrap()
    }

    #[test]
    fn an_exit_record_of_sh_true() {
        let r = reply(include_bytes!("../tests/data/exit-sh.bin"));
        assert!(r.tgid.is_none(), "single-threaded: no thread-group aggregate");
        let (pid, s) = r.pid.unwrap();
        assert_eq!((s.version(), s.as_bytes().len()), (16, 560));
        assert_eq!(s.comm(), b"sh");
        assert_eq!((s.pid(), s.tgid(), s.ppid()), (Some(pid), Some(pid), Some(32691)));
        assert_eq!(s.start_seconds(), s.btime().map(u64::from));
        assert_eq!(s.hiwater_rss_kib(), Some(1456));
        assert_eq!(s.exit_code(), Some(0));
        // kernel.task_delayacct=0 on the capture host: no block IO delay, but
        // the scheduler's run time and run-queue wait are there.
        assert_eq!(s.blkio_delay_total_ns(), Some(0));
        assert_eq!((s.cpu_run_virtual_total_ns(), s.cpu_delay_total_ns()), (Some(233_590), Some(2_097_042)));
        // Ticks: sh ran less than one, so the sampled times are 0.
        assert_eq!((s.utime_us(), s.stime_us(), s.cpu_run_real_total_ns()), (Some(0), Some(0), Some(0)));
    }

    #[test]
    fn dd_with_fsync_wrote_its_four_mebibytes() {
        let (_, s) = reply(include_bytes!("../tests/data/exit-dd-fsync.bin")).pid.unwrap();
        assert_eq!(s.comm(), b"dd");
        assert_eq!(s.write_bytes(), Some(4 * 1024 * 1024 + 8192));
        assert!(s.write_chars().unwrap() >= 4 * 1024 * 1024);
    }

    #[test]
    fn the_last_thread_carries_the_thread_group_sums() {
        let r = reply(include_bytes!("../tests/data/exit-thread-group.bin"));
        let ((pid, leader), (tgid, group)) = (r.pid.unwrap(), r.tgid.unwrap());
        assert_eq!(pid, tgid);
        assert_eq!(leader.comm(), b"python3");
        // The group's user time includes the other thread's (11932 µs, exit-record not kept).
        assert_eq!((leader.utime_us(), group.utime_us()), (Some(44000), Some(55932)));
        // cpu_run_real_total is utime + stime in ns.
        assert_eq!(leader.cpu_run_real_total_ns(), Some((44000 + 12000) * 1000));
    }

    #[test]
    fn a_get_reply_for_a_live_pid() {
        let r = reply(include_bytes!("../tests/data/get-pid-reply.bin"));
        let (pid, s) = r.pid.unwrap();
        assert_eq!(s.pid(), Some(pid));
        assert_eq!(s.comm(), b"python3");
    }

    #[test]
    fn short_records_have_absent_fields_not_zeros() {
        let full = include_bytes!("../tests/data/exit-sh.bin");
        let (_, s) = reply(full).pid.unwrap();
        let v8 = TaskStats::new(&s.as_bytes()[..at::FREEPAGES_COUNT]).unwrap();
        assert_eq!(v8.pid(), s.pid());
        assert_eq!(v8.write_bytes(), s.write_bytes());
        assert_eq!((v8.freepages_count(), v8.tgid(), v8.irq_count()), (None, None, None));
        assert_eq!(v8.start_seconds(), s.btime().map(u64::from), "falls back to the 32-bit start");
        assert!(TaskStats::new(&s.as_bytes()[..TaskStats::MIN_LEN - 1]).is_err());
    }

    #[test]
    fn other_commands_are_rejected() {
        assert!(matches!(TaskstatsReply::parse(&[1, 1, 0, 0]), Err(Error::UnexpectedKind { found: 1, .. })));
        // AGGR_PID without its STATS.
        let bytes = [2, 1, 0, 0, 12, 0, 4, 0, 8, 0, 1, 0, 7, 0, 0, 0];
        assert_eq!(TaskstatsReply::parse(&bytes), Err(Error::MissingAttribute { what: "TASKSTATS_TYPE_STATS" }));
    }
}

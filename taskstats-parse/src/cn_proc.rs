//! Proc connector events: a `struct cn_msg` (`include/uapi/linux/connector.h`)
//! whose data is a `struct proc_event` (`include/uapi/linux/cn_proc.h`), sent
//! on `NETLINK_CONNECTOR` to the `CN_IDX_PROC` group after a listener sent
//! `PROC_CN_MCAST_LISTEN` (<https://docs.kernel.org/driver-api/connector.html>).

use crate::bytes::{u16_at, u32_at, u64_at};
use crate::{Error, Result};

/// `CN_IDX_PROC`: the connector index of process events (also the multicast group).
pub const CN_IDX_PROC: u32 = 1;
/// `CN_VAL_PROC`.
pub const CN_VAL_PROC: u32 = 1;
/// `PROC_CN_MCAST_LISTEN`: the `enum proc_cn_mcast_op` that starts the events.
pub const PROC_CN_MCAST_LISTEN: u32 = 1;
/// `PROC_CN_MCAST_IGNORE`: stops them.
pub const PROC_CN_MCAST_IGNORE: u32 = 2;
/// `sizeof(struct cn_msg)` without its data.
pub const CN_MSG_LEN: usize = 20;

const PROC_EVENT_NONE: u32 = 0;
const PROC_EVENT_FORK: u32 = 1;
const PROC_EVENT_EXEC: u32 = 2;
const PROC_EVENT_EXIT: u32 = 0x8000_0000;
/// `struct proc_event`'s header before `event_data`.
const EVENT_HEADER_LEN: usize = 16;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `PROC_EVENT_NONE`: the acknowledgement of a listen/ignore request;
    /// `err` 0 is success.
    Ack {
        /// `ack.err`.
        err: u32,
    },
    /// `PROC_EVENT_FORK`: a task (process or thread) was created.
    Fork {
        /// `parent_pid`: the creating thread.
        parent_pid: u32,
        /// `parent_tgid`: the creating process.
        parent_tgid: u32,
        /// `child_pid`.
        child_pid: u32,
        /// `child_tgid`: equals `child_pid` for a new process, the parent's tgid for a thread.
        child_tgid: u32,
    },
    /// `PROC_EVENT_EXEC`: a process ran execve(2).
    Exec {
        /// `process_pid`.
        pid: u32,
        /// `process_tgid`.
        tgid: u32,
    },
    /// `PROC_EVENT_EXIT`: a task exited.
    Exit {
        /// `process_pid`.
        pid: u32,
        /// `process_tgid`.
        tgid: u32,
        /// `exit_code`: the wait status.
        exit_code: u32,
        /// `exit_signal`.
        exit_signal: u32,
        /// `parent_pid` (Linux 4.18 and later; absent before).
        parent_pid: Option<u32>,
        /// `parent_tgid` (same).
        parent_tgid: Option<u32>,
    },
    /// Another event (uid, gid, sid, ptrace, comm, coredump): its `what`.
    Other {
        /// `what`.
        what: u32,
    },
}

/// One process event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcEvent {
    /// `cpu` the event happened on.
    pub cpu: u32,
    /// `timestamp_ns`: `ktime_get_ns()` when it happened, the `CLOCK_MONOTONIC`
    /// clock (suspend not counted).
    pub timestamp_ns: u64,
    /// The event.
    pub kind: EventKind,
}

impl ProcEvent {
    /// Reads a connector message's netlink payload (`struct cn_msg` and its
    /// data). A message of another connector index is an error.
    pub fn parse(payload: &[u8]) -> Result<ProcEvent> {
        let truncated = |what, offset| Error::Truncated { what, offset };
        let idx = u32_at(payload, 0).ok_or(truncated("cn_msg", 0))?;
        let val = u32_at(payload, 4).ok_or(truncated("cn_msg", 0))?;
        if (idx, val) != (CN_IDX_PROC, CN_VAL_PROC) {
            return Err(Error::UnexpectedKind { expected: "the proc connector (CN_IDX_PROC)", found: idx });
        }
        let declared = usize::from(u16_at(payload, 16).ok_or(truncated("cn_msg", 0))?);
        let data = payload.get(CN_MSG_LEN..).and_then(|rest| rest.get(..declared)).ok_or(Error::BadLength {
            what: "cn_msg.len",
            offset: 16,
            declared,
        })?;
        let header = |at| u32_at(data, at).ok_or(truncated("proc_event", CN_MSG_LEN));
        let what = header(0)?;
        let cpu = header(4)?;
        let timestamp_ns = u64_at(data, 8).ok_or(truncated("proc_event", CN_MSG_LEN))?;
        let body = data.get(EVENT_HEADER_LEN..).unwrap_or_default();
        let at = CN_MSG_LEN.saturating_add(EVENT_HEADER_LEN);
        let field = |i: usize| u32_at(body, i.saturating_mul(4)).ok_or(truncated("proc_event data", at));
        let kind = match what {
            PROC_EVENT_NONE => EventKind::Ack { err: field(0)? },
            PROC_EVENT_FORK => EventKind::Fork {
                parent_pid: field(0)?,
                parent_tgid: field(1)?,
                child_pid: field(2)?,
                child_tgid: field(3)?,
            },
            PROC_EVENT_EXEC => EventKind::Exec { pid: field(0)?, tgid: field(1)? },
            PROC_EVENT_EXIT => EventKind::Exit {
                pid: field(0)?,
                tgid: field(1)?,
                exit_code: field(2)?,
                exit_signal: field(3)?,
                parent_pid: field(4).ok(),
                parent_tgid: field(5).ok(),
            },
            what => EventKind::Other { what },
        };
        Ok(ProcEvent { cpu, timestamp_ns, kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::{Messages, NLMSG_DONE};

    fn event(datagram: &[u8]) -> ProcEvent {
        let m = Messages::new(datagram).next().unwrap().unwrap();
        assert_eq!(m.header.kind, NLMSG_DONE, "the connector sends every event as NLMSG_DONE");
        ProcEvent::parse(m.payload).unwrap()
    }

    #[test]
    fn captured_listen_ack_fork_exec_exit() {
        assert_eq!(event(include_bytes!("../tests/data/cn-ack.bin")).kind, EventKind::Ack { err: 0 });
        let fork = event(include_bytes!("../tests/data/cn-fork.bin"));
        assert_eq!(
            fork.kind,
            EventKind::Fork { parent_pid: 1324, parent_tgid: 1324, child_pid: 1379, child_tgid: 1379 }
        );
        assert!(fork.timestamp_ns > 0);
        assert_eq!(event(include_bytes!("../tests/data/cn-exec.bin")).kind, EventKind::Exec { pid: 1379, tgid: 1379 });
        let exit = event(include_bytes!("../tests/data/cn-exit.bin"));
        let EventKind::Exit { pid, tgid, exit_code, parent_tgid, .. } = exit.kind else { panic!("{exit:?}") };
        assert_eq!((pid, tgid, exit_code, parent_tgid), (1379, 1379, 0, Some(1324)));
        assert!(exit.timestamp_ns > fork.timestamp_ns);
    }

    #[test]
    fn other_connectors_and_short_data_are_errors() {
        let m = Messages::new(include_bytes!("../tests/data/cn-fork.bin")).next().unwrap().unwrap();
        let mut other = m.payload.to_vec();
        other[0] = 4;
        assert!(matches!(ProcEvent::parse(&other), Err(Error::UnexpectedKind { found: 4, .. })));
        let mut short = m.payload.to_vec();
        short[16] = 20; // a fork's four pids need 32 bytes of data
        assert!(matches!(ProcEvent::parse(&short), Err(Error::Truncated { what: "proc_event data", .. })));
        short[16] = 200;
        assert!(matches!(ProcEvent::parse(&short), Err(Error::BadLength { declared: 200, .. })));
    }
}

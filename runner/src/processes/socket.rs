//! The two netlink sockets: generic netlink for taskstats (resolve the
//! family, register a cpumask listener, query a pid) and the proc
//! connector (`PROC_CN_MCAST_LISTEN`). Requests are built here; replies are
//! read with `stepmon-taskstats-parse`.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use rustix::io::Errno;
use rustix::net::netlink::{self, SocketAddrNetlink};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType, sockopt};
use stepmon_taskstats_parse::cn_proc::{CN_IDX_PROC, CN_VAL_PROC, PROC_CN_MCAST_LISTEN};
use stepmon_taskstats_parse::ctrl::{CTRL_ATTR_FAMILY_NAME, CTRL_CMD_GETFAMILY, Family, GENL_ID_CTRL};
use stepmon_taskstats_parse::netlink::{Messages, NLMSG_DONE};
use stepmon_taskstats_parse::taskstats::{
    CMD_ATTR_DEREGISTER_CPUMASK, CMD_ATTR_PID, CMD_ATTR_REGISTER_CPUMASK, CMD_GET, FAMILY_NAME,
};

/// `NLM_F_REQUEST`.
const NLM_F_REQUEST: u16 = 1;
/// `NLM_F_ACK`.
const NLM_F_ACK: u16 = 4;
/// The largest datagram read: one exit record is 596 bytes on 6.18, the
/// kernel never batches more than a page of them.
pub(super) const DATAGRAM: usize = 64 * 1024;

/// A buffer for one datagram, not written before the kernel writes it: a
/// zeroed one touched all its 16 pages (16 page faults, each costly in a VM:
/// benches/README.md, "The code's layout, and fresh pages") where a record
/// touches one.
pub(super) fn datagram_buffer() -> Box<[MaybeUninit<u8>]> {
    Box::new_uninit_slice(DATAGRAM)
}

/// Appends an attribute (`struct nlattr` + payload, padded to 4).
fn attr(out: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let len = u16::try_from(4 + payload.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(payload);
    out.resize(out.len().next_multiple_of(4), 0);
}

/// A netlink message: header (`nlmsg_type` = `kind`) and `body`.
fn message(kind: u16, flags: u16, seq: u32, port: u32, body: &[u8]) -> Vec<u8> {
    let len = u32::try_from(16 + body.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(16 + body.len());
    out.extend_from_slice(&len.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&port.to_ne_bytes());
    out.extend_from_slice(body);
    out
}

/// A generic netlink request: `genlmsghdr` (command, version 1) and attributes.
fn genl_request(family: u16, cmd: u8, seq: u32, attrs: &[(u16, &[u8])]) -> Vec<u8> {
    let mut body = vec![cmd, 1, 0, 0];
    for (kind, payload) in attrs {
        attr(&mut body, *kind, payload);
    }
    message(family, NLM_F_REQUEST | NLM_F_ACK, seq, 0, &body)
}

/// A bound generic netlink socket with a receive timeout.
pub(super) fn generic() -> io::Result<OwnedFd> {
    let fd = rustix::net::socket_with(
        AddressFamily::NETLINK,
        SocketType::RAW,
        SocketFlags::CLOEXEC,
        Some(netlink::GENERIC),
    )?;
    rustix::net::bind(&fd, &SocketAddrNetlink::new(0, 0))?;
    sockopt::set_socket_timeout(&fd, sockopt::Timeout::Recv, Some(Duration::from_secs(2)))?;
    Ok(fd)
}

/// Receives until the answer to `seq` arrives: its `NLMSG_ERROR` (an ack,
/// or the errno) or data. Returns the data messages' datagram, if any.
/// Records of other tasks arriving meanwhile on a listening socket are skipped.
fn answer(fd: impl AsFd, seq: u32) -> io::Result<Option<Vec<u8>>> {
    let mut buf = datagram_buffer();
    let mut data = None;
    loop {
        let ((read, _), _) = rustix::net::recv(fd.as_fd(), &mut buf[..], RecvFlags::empty())?;
        for m in Messages::new(read) {
            let m = m.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
            if m.header.seq != seq {
                continue;
            }
            match m.error() {
                Some(Ok(e)) if e.error == 0 => return Ok(data),
                Some(Ok(e)) => return Err(io::Error::from_raw_os_error(-e.error)),
                Some(Err(e)) => return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
                None => data = Some(read.to_vec()),
            }
        }
    }
}

/// The `TASKSTATS` family id (`CTRL_CMD_GETFAMILY`); `ENOENT` when the
/// kernel has no taskstats (`CONFIG_TASKSTATS` off).
pub(super) fn resolve_family(fd: impl AsFd) -> io::Result<u16> {
    let mut name = FAMILY_NAME.to_vec();
    name.push(0);
    rustix::net::send(
        fd.as_fd(),
        &genl_request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, &[(CTRL_ATTR_FAMILY_NAME, &name)]),
        SendFlags::empty(),
    )?;
    let reply =
        answer(fd.as_fd(), 1)?.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no family in the reply"))?;
    let m = Messages::new(&reply)
        .flatten()
        .find(|m| m.header.kind == GENL_ID_CTRL)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no family in the reply"))?;
    Family::parse(m.payload).map(|f| f.id).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// Registers the socket as the exit listener of every possible CPU
/// (`TASKSTATS_CMD_ATTR_REGISTER_CPUMASK`, a cpulist like `0-7`). The
/// kernel refuses outside the initial user and pid namespaces (`EINVAL`)
/// and without `CAP_NET_ADMIN` (`EPERM`).
pub(super) fn register_cpumask(fd: impl AsFd, family: u16, cpus: &str) -> io::Result<()> {
    cpumask(fd, family, CMD_ATTR_REGISTER_CPUMASK, cpus)
}

/// Undoes [`register_cpumask`] (`TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK`).
pub(super) fn deregister_cpumask(fd: impl AsFd, family: u16, cpus: &str) -> io::Result<()> {
    cpumask(fd, family, CMD_ATTR_DEREGISTER_CPUMASK, cpus)
}

fn cpumask(fd: impl AsFd, family: u16, attr: u16, cpus: &str) -> io::Result<()> {
    let mut mask = cpus.as_bytes().to_vec();
    mask.push(0);
    rustix::net::send(fd.as_fd(), &genl_request(family, CMD_GET, 2, &[(attr, &mask)]), SendFlags::empty())?;
    answer(fd, 2).map(drop)
}

/// `TASKSTATS_CMD_GET` for one pid: the reply's datagram (`ESRCH` when it is gone).
pub(super) fn query_pid(fd: impl AsFd, family: u16, pid: u32, seq: u32) -> io::Result<Vec<u8>> {
    rustix::net::send(
        fd.as_fd(),
        &genl_request(family, CMD_GET, seq, &[(CMD_ATTR_PID, &pid.to_ne_bytes())]),
        SendFlags::empty(),
    )?;
    answer(fd, seq)?.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no record in the reply"))
}

/// Sends, on the listening socket itself, a query whose acknowledgement
/// marks the end of what is queued now: netlink queues a socket's
/// datagrams in order, so every exit record ahead of the acknowledgement
/// (an `NLMSG_ERROR` with `seq`, which multicast records never are) was
/// sent before this call. The query is for this process, which exists.
pub(super) fn send_marker(fd: impl AsFd, family: u16, seq: u32) -> io::Result<()> {
    let pid = std::process::id();
    rustix::net::send(
        fd.as_fd(),
        &genl_request(family, CMD_GET, seq, &[(CMD_ATTR_PID, &pid.to_ne_bytes())]),
        SendFlags::empty(),
    )
    .map(drop)
    .map_err(Into::into)
}

/// `PROC_EVENT_FORK` as a filter of `struct proc_input` (`include/uapi/linux/cn_proc.h`).
const PROC_EVENT_FORK: u32 = 1;

/// A listen request: `PROC_CN_MCAST_LISTEN` alone (`enum proc_cn_mcast_op`),
/// or with an event filter (`struct proc_input`, Linux 6.6+).
fn listen_request(filter: Option<u32>) -> Vec<u8> {
    let mut data = PROC_CN_MCAST_LISTEN.to_ne_bytes().to_vec();
    data.extend(filter.map(u32::to_ne_bytes).into_iter().flatten());
    let mut cn = Vec::with_capacity(20 + data.len());
    for word in [CN_IDX_PROC, CN_VAL_PROC, 0, 0] {
        cn.extend_from_slice(&word.to_ne_bytes());
    }
    cn.extend_from_slice(&u16::try_from(data.len()).unwrap_or(0).to_ne_bytes());
    cn.extend_from_slice(&0u16.to_ne_bytes());
    cn.extend_from_slice(&data);
    message(NLMSG_DONE, 0, 0, 0, &cn)
}

/// Whether the running kernel takes a `struct proc_input` event filter
/// (`include/uapi/linux/cn_proc.h`, Linux 6.6): older ones drop the
/// request without an answer (`cn_proc_mcast_ctl` returns early on a
/// message longer than `enum proc_cn_mcast_op`).
fn filters_events() -> bool {
    let release = rustix::system::uname().release().to_string_lossy().into_owned();
    crate::kernel::kernel_version(&release).is_none_or(|v| v >= (6, 6))
}

/// A proc connector socket joined to `CN_IDX_PROC`, listening. Where the
/// kernel filters ([`filters_events`]) it then asks for fork events alone:
/// an exit storm sends one connector message per process instead of three.
///
/// The plain request comes first and nothing is waited for: the kernel
/// handles a connector request within the `send` (`netlink_unicast` to a
/// kernel socket calls `cn_rx_skb` in the sender's context), and it
/// multicasts its acknowledgement (`PROC_EVENT_NONE`) through the same
/// event filter as everything else (`cn_filter`, drivers/connector/cn_proc.c),
/// so a socket that asked for forks alone never sees it. Asked the other
/// way round, every step waited for an acknowledgement that could not
/// come. Before 6.6 the kernel ignores the longer, filtered request
/// (`cn_proc_mcast_ctl` returns early), and the socket gets every event.
pub(super) fn connector() -> io::Result<OwnedFd> {
    let fd = rustix::net::socket_with(
        AddressFamily::NETLINK,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        Some(netlink::CONNECTOR),
    )?;
    rustix::net::bind(&fd, &SocketAddrNetlink::new(0, CN_IDX_PROC))?;
    rustix::net::send(&fd, &listen_request(None), SendFlags::empty())?;
    if filters_events() {
        rustix::net::send(&fd, &listen_request(Some(PROC_EVENT_FORK)), SendFlags::empty())?;
    }
    Ok(fd)
}

/// A large receive buffer: `SO_RCVBUFFORCE` (root, beyond `rmem_max`),
/// else as large as `SO_RCVBUF` allows. An exit storm queues thousands of
/// records in the time the listener thread waits for a CPU.
pub(super) fn enlarge_buffer(fd: impl AsFd, bytes: usize) {
    if sockopt::set_socket_recv_buffer_size_force(fd.as_fd(), bytes).is_err() {
        let _ = sockopt::set_socket_recv_buffer_size(fd.as_fd(), bytes);
    }
}

/// Whether `e` says the kernel dropped messages for this socket.
pub(super) fn is_overrun(e: &io::Error) -> bool {
    e.raw_os_error() == Some(Errno::NOBUFS.raw_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;
    use stepmon_taskstats_parse::genl::GenlMessage;

    #[test]
    fn a_request_reads_back_with_the_parsers() {
        let request = genl_request(31, CMD_GET, 7, &[(CMD_ATTR_PID, &42u32.to_ne_bytes()), (3, b"0-1\0")]);
        let m = Messages::new(&request).next().unwrap().unwrap();
        assert_eq!((m.header.kind, m.header.seq, m.header.flags), (31, 7, NLM_F_REQUEST | NLM_F_ACK));
        let g = GenlMessage::parse(m.payload).unwrap();
        let attrs: Vec<_> = g.attrs().collect::<Result<_, _>>().unwrap();
        assert_eq!(attrs[0].u32().unwrap(), 42);
        assert_eq!(attrs[1].c_str(), b"0-1");
    }

    /// Where the kernel filters, the socket gets the fork event of a child
    /// and neither its exec nor its exit (asked in the other order, the
    /// filter's own acknowledgement was waited for in vain, and the socket
    /// listened unfiltered).
    #[test]
    fn the_connector_gets_fork_events_alone_where_the_kernel_filters() {
        use stepmon_taskstats_parse::cn_proc::{EventKind, ProcEvent};
        // Before 6.6 every event comes: then only the fork event is checked.
        let filtered = filters_events();
        let fd = match connector() {
            Ok(fd) => fd,
            Err(e) => {
                crate::test_skip::skip(
                    "the_connector_gets_fork_events_alone_where_the_kernel_filters",
                    format_args!("no connector ({e}; needs root)"),
                );
                return;
            }
        };
        // Between the plain listen request and the filter (connector()'s
        // two sends) the machine's every event was queued unfiltered: read
        // those first, then the child's.
        let mut buf = vec![0u8; DATAGRAM];
        while rustix::net::recv(&fd, &mut buf[..], RecvFlags::DONTWAIT).is_ok() {}
        sockopt::set_socket_timeout(&fd, sockopt::Timeout::Recv, Some(Duration::from_millis(200))).unwrap();
        let started = Instant::now();
        // A machine that forks a lot (a build beside the test) can overrun
        // the socket (ENOBUFS) and drop the child's event with others':
        // then the child runs again, a few times at most.
        let (mut forks, mut others, mut overruns) = (0, Vec::new(), 0);
        for _ in 0..5 {
            let child = std::process::Command::new("/bin/true").status();
            assert!(child.is_ok_and(|s| s.success()));
            let mut overrun = false;
            // This process's children's events, until the queue is quiet.
            loop {
                assert!(started.elapsed() < Duration::from_secs(30), "the queue never went quiet");
                let read = match rustix::net::recv(&fd, &mut buf[..], RecvFlags::empty()) {
                    Ok((read, _)) => read,
                    Err(Errno::NOBUFS) => {
                        overrun = true;
                        continue;
                    }
                    Err(_) => break,
                };
                for m in Messages::new(&buf[..read]).flatten() {
                    match ProcEvent::parse(m.payload).map(|e| e.kind) {
                        Ok(EventKind::Fork { parent_tgid, .. }) if parent_tgid == std::process::id() => forks += 1,
                        Ok(EventKind::Ack { .. } | EventKind::Fork { .. }) => {}
                        Ok(other) => others.push(other),
                        Err(e) => panic!("unreadable event: {e}"),
                    }
                }
            }
            overruns += usize::from(overrun);
            if forks > 0 || !overrun {
                break;
            }
        }
        assert!(forks >= 1, "the child's fork event ({overruns} overrun(s) of the socket)");
        assert!(!filtered || others.is_empty(), "events other than forks: {others:?}");
    }

    #[test]
    fn listen_requests_with_and_without_a_filter() {
        for (filter, len) in [(None, 4u16), (Some(PROC_EVENT_FORK), 8)] {
            let request = listen_request(filter);
            let m = Messages::new(&request).next().unwrap().unwrap();
            assert_eq!(m.header.kind, NLMSG_DONE);
            assert_eq!(u16::from_ne_bytes([m.payload[16], m.payload[17]]), len);
            assert_eq!(m.payload.len(), 20 + usize::from(len));
        }
    }
}

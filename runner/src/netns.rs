//! The step's network namespace: `--net isolated` creates one (loopback up,
//! nothing else), `--net ns:PATH` joins an existing one. The namespace is
//! held open by this process for the whole run, so its counters can still be
//! read for the final sample after the step's processes are gone.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;

use rustix::net::{AddressFamily, SendFlags, SocketType, netlink};
use rustix::thread::{LinkNameSpaceType, UnshareFlags};

/// A network namespace held open for the run.
#[derive(Debug)]
pub(crate) struct HeldNamespace {
    fd: OwnedFd,
}

impl HeldNamespace {
    /// Creates a new network namespace with `lo` up. The namespace is made
    /// on a short-lived thread (namespaces are per thread), which brings
    /// loopback up over rtnetlink and hands back an fd of the namespace.
    pub(crate) fn isolated() -> io::Result<HeldNamespace> {
        std::thread::spawn(|| -> io::Result<OwnedFd> {
            // `unshare` is deprecated because some flags (CLONE_FILES, ...)
            // can break Rust's assumptions about shared state; a new network
            // namespace for this thread only changes what its sockets see.
            #[allow(deprecated)]
            rustix::thread::unshare(UnshareFlags::NEWNET)?;
            loopback_up()?;
            Ok(File::open("/proc/thread-self/ns/net")?.into())
        })
        .join()
        .map_err(|_| io::Error::other("the namespace thread panicked"))?
        .map(|fd| HeldNamespace { fd })
    }

    /// Holds an existing namespace (`/run/netns/<name>`, `/proc/<pid>/ns/net`).
    pub(crate) fn existing(path: &std::path::Path) -> io::Result<HeldNamespace> {
        let fd: OwnedFd = File::open(path)?.into();
        // Refuse anything that is not a network namespace early, with a clear error.
        std::thread::scope(|scope| {
            scope
                .spawn(|| rustix::thread::move_into_link_name_space(fd.as_fd(), Some(LinkNameSpaceType::Network)))
                .join()
                .map_err(|_| io::Error::other("the namespace thread panicked"))?
                .map_err(io::Error::from)
        })?;
        Ok(HeldNamespace { fd })
    }

    /// The namespace's fd (for `setns` in the step's child; it is
    /// close-on-exec, so the step does not inherit it).
    pub(crate) fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// A path that opens this namespace from this process or its children
    /// for as long as the run holds it.
    pub(crate) fn path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/fd/{}", std::process::id(), self.fd.as_raw_fd()))
    }
}

/// `ip link set lo up` over rtnetlink: RTM_NEWLINK for ifindex 1 (`lo` is
/// always the first device of a new namespace) with IFF_UP set, then the ack.
fn loopback_up() -> io::Result<()> {
    const RTM_NEWLINK: u16 = 16;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_ACK: u16 = 4;
    const NLMSG_ERROR: u16 = 2;
    const IFF_UP: u32 = 1;
    // NETLINK_ROUTE is protocol 0, i.e. `None`.
    let socket =
        rustix::net::socket_with(AddressFamily::NETLINK, SocketType::RAW, rustix::net::SocketFlags::CLOEXEC, None)?;
    let mut message = Vec::with_capacity(32);
    message.extend_from_slice(&32u32.to_ne_bytes()); // nlmsg_len
    message.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    message.extend_from_slice(&1u32.to_ne_bytes()); // seq
    message.extend_from_slice(&0u32.to_ne_bytes()); // pid: the kernel
    message.extend_from_slice(&[0, 0]); // ifi_family AF_UNSPEC, pad
    message.extend_from_slice(&0u16.to_ne_bytes()); // ifi_type
    message.extend_from_slice(&1i32.to_ne_bytes()); // ifi_index
    message.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_flags
    message.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_change
    let kernel = netlink::SocketAddrNetlink::new(0, 0);
    rustix::net::sendto(&socket, &message, SendFlags::empty(), &kernel)?;
    let mut reply = [0u8; 256];
    let (read, _) = rustix::net::recv(&socket, &mut reply, rustix::net::RecvFlags::empty())?;
    // nlmsghdr (16 bytes) then, for NLMSG_ERROR, a negative errno or 0 (ack).
    let kind = reply.get(4..6).map(|b| u16::from_ne_bytes([b[0], b[1]]));
    let errno = reply.get(16..20).map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    match (read >= 20, kind, errno) {
        (true, Some(NLMSG_ERROR), Some(0)) => Ok(()),
        (true, Some(NLMSG_ERROR), Some(e)) => Err(io::Error::from_raw_os_error(-e)),
        _ => Err(io::Error::other("unexpected rtnetlink reply while bringing lo up")),
    }
}

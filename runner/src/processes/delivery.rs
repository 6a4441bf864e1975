//! Whether the kernel's exit records reach a registered listener. It
//! accepts the registration in any network namespace, yet sends the
//! records in the initial one only (kernel/taskstats.c,
//! `send_cpu_listeners`: `genlmsg_unicast(&init_net, …)`): a process in the
//! host's pid namespace with `CAP_NET_ADMIN` but a network namespace of its
//! own (`docker run --pid=host --cap-add NET_ADMIN`) registers and then
//! hears of no process. Seen in the VM tier's runc container on Linux 6.1.

use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};

/// Why no record will arrive, when none did for a thread of this process
/// that started and ended (every exiting task makes one) within `wait`.
pub(super) fn silent(socket: &OwnedFd, wait: Duration) -> Option<String> {
    let _ = std::thread::spawn(|| {}).join();
    let timeout = Timespec::try_from(wait).ok();
    let mut fds = [PollFd::new(socket, PollFlags::IN)];
    // The record stays queued: the listener reads it as another process's.
    match rustix::event::poll(&mut fds, timeout.as_ref()) {
        Ok(n) if n > 0 => None,
        Ok(_) => Some(format!(
            "taskstats listener accepted, but no exit record arrived within {} ms: the kernel sends them in the \
             initial network namespace only, and this process runs in another one",
            wait.as_millis()
        )),
        // Cannot tell: as before, trust the registration.
        Err(_) => None,
    }
}

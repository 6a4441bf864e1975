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
    if in_initial_netns() {
        // Where the records are sent: no thread and no wait (a thread
        // started and joined, and a record read back, at every start).
        return None;
    }
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

/// Whether the calling thread (which makes the listener's sockets) is in
/// the initial network namespace: the one of `kthreadd` (PID 2 of the
/// initial pid namespace, a kernel thread, which never leaves it). `false`
/// when that cannot be told (another pid namespace, no access to PID 2's
/// namespace links).
fn in_initial_netns() -> bool {
    let kthreadd = std::fs::read("/proc/2/comm").is_ok_and(|comm| comm == b"kthreadd\n");
    let (Ok(own), Ok(initial)) = (std::fs::read_link("/proc/thread-self/ns/net"), std::fs::read_link("/proc/2/ns/net"))
    else {
        return false;
    };
    kthreadd && own == initial
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_in_a_network_namespace_of_its_own_is_not_in_the_initial_one() {
        let host = std::fs::read("/proc/2/comm").is_ok_and(|c| c == b"kthreadd\n");
        if !host || !rustix::process::geteuid().is_root() {
            // Not the host's pid namespace, or no right to a namespace:
            // "cannot tell" is the answer there.
            return;
        }
        assert!(super::in_initial_netns(), "this test runs on the host, in its network namespace");
        let elsewhere = std::thread::spawn(|| {
            // A network namespace for this thread alone (`unshare_unsafe`'s
            // hazards are about shared fd tables and fs state, not this).
            #[allow(deprecated)]
            rustix::thread::unshare(rustix::thread::UnshareFlags::NEWNET).map(|()| super::in_initial_netns())
        });
        assert_eq!(elsewhere.join().unwrap().ok(), Some(false));
    }
}

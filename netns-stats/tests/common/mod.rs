//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use stepmon_testsupport::skip;

/// The capture of `/proc/net/dev` from the hybrid-6.18 machine.
pub const PROC_NET_DEV: &[u8] = include_bytes!("../data/proc_net_dev.txt");
/// `/sys/class/net/{eth0,lo}/statistics/*` captured as `name: value` lines.
pub const SYSFS_ETH0: &str = include_str!("../data/sys_class_net_eth0_statistics.txt");
pub const SYSFS_LO: &str = include_str!("../data/sys_class_net_lo_statistics.txt");

/// `name: value` lines of a sysfs capture → `(name, "value\n")` as the kernel
/// file would hold it.
pub fn sysfs_capture(text: &str) -> Vec<(&str, String)> {
    text.lines()
        .map(|l| {
            let (name, value) = l.split_once(": ").expect("capture line is `name: value`");
            (name, format!("{value}\n"))
        })
        .collect()
}

/// Why the root-only tests cannot run here, if they cannot.
pub fn root_test_blocker() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("not running as root (network namespaces and setns need CAP_SYS_ADMIN)".into());
    }
    match Command::new("ip").arg("-V").output() {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!("`ip -V` failed: {}", out.status)),
        Err(e) => Some(format!("`ip` (iproute2) not found: {e}")),
    }
}

/// Prints a loud skip message and returns true when the test must skip.
/// Written straight to the stderr handle: libtest captures only the
/// `print!` family, so this shows up in a plain `cargo test` run.
pub fn skip_unless_root(test: &str) -> bool {
    match root_test_blocker() {
        Some(why) => {
            skip::skip(test, why);
            true
        }
        None => false,
    }
}

/// Runs `ip ARGS`, panicking with its stderr on failure.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// Named network namespaces created by this test process; deleted on drop,
/// including when the test panics.
pub struct Namespaces {
    names: Vec<String>,
}

impl Namespaces {
    /// Creates `stepmon-test-<pid>-<suffix>` for each suffix.
    pub fn create(suffixes: &[&str]) -> Namespaces {
        let mut me = Namespaces { names: Vec::new() };
        for s in suffixes {
            let name = format!("stepmon-test-{}-{s}", std::process::id());
            ip(&["netns", "add", &name]);
            me.names.push(name);
        }
        me
    }

    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    pub fn path(&self, i: usize) -> PathBuf {
        Path::new("/run/netns").join(&self.names[i])
    }

    /// Deletes one namespace name now (the namespace itself lives on while
    /// anything holds it).
    pub fn delete(&mut self, i: usize) {
        let name = self.names.remove(i);
        ip(&["netns", "del", &name]);
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for name in self.names.drain(..) {
            let out = Command::new("ip").args(["netns", "del", &name]).output();
            match out {
                Ok(o) if o.status.success() => eprintln!("cleanup: deleted netns {name}"),
                Ok(o) => eprintln!("cleanup: ip netns del {name}: {}", String::from_utf8_lossy(&o.stderr)),
                Err(e) => eprintln!("cleanup: ip netns del {name}: {e}"),
            }
        }
    }
}

/// Runs `f` on a new thread that first enters the network namespace at `path`.
pub fn in_netns<T: Send + 'static>(path: &Path, f: impl FnOnce() -> T + Send + 'static) -> std::thread::JoinHandle<T> {
    let ns = std::fs::File::open(path).expect("open netns file");
    std::thread::spawn(move || {
        rustix::thread::move_into_link_name_space(ns.as_fd(), Some(rustix::thread::LinkNameSpaceType::Network))
            .expect("setns");
        drop(ns);
        f()
    })
}

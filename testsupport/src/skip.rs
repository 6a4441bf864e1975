//! How a live test of this workspace says it cannot run here: one module,
//! used by every test crate that has live tests
//! (`use stepmon_testsupport::skip;`).
//!
//! * [`skip`]: the test cannot run on this host (not root, a tool missing,
//!   no cgroup v2). It prints `SKIPPED <test>: <why>` straight to stderr
//!   (libtest captures the print macros of passing tests, and a skip must
//!   be seen) and the test returns — unless `STEPMON_REQUIRE_LIVE=1`
//!   (scripts/test, which CI runs as root after scripts/setup installed
//!   every tool), when it panics with the same reason: there a skip is a
//!   test that did not run, not a pass.
//! * [`accepted`]: a condition no host of CI's kind can change, each named
//!   once in [`ACCEPTED`] with its reason. It prints the same `SKIPPED`
//!   line, and skips under the switch too.

use std::fmt::Display;
use std::io::Write as _;

/// The environment variable that turns every [`skip`] into a failure.
pub const REQUIRE: &str = "STEPMON_REQUIRE_LIVE";

/// A skip that stays a skip with [`REQUIRE`] set: what the host lacks and
/// why no set-up can provide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    /// What is missing, as the `SKIPPED` line names it.
    pub what: &'static str,
    /// Why no host of CI's kind (root, scripts/setup's tools, a
    /// distribution kernel) can be made to have it.
    pub reason: &'static str,
}

/// `/proc/pressure/irq`: only kernels built with
/// `CONFIG_IRQ_TIME_ACCOUNTING` have it (Documentation/accounting/psi.rst,
/// "IRQ/SOFTIRQ"); Debian's is not, nor the VM tier's guest kernel.
pub const PSI_IRQ: Accepted = Accepted {
    what: "/proc/pressure/irq",
    reason: "the kernel is built without CONFIG_IRQ_TIME_ACCOUNTING, which no set-up can change",
};

/// The sysusage probe's check that an absent /proc file is remembered as
/// absent needs one of its files to be absent: on a kernel that has every
/// one of them there is nothing to check.
pub const EVERY_PROC_FILE_PRESENT: Accepted = Accepted {
    what: "an absent /proc file",
    reason: "this kernel has every /proc file the probe reads, so there is no absent one to check the probe against",
};

/// CPUs taken offline (by the host's administrator or the hypervisor): the
/// aggregate `cpu` line of /proc/stat keeps their frozen counters, the
/// per-CPU lines do not list them, so the two cannot be compared.
pub const OFFLINE_CPUS: Accepted = Accepted {
    what: "offline CPUs",
    reason: "some CPUs are offline; a test must not bring CPUs online on a shared host",
};

/// Every accepted skip, the one list of them.
pub const ACCEPTED: &[Accepted] = &[PSI_IRQ, EVERY_PROC_FILE_PRESENT, OFFLINE_CPUS];

/// Whether `STEPMON_REQUIRE_LIVE=1`: every live test must run.
pub fn required() -> bool {
    std::env::var(REQUIRE).is_ok_and(|v| v == "1")
}

/// `test` cannot run here because of `why`: prints `SKIPPED <test>: <why>`,
/// or panics with it when [`required`].
pub fn skip(test: &str, why: impl Display) {
    if required() {
        panic!("{REQUIRE}=1 but {test} cannot run here: {why}");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// [`skip`], then `false`: for helpers that answer "can the test run".
pub fn skipped(test: &str, why: impl Display) -> bool {
    skip(test, why);
    false
}

/// `test` cannot run because of the accepted condition `what` (one of
/// [`ACCEPTED`]); `detail` says what was seen. Prints
/// `SKIPPED <what>: <test>: <detail> (<reason>)`, also when [`required`]
/// (what comes first: the VM tier accepts `SKIPPED /proc/pressure/irq: `
/// lines by that prefix, ci/vm/guest/tests.sh).
pub fn accepted(test: &str, what: Accepted, detail: impl Display) {
    assert!(ACCEPTED.contains(&what), "{what:?} is not in the list of accepted skips");
    let _ = writeln!(std::io::stderr(), "SKIPPED {}: {test}: {detail} ({})", what.what, what.reason);
}

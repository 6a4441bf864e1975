//! Run a command as a measured step — what `stepmon run` does, as a library
//! for Rust builders and CI runners: host discovery, placement, the spawn,
//! signal forwarding, the kill of what the step leaves behind, clean-up and
//! the run document.
//!
//! Placement is a ladder, chosen per resource, best first: the step's own
//! cgroup where this process may create one, else its process tree and the
//! enclosing cgroup, and the machine always; every number in the document
//! says which rung it came from ([`stepmon_model::source`]). The rungs,
//! what each covers and misses: the repository's `docs/measurement-ladder.md`.
//! A missing privilege or a read-only cgroupfs never refuses the step unless
//! [`StepOptions::cgroup`] says so.
//!
//! ```
//! # #[cfg(target_os = "linux")] {
//! use stepmon_runner::{StepOptions, prepare};
//!
//! let prepared = prepare(StepOptions::new(["sh", "-c", "exit 3"]))?;
//! for notice in prepared.notices() {
//!     eprintln!("{notice}");
//! }
//! let finished = prepared.run()?;
//! assert_eq!(finished.exit_code, 3);
//! let run = finished.document.stepmon.as_ref().unwrap();
//! // CPU comes from the step's cgroup, or its process tree without one.
//! assert!(run.sources.cpu.is_some());
//! assert_eq!(run.process_tree.unwrap().processes_reaped, 1);
//! # }
//! # Ok::<(), stepmon_runner::RunError>(())
//! ```
//!
//! The command gets its environment, working directory and streams as
//! `std::process::Command` gives them ([`StepOptions::env`],
//! [`StepOptions::current_dir`], [`StepOptions::stdout`] with a [`Stdio`]);
//! a piped stream is the started step's ([`Step::stdout`]), or read whole
//! with its end ([`Step::wait_with_output`], [`Step::output`]). Errors have
//! a kind to match ([`RunErrorKind`]); a command that was found but did not
//! start is a finished step that says why ([`Finished::not_started`]).
//!
//! The same public items exist on every platform, and steps run there too:
//! on Windows each in a job object of its own (CPU time, memory peak, I/O
//! bytes and processes from the job's accounting), on macOS and the BSDs
//! each in a process group of its own (CPU time and the largest resident
//! set from its first process's `wait4` rusage, lower bounds of its tree).
//! Every number says its source ([`stepmon_model::source::Rung::JobObject`],
//! [`stepmon_model::source::Rung::ProcessRusage`]), every absent one why.
//! [`admin`] holds what a command-line wrapper needs on Linux besides.
#![deny(missing_docs)]
// `deny`, not `forbid`: src/spawn/ (and only it) allows unsafe code.
#![deny(unsafe_code)]

mod action;
pub mod admin;
mod api;
mod container;
mod delegation;
mod error;
mod finished;
mod notice;
mod options;

pub use action::Stdio;
pub use api::{ChildStderr, ChildStdin, ChildStdout, Prepared, Runner, Step, prepare};
pub use container::{Container, ContainerEvidence};
pub use delegation::DELEGATED_RUN;
pub use error::{RunError, RunErrorKind};
pub use finished::Finished;
pub use notice::Notice;
pub use options::{CgroupMode, Limits, MODE_VARIABLE, Mode, NetMode, StepOptions};

/// The platform's part of the public handles ([`api`]): one of these, by
/// `#[cfg]`, each with the same items.
#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod imp;
#[cfg(windows)]
#[path = "windows.rs"]
mod imp;
#[cfg(all(unix, not(target_os = "linux")))]
#[path = "unix_other.rs"]
mod imp;
/// A job object's numbers, checked (pure: tested on every platform).
#[cfg(any(windows, test))]
mod job_account;
/// What the Windows and the macOS/BSD steps share (std's `Command`, its
/// pipe ends, the document from the OS's accounting).
#[cfg(not(target_os = "linux"))]
mod portable;
/// The Windows FFI: each step's job object (the crate's only unsafe code
/// there).
#[cfg(windows)]
#[path = "spawn/windows.rs"]
mod spawn;
/// The macOS and BSD FFI: `wait4` with its rusage, `killpg` (the crate's
/// only unsafe code there).
#[cfg(all(unix, not(target_os = "linux")))]
#[path = "spawn/unix_other.rs"]
mod spawn;

// Linux's internals: private, reached through `imp` and `admin`.
#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod host;
#[cfg(target_os = "linux")]
mod kernel;
#[cfg(target_os = "linux")]
mod ladder;
#[cfg(target_os = "linux")]
mod live;
#[cfg(target_os = "linux")]
mod netns;
#[cfg(target_os = "linux")]
mod own;
#[cfg(target_os = "linux")]
mod processes;
#[cfg(target_os = "linux")]
mod runner;
#[cfg(target_os = "linux")]
mod signals;
#[cfg(target_os = "linux")]
mod spawn;
#[cfg(target_os = "linux")]
mod step;
/// How a live unit test says it cannot run here (shared by the workspace's tests).
#[cfg(all(test, target_os = "linux"))]
use stepmon_testsupport::skip as test_skip;
#[cfg(target_os = "linux")]
mod ticker;
#[cfg(target_os = "linux")]
mod tree;
#[cfg(target_os = "linux")]
mod tree_memory;
pub mod watch;

/// Unit tests that start or reap children of the test process take this:
/// a reaper takes every new child as the step's.
#[cfg(all(test, target_os = "linux"))]
pub(crate) static CHILDREN_OF_THE_TEST_PROCESS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

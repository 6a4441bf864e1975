//! The test helpers of the stepmon crates: [`skip`] (how a live test says it
//! cannot run here), [`chromium`] (headless Chromium for the HTML tests),
//! [`consumers`] (Python parsers and other programs an export is fed to),
//! and, on Unix, [`cgroups`] (no cgroup of this process's steps left) and
//! [`as_nobody`] (a root test's rerun as `nobody`). A dev-dependency of every crate with live tests, so that their
//! tests build and skip the same way in the workspace and in a crate
//! unpacked from its `.crate`.
#![deny(missing_docs)]

#[cfg(unix)]
pub mod as_nobody;
#[cfg(unix)]
pub mod cgroups;
pub mod chromium;
pub mod consumers;
pub mod skip;

/// The README's code blocks, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

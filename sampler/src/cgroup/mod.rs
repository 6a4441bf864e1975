//! The cgroup step probe (Linux).

pub mod discover;
mod files;
mod probe;

pub use probe::CgroupProbe;

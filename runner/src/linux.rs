//! Linux's part of the public handles ([`crate::api`]): a step's cgroups
//! (or the ladder below them), its subreaper, the run document — the
//! `step`, `runner` and `action` modules.

pub(crate) use crate::action::pipe::{ChildStderr, ChildStdin, ChildStdout};
pub(crate) use crate::runner::Runner;
pub(crate) use crate::step::{Prepared, Step, prepare};

//! Cgroups of a run: the step's own (created, or a transient systemd
//! scope; killed, removed, collected by `gc` when stepmon died) and the
//! enclosing one (read only).

pub mod enclosing;
pub mod placement;
pub mod systemd;
pub mod v1;

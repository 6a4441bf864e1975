//! Cgroups of a run: the step's own (created, or a transient systemd
//! scope; killed, removed, collected by `gc` when stepmon died) and the
//! enclosing one (read only).

pub(crate) mod enclosing;
pub(crate) mod naming;
pub(crate) mod placement;
pub(crate) mod systemd;
pub(crate) mod v1;

//! Cgroups of a run: the step's own (created, killed, removed, collected
//! by `gc` when stepmon died) and the enclosing one (read only).

pub mod enclosing;
pub mod placement;
pub mod v1;

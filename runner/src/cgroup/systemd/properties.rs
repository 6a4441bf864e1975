//! The transient scope's name and unit properties, as data: what
//! `StartTransientUnit` is asked for, built without a bus so that it can be
//! tested. Property names and types: systemd.resource-control(5),
//! systemd.scope(5), and the D-Bus API
//! (<https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html>).

use crate::cgroup::naming::RUN_PREFIX;

/// A property value, in the D-Bus types systemd expects.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// `b`.
    Bool(bool),
    /// `s`.
    Str(String),
    /// `as`.
    Strs(Vec<String>),
    /// `au` (`PIDs`).
    U32s(Vec<u32>),
}

/// What the scope is made for.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    /// The run's name ([`crate::cgroup::naming::run_name`]).
    pub(crate) run_name: &'a str,
    /// The process the scope starts with: stepmon's keeper
    /// ([`crate::spawn::keeper`]), not the step.
    pub(crate) pid: u32,
    /// The caller's unit (a `.service` or `.scope`), from its cgroup.
    pub(crate) caller: Option<&'a str>,
    /// The caller's slice, where the scope goes too.
    pub(crate) slice: Option<&'a str>,
}

/// `stepmon-run.<pid>.<start>[.<n>].scope`: `gc` finds leftovers by the
/// prefix and tells a dead owner by the name (as for run cgroups).
#[must_use]
pub(crate) fn unit_name(run_name: &str) -> String {
    format!("{run_name}.scope")
}

/// The run name in a scope's unit name, if it is one of stepmon's.
#[must_use]
pub(crate) fn run_name_of(unit: &str) -> Option<&str> {
    unit.strip_suffix(".scope").filter(|name| name.starts_with(RUN_PREFIX))
}

/// The caller's unit and slice from its cgroup path (`/system.slice/
/// actions.runner.x.service` → unit `actions.runner.x.service`, slice
/// `system.slice`). A unit is only one systemd manages as a service or a
/// scope; `init.scope` (PID 1's) is none a step should be bound to.
#[must_use]
pub(crate) fn caller_of(cgroup: &str) -> (Option<&str>, Option<&str>) {
    let mut parts = cgroup.trim_end_matches('/').rsplit('/');
    let last = parts.next().filter(|u| (u.ends_with(".service") || u.ends_with(".scope")) && *u != "init.scope");
    let slice = parts.next().filter(|s| s.ends_with(".slice"));
    (last, slice.filter(|_| last.is_some()))
}

impl Request<'_> {
    /// The properties, in the order they are sent.
    #[must_use]
    pub(crate) fn properties(&self) -> Vec<(&'static str, Value)> {
        let mut props = vec![
            ("Description", Value::Str(format!("stepmon step {}", self.run_name))),
            ("PIDs", Value::U32s(vec![self.pid])),
            // Accounting on: systemd then enables the controllers down to
            // the scope (cgroup.subtree_control of every slice above it).
            ("CPUAccounting", Value::Bool(true)),
            ("MemoryAccounting", Value::Bool(true)),
            ("IOAccounting", Value::Bool(true)),
            ("TasksAccounting", Value::Bool(true)),
            // The scope's cgroup is stepmon's to divide: the keeper in one
            // sub-cgroup, the step's leaf (with the controllers enabled for
            // it, and stepmon's limits) in another.
            ("Delegate", Value::Bool(true)),
            // Gone when it ends, also when the step failed.
            ("CollectMode", Value::Str("inactive-or-failed".to_owned())),
        ];
        if let Some(slice) = self.slice {
            props.push(("Slice", Value::Str(slice.to_owned())));
        }
        if let Some(caller) = self.caller {
            // Stopping the caller (a cancelled CI job stops the runner's
            // service) stops the step's scope too.
            props.push(("BindsTo", Value::Strs(vec![caller.to_owned()])));
            props.push(("PartOf", Value::Strs(vec![caller.to_owned()])));
        }
        props
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caller_is_the_service_or_scope_of_the_cgroup_path() {
        assert_eq!(
            caller_of("/system.slice/actions.runner.org.service"),
            (Some("actions.runner.org.service"), Some("system.slice"))
        );
        assert_eq!(
            caller_of("/user.slice/user-1000.slice/session-2.scope"),
            (Some("session-2.scope"), Some("user-1000.slice"))
        );
        assert_eq!(caller_of("/init.scope"), (None, None));
        assert_eq!(caller_of("/"), (None, None));
        assert_eq!(caller_of("/svc.slice/runner.service/"), (Some("runner.service"), Some("svc.slice")));
        assert_eq!(caller_of("/docker/abc"), (None, None));
    }

    #[test]
    fn scope_names_carry_the_run_name() {
        let name = unit_name("stepmon-run.12.34");
        assert_eq!(name, "stepmon-run.12.34.scope");
        assert_eq!(run_name_of(&name), Some("stepmon-run.12.34"));
        assert_eq!(run_name_of("session-2.scope"), None);
        assert_eq!(run_name_of("stepmon-run.12.34.service"), None);
    }

    #[test]
    fn the_scope_starts_with_the_keeper_delegated_and_bound_to_the_caller() {
        let request =
            Request { run_name: "stepmon-run.1.2", pid: 42, caller: Some("r.service"), slice: Some("s.slice") };
        let props = request.properties();
        let get = |name: &str| props.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
        assert_eq!(get("PIDs"), Some(Value::U32s(vec![42])));
        assert_eq!(get("Delegate"), Some(Value::Bool(true)));
        assert_eq!(get("BindsTo"), Some(Value::Strs(vec!["r.service".into()])));
        assert_eq!(get("Slice"), Some(Value::Str("s.slice".into())));
        for accounting in ["CPUAccounting", "MemoryAccounting", "IOAccounting", "TasksAccounting"] {
            assert_eq!(get(accounting), Some(Value::Bool(true)), "{accounting}");
        }
        // Limits go on the step's leaf, not the scope (which holds the keeper too).
        let bare = Request { caller: None, slice: None, ..request };
        let props = bare.properties();
        assert!(!props.iter().any(|(n, _)| ["BindsTo", "PartOf", "Slice", "MemoryMax", "TasksMax"].contains(n)));
    }
}

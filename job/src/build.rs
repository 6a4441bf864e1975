//! What `stepmon build` sets in a build's environment so that every
//! compiler run of the build is an action (`stepmon wrap`), for cargo,
//! CMake and make alike; and how a launcher undoes what that setting may
//! double. Pure: the environment comes through a lookup function and goes
//! out as a list, nothing is read or set here.
//!
//! * cargo runs `$RUSTC_WRAPPER $RUSTC ARGS…`
//!   (<https://doc.rust-lang.org/cargo/reference/config.html#buildrustc-wrapper>):
//!   `RUSTC_WRAPPER` becomes the stepmon binary. A wrapper set already (a
//!   compiler cache: sccache) is not lost: it moves to
//!   [`NEXT_RUSTC_WRAPPER`], and the launcher puts it back in front of rustc
//!   ([`chain_rustc_wrapper`]), where `stepmon_job::action::identify`
//!   skips it to name the crate.
//! * CMake reads `CMAKE_C_COMPILER_LAUNCHER` and `CMAKE_CXX_COMPILER_LAUNCHER`
//!   from the environment when a build tree is configured (CMake 3.17 and
//!   later, <https://cmake.org/cmake/help/latest/envvar/CMAKE_LANG_COMPILER_LAUNCHER.html>):
//!   `stepmon;wrap`, in front of a launcher set already.
//! * make runs `$(CC)` and `$(CXX)`, whose defaults an environment variable
//!   overrides (GNU make, "Variables from the Environment"): `CC` and `CXX`
//!   become `stepmon wrap cc` and `stepmon wrap c++` where they are unset.
//!   A Makefile that assigns `CC` itself keeps its own (`make -e`, or
//!   `make CC='stepmon wrap cc'`, puts the launcher in).
//!
//! CMake configured under these settings takes `CC` as its compiler *and*
//! the launcher, so that its compiles read `stepmon wrap stepmon wrap cc
//! …`: [`unnested`] takes the inner launcher off, one action per compile.
//!
//! ```
//! use std::ffi::OsString;
//! use std::path::Path;
//! use stepmon_job::build::{NEXT_RUSTC_WRAPPER, environment};
//!
//! let given = |name: &str| (name == "RUSTC_WRAPPER").then(|| OsString::from("sccache"));
//! let set = environment(Path::new("/usr/bin/stepmon"), Path::new("/tmp/job.jsonl"), given);
//! let value = |name: &str| set.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_str().unwrap());
//! assert_eq!(value("RUSTC_WRAPPER"), Some("/usr/bin/stepmon"));
//! assert_eq!(value(NEXT_RUSTC_WRAPPER), Some("sccache"));
//! assert_eq!(value("CC"), Some("/usr/bin/stepmon wrap cc"));
//! assert_eq!(value("CMAKE_C_COMPILER_LAUNCHER"), Some("/usr/bin/stepmon;wrap"));
//! ```

use std::ffi::{OsStr, OsString};
use std::path::Path;

/// The variable naming the job record every action is appended to
/// (`stepmon wrap`'s).
pub const JOB_VARIABLE: &str = "STEPMON_JOB";

/// Where `stepmon build` keeps a `RUSTC_WRAPPER` that was set before it:
/// the launcher runs `$STEPMON_RUSTC_WRAPPER $RUSTC ARGS…` as the action
/// ([`chain_rustc_wrapper`]).
pub const NEXT_RUSTC_WRAPPER: &str = "STEPMON_RUSTC_WRAPPER";

/// The variables of the compiler launchers, in the order they are set.
const LAUNCHERS: [&str; 2] = ["CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER"];

/// The variables `stepmon build` sets for the build, with their values:
/// `stepmon` is this stepmon binary (an absolute path: cargo, make and
/// CMake run it from many directories), `job` the record (absolute too),
/// `given` the value a variable has in the environment the build would
/// get otherwise (`None`: unset).
///
/// Empty values count as unset. A `RUSTC_WRAPPER` that is this stepmon
/// already is not chained to itself.
#[must_use]
pub fn environment(
    stepmon: &Path,
    job: &Path,
    given: impl Fn(&str) -> Option<OsString>,
) -> Vec<(&'static str, OsString)> {
    let given = |name: &str| given(name).filter(|v| !v.is_empty());
    let mut set = vec![(JOB_VARIABLE, job.as_os_str().to_owned())];
    set.push(("RUSTC_WRAPPER", stepmon.as_os_str().to_owned()));
    match given("RUSTC_WRAPPER") {
        Some(wrapper) if !is_stepmon(&wrapper, stepmon) => set.push((NEXT_RUSTC_WRAPPER, wrapper)),
        _ => {}
    }
    for launcher in LAUNCHERS {
        let mut value = stepmon.as_os_str().to_owned();
        value.push(";wrap");
        // CMake's list: this launcher first, one set already after it.
        if let Some(before) = given(launcher).filter(|v| !starts_with_stepmon(v, stepmon)) {
            value.push(";");
            value.push(before);
        }
        set.push((launcher, value));
    }
    for (variable, compiler) in [("CC", "cc"), ("CXX", "c++")] {
        if given(variable).is_none() {
            let mut value = stepmon.as_os_str().to_owned();
            value.push(" wrap ");
            value.push(compiler);
            set.push((variable, value));
        }
    }
    set
}

/// Whether `program` names `stepmon`: its path, or a bare `stepmon`.
fn is_stepmon(program: &OsStr, stepmon: &Path) -> bool {
    Path::new(program) == stepmon || program == "stepmon"
}

/// Whether a CMake launcher list starts with `stepmon` (set by an outer
/// `stepmon build`, or by the user).
fn starts_with_stepmon(list: &OsStr, stepmon: &Path) -> bool {
    let first = list.as_encoded_bytes().split(|b| *b == b';').next().unwrap_or_default();
    // Split at an ASCII byte: the part is a whole OsStr of the platform's encoding.
    is_stepmon(&OsString::from(String::from_utf8_lossy(first).into_owned()), stepmon)
}

/// The action of cargo's `stepmon $RUSTC ARGS…` (`command`, stepmon's own
/// name taken off) with the wrapper `next` ([`NEXT_RUSTC_WRAPPER`], when
/// set and not empty) back in front of it: `next $RUSTC ARGS…`, as cargo
/// would have run it without `stepmon build`.
///
/// ```
/// use std::ffi::OsString;
/// let command: Vec<OsString> = ["rustc", "--crate-name", "a"].map(Into::into).to_vec();
/// let chained = stepmon_job::build::chain_rustc_wrapper(command.clone(), Some("sccache".into()));
/// assert_eq!(chained, ["sccache", "rustc", "--crate-name", "a"]);
/// assert_eq!(stepmon_job::build::chain_rustc_wrapper(command.clone(), Some("".into())), command);
/// ```
#[must_use]
pub fn chain_rustc_wrapper(mut command: Vec<OsString>, next: Option<OsString>) -> Vec<OsString> {
    if let Some(next) = next.filter(|n| !n.is_empty()) {
        command.insert(0, next);
    }
    command
}

/// `command` without the launchers in front of it that are this stepmon
/// (`stepmon` as a path or a bare name, then `wrap`): what CMake runs
/// when both its compiler (`CC`) and its launcher are `stepmon wrap`.
///
/// ```
/// use std::ffi::OsString;
/// use std::path::Path;
/// let command: Vec<OsString> = ["/usr/bin/stepmon", "wrap", "cc", "-c", "a.c"].map(Into::into).to_vec();
/// assert_eq!(stepmon_job::build::unnested(&command, Path::new("/usr/bin/stepmon")), &command[2..]);
/// assert_eq!(stepmon_job::build::unnested(&command[2..], Path::new("/usr/bin/stepmon")), &command[2..]);
/// ```
#[must_use]
pub fn unnested<'a>(mut command: &'a [OsString], stepmon: &Path) -> &'a [OsString] {
    while let [program, wrap, rest @ ..] = command
        && wrap == "wrap"
        && is_stepmon(program, stepmon)
        && !rest.is_empty()
    {
        command = rest;
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEPMON: &str = "/opt/stepmon/bin/stepmon";

    fn set(given: &[(&str, &str)]) -> Vec<(&'static str, String)> {
        let given: Vec<(String, OsString)> = given.iter().map(|(n, v)| ((*n).to_owned(), OsString::from(v))).collect();
        environment(Path::new(STEPMON), Path::new("/tmp/b/job.jsonl"), |name| {
            given.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
        })
        .into_iter()
        .map(|(n, v)| (n, v.into_string().unwrap()))
        .collect()
    }

    fn value<'a>(set: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
        set.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_bare_environment_gets_every_launcher() {
        let set = set(&[]);
        let names: Vec<&str> = set.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            ["STEPMON_JOB", "RUSTC_WRAPPER", "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER", "CC", "CXX"]
        );
        assert_eq!(value(&set, "STEPMON_JOB"), Some("/tmp/b/job.jsonl"));
        assert_eq!(value(&set, "RUSTC_WRAPPER"), Some(STEPMON));
        assert_eq!(value(&set, "CMAKE_CXX_COMPILER_LAUNCHER"), Some("/opt/stepmon/bin/stepmon;wrap"));
        assert_eq!(value(&set, "CXX"), Some("/opt/stepmon/bin/stepmon wrap c++"));
    }

    #[test]
    fn what_was_set_is_chained_or_kept() {
        let set = set(&[
            ("RUSTC_WRAPPER", "/usr/bin/sccache"),
            ("CMAKE_C_COMPILER_LAUNCHER", "ccache"),
            ("CC", "clang"),
            ("CXX", ""),
        ]);
        assert_eq!(value(&set, "RUSTC_WRAPPER"), Some(STEPMON));
        assert_eq!(value(&set, NEXT_RUSTC_WRAPPER), Some("/usr/bin/sccache"));
        assert_eq!(value(&set, "CMAKE_C_COMPILER_LAUNCHER"), Some("/opt/stepmon/bin/stepmon;wrap;ccache"));
        // make's CC is the user's; an empty CXX is unset.
        assert_eq!(value(&set, "CC"), None);
        assert_eq!(value(&set, "CXX"), Some("/opt/stepmon/bin/stepmon wrap c++"));
    }

    #[test]
    fn stepmon_is_never_chained_to_itself() {
        for wrapper in [STEPMON, "stepmon"] {
            let set = set(&[("RUSTC_WRAPPER", wrapper), ("CMAKE_C_COMPILER_LAUNCHER", &format!("{wrapper};wrap"))]);
            assert_eq!(value(&set, NEXT_RUSTC_WRAPPER), None, "{wrapper}");
            assert_eq!(value(&set, "CMAKE_C_COMPILER_LAUNCHER"), Some("/opt/stepmon/bin/stepmon;wrap"));
        }
    }

    #[test]
    fn nested_launchers_come_off_and_nothing_else() {
        let argv = |line: &str| -> Vec<OsString> { line.split(' ').map(Into::into).collect() };
        let stepmon = Path::new(STEPMON);
        let doubled = argv(&format!("{STEPMON} wrap stepmon wrap cc -c a.c"));
        assert_eq!(unnested(&doubled, stepmon), &argv("cc -c a.c")[..]);
        // Another program's `wrap`, and a lone `stepmon wrap`, stay.
        let other = argv("/usr/bin/other wrap cc");
        assert_eq!(unnested(&other, stepmon), &other[..]);
        let lone = argv(&format!("{STEPMON} wrap"));
        assert_eq!(unnested(&lone, stepmon), &lone[..]);
    }
}

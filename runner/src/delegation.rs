//! The command line that runs a step without root, in a delegated
//! subtree: the one string every hint that suggests delegation quotes
//! (the CLI's, and `stepmon doctor`'s host checks).

/// How to run a step without root, in a delegated subtree: `systemd-run`
/// creates a transient scope with `Delegate=yes`, and the shell it starts
/// there expands `$(stepmon doctor --own-cgroup)`, so `--cgroup-parent`
/// names that scope. (Expanded by the caller's shell, before `systemd-run`,
/// it would name the caller's own cgroup: the scope does not exist yet.)
/// `CMD` stands for the step's command. Every hint that suggests delegation
/// quotes this one string. Delegation:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#delegation>,
/// <https://systemd.io/CGROUP_DELEGATION/>.
pub const DELEGATED_RUN: &str = "systemd-run --user --scope -p Delegate=yes -- \
     sh -c 'stepmon run --cgroup-parent \"$(stepmon doctor --own-cgroup)\" -- CMD'";

// The test runs `sh`.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Runs `command` (a hint's command line, `CMD` as `true`) through
    /// `sh` with stand-ins on PATH: `systemd-run` runs what follows its
    /// options with `IN_SCOPE=1` (as the new scope would), `stepmon doctor
    /// --own-cgroup` prints `scope` there and `caller` outside it, and
    /// `stepmon run --cgroup-parent DIR` prints DIR. Returns what it printed.
    fn cgroup_parent_given_by(command: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let bin = tempfile::tempdir().expect("scratch directory");
        let stand_ins = [
            (
                "systemd-run",
                "while [ $# -gt 0 ]; do case $1 in --) shift; break;; -p) shift 2;; -*) shift;; *) break;; esac; done\n\
                 IN_SCOPE=1 exec \"$@\"\n",
            ),
            (
                "stepmon",
                "case $1 in\n\
                 doctor) if [ \"${IN_SCOPE:-}\" = 1 ]; then echo scope; else echo caller; fi;;\n\
                 run) echo \"$3\";;\n\
                 esac\n",
            ),
        ];
        for (name, body) in stand_ins {
            let path = bin.path().join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write a stand-in");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod a stand-in");
        }
        let path = format!("{}:/usr/bin:/bin", bin.path().display());
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", &command.replace("CMD", "true")])
            .env("PATH", path)
            .env_remove("IN_SCOPE")
            .output()
            .expect("run /bin/sh");
        assert!(out.status.success(), "{command}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[test]
    fn the_delegation_hint_names_the_new_scope() {
        assert_eq!(cgroup_parent_given_by(DELEGATED_RUN), "scope");
        // With `$(…)` outside `sh -c`, the caller's shell expands it before
        // the scope exists: it names the caller's cgroup.
        let expanded_too_early = "systemd-run --user --scope -p Delegate=yes stepmon run \
             --cgroup-parent \"$(stepmon doctor --own-cgroup)\" -- CMD";
        assert_eq!(cgroup_parent_given_by(expanded_too_early), "caller");
    }
}

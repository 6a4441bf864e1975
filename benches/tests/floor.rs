//! The physical-floor program (benches/floor/floor.c) built as the VM tier
//! builds it (`gcc -O2 -static`) and run as its README says: the command
//! runs inside the cgroup floor made (and, with `FLOOR_V1=memory`, inside
//! the v1 memory cgroup), its exit status comes back (127 not found, 126 not
//! executable, 128+N for signal N, 125 for floor's own failures), what it
//! read is printed with `FLOOR_PRINT=1`, and no cgroup it made is left, on
//! the error paths too.
//!
//! Needs gcc with a static libc, root and cgroup2; prints `SKIPPED <name>:
//! <why>` otherwise (stepmon_testsupport::skip).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_testsupport::skip;

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, PoisonError};

/// Where cgroup v1's memory hierarchy is mounted on a hybrid host (floor.c's
/// `V1_MEMORY_MOUNT`).
const V1_MEMORY_MOUNT: &str = "/sys/fs/cgroup/memory";
/// The uid and gid of `nobody` and `nogroup` on Debian.
const NOBODY: u32 = 65534;

/// The program, built for one test in a scratch directory that is removed
/// with it (also when the test fails).
struct Floor {
    _dir: tempfile::TempDir,
    program: PathBuf,
}

impl Floor {
    /// Builds floor.c as ci/vm/lib/build.sh does; `Err` says why gcc cannot
    /// build it here.
    fn build() -> Result<Self, String> {
        // `gcc -print-file-name=libc.a` prints the bare name when gcc has no
        // static libc (Debian's libc6-dev, which scripts/setup installs).
        let libc = match Command::new("gcc").arg("-print-file-name=libc.a").output() {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
            Ok(out) => return Err(format!("gcc -print-file-name failed: {}", String::from_utf8_lossy(&out.stderr))),
            Err(e) => return Err(format!("no gcc ({e}; scripts/setup installs it)")),
        };
        if !Path::new(&libc).is_absolute() {
            return Err("gcc has no static libc (libc.a; Debian's libc6-dev, which scripts/setup installs)".into());
        }
        let dir = tempfile::tempdir().unwrap();
        // Runnable by `nobody` (the error-path test).
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let program = dir.path().join("floor");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("floor/floor.c");
        // The command line of ci/vm/lib/build.sh, with warnings as errors.
        let out = Command::new("gcc")
            .args(["-O2", "-static", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&program)
            .arg(&source)
            .output()
            .unwrap();
        // gcc is there with a static libc: a failed build is floor.c's fault.
        assert!(out.status.success(), "gcc {}: {}", source.display(), String::from_utf8_lossy(&out.stderr));
        Ok(Floor { _dir: dir, program })
    }
}

/// The cgroup2 directory floor uses by default, as floor.c chooses it:
/// `/sys/fs/cgroup/unified` when that is a cgroup2 mount, else
/// `/sys/fs/cgroup` when that is one.
fn cgroup2_root() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let cgroup2_at = |dir: &str| {
        mounts.lines().any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(1) == Some(&dir) && fields.get(2) == Some(&"cgroup2")
        })
    };
    ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"].into_iter().find(|dir| cgroup2_at(dir)).map(PathBuf::from)
}

/// This process's directory in the v1 memory hierarchy, where
/// `FLOOR_V1=memory` makes its cgroup; `None` without one.
fn own_v1_memory_dir() -> Option<PathBuf> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let path = cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers.split(',').any(|c| c == "memory").then_some(path)
    })?;
    let dir = Path::new(V1_MEMORY_MOUNT).join(path.trim_start_matches('/'));
    dir.join("tasks").exists().then_some(dir)
}

/// Whether this process runs as root: the effective uid, the second field
/// of `Uid:` in /proc/self/status (proc(5)).
fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|ids| ids.split_whitespace().nth(1)) == Some("0")
}

/// What a test needs: the program and the cgroup2 directory; `None` after
/// `SKIPPED` when this host cannot run it.
fn host(test: &str) -> Option<(Floor, PathBuf)> {
    if !is_root() {
        skip::skip(test, "needs root to create cgroups");
        return None;
    }
    let floor = match Floor::build() {
        Ok(floor) => floor,
        Err(why) => {
            skip::skip(test, why);
            return None;
        }
    };
    let Some(root) = cgroup2_root() else {
        skip::skip(test, "no cgroup2 mount at /sys/fs/cgroup/unified or /sys/fs/cgroup");
        return None;
    };
    Some((floor, root))
}

/// The `floor.*` entries of `dir`: floor's cgroups there.
fn floor_cgroups(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("floor."))
        .collect()
}

/// One floor at a time: each test compares the `floor.*` cgroups before and
/// after its runs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A finished run of floor: its output and the name its cgroups had.
struct Run {
    out: Output,
    name: String,
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
}

/// Runs `command` (floor and its arguments, set up by the caller) and
/// checks that no `floor.*` cgroup appeared in or vanished from `dirs`.
fn run_clean(mut command: Command, dirs: &[&Path]) -> Run {
    let before: Vec<_> = dirs.iter().map(|dir| floor_cgroups(dir)).collect();
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let name = format!("floor.{}", child.id());
    let out = child.wait_with_output().unwrap();
    for (dir, before) in dirs.iter().zip(before) {
        assert_eq!(floor_cgroups(dir), before, "{command:?} left (or removed) a floor cgroup in {}", dir.display());
        assert!(!dir.join(&name).exists(), "{command:?} left {}", dir.join(&name).display());
    }
    Run { out, name }
}

fn floor(program: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args).env_remove("FLOOR_CGROUP2").env_remove("FLOOR_V1").env_remove("FLOOR_PRINT");
    command
}

#[test]
fn runs_the_command_in_its_cgroup_and_passes_its_status_on() {
    let test = "runs_the_command_in_its_cgroup_and_passes_its_status_on";
    let Some((built, root)) = host(test) else { return };
    let program = built.program.as_path();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let dirs = [root.as_path()];

    let run = run_clean(floor(program, &["/bin/true"]), &dirs);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.stderr(), "", "floor prints nothing by default");

    let run = run_clean(floor(program, &["sh", "-c", "exit 3"]), &dirs);
    assert_eq!(run.code(), Some(3), "{}", run.stderr());

    let run = run_clean(floor(program, &["sh", "-c", "kill -TERM $$"]), &dirs);
    assert_eq!(run.code(), Some(128 + 15), "{}", run.stderr());

    let run = run_clean(floor(program, &["/nonexistent"]), &dirs);
    assert_eq!(run.code(), Some(127), "{}", run.stderr());
    assert!(run.stderr().contains("/nonexistent"), "{}", run.stderr());

    // A file without the execute bit.
    let run = run_clean(floor(program, &["/proc/self/status"]), &dirs);
    assert_eq!(run.code(), Some(126), "{}", run.stderr());

    // The command ran inside floor's own cgroup: its unified line
    // (`0::PATH`, relative to the cgroup2 mount) ends with floor's name.
    let run = run_clean(floor(program, &["cat", "/proc/self/cgroup"]), &dirs);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let unified = run.stdout().lines().find_map(|l| l.strip_prefix("0::").map(str::to_owned));
    assert_eq!(unified.as_deref().and_then(|p| p.rsplit('/').next()), Some(run.name.as_str()), "{}", run.stdout());

    // FLOOR_PRINT=1: the one cpu.stat read, on stderr (usage_usec is one of
    // the core keys every cgroup2 cgroup has, Documentation/admin-guide/cgroup-v2.rst).
    let mut command = floor(program, &["/bin/true"]);
    command.env("FLOOR_PRINT", "1");
    let run = run_clean(command, &dirs);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(run.stderr().contains(&format!("{}/cpu.stat:\n", run.name)), "{}", run.stderr());
    assert!(run.stderr().lines().any(|l| l.starts_with("usage_usec ")), "{}", run.stderr());
}

#[test]
fn floor_v1_memory_joins_a_v1_memory_cgroup_and_reads_its_peak() {
    let test = "floor_v1_memory_joins_a_v1_memory_cgroup_and_reads_its_peak";
    let Some((built, root)) = host(test) else { return };
    let program = built.program.as_path();
    let Some(v1) = own_v1_memory_dir() else {
        return skip::skip(test, format!("no cgroup v1 memory hierarchy at {V1_MEMORY_MOUNT} (pure cgroup v2?)"));
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let dirs = [root.as_path(), v1.as_path()];
    let v1_floor = |args: &[&str]| {
        let mut command = floor(program, args);
        command.env("FLOOR_V1", "memory").env("FLOOR_PRINT", "1");
        command
    };

    let run = run_clean(v1_floor(&["/bin/true"]), &dirs);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let peak = run
        .stderr()
        .lines()
        .find_map(|l| l.split_once("/memory.max_usage_in_bytes: ").map(|(_, v)| v.parse::<u64>().unwrap()));
    // /bin/true's pages were charged to the cgroup it ran in.
    assert!(peak.is_some_and(|p| p > 0), "no peak read: {}", run.stderr());

    let run = run_clean(v1_floor(&["sh", "-c", "exit 5"]), &dirs);
    assert_eq!(run.code(), Some(5), "{}", run.stderr());
    let run = run_clean(v1_floor(&["/nonexistent"]), &dirs);
    assert_eq!(run.code(), Some(127), "{}", run.stderr());

    // The command ran inside both: the memory line names floor's v1 cgroup
    // below this process's own one.
    let run = run_clean(v1_floor(&["cat", "/proc/self/cgroup"]), &dirs);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let memory = run.stdout().lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers.split(',').any(|c| c == "memory").then(|| path.to_owned())
    });
    let expected = v1.join(&run.name);
    assert_eq!(
        memory.map(|p| Path::new(V1_MEMORY_MOUNT).join(p.trim_start_matches('/'))),
        Some(expected),
        "{}",
        run.stdout()
    );
}

#[test]
fn an_error_says_what_failed_exits_125_and_leaves_nothing() {
    let test = "an_error_says_what_failed_exits_125_and_leaves_nothing";
    let Some((built, root)) = host(test) else { return };
    let program = built.program.as_path();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);

    let run = run_clean(floor(program, &[]), &[&root]);
    assert_eq!(run.code(), Some(125), "no command: {}", run.stderr());
    let mut command = floor(program, &["/bin/true"]);
    command.env("FLOOR_CGROUP2", "/proc");
    let run = run_clean(command, &[&root]);
    assert_eq!(run.code(), Some(125), "{}", run.stderr());
    assert!(run.stderr().contains("/proc is not a cgroup2 directory"), "{}", run.stderr());
    // A directory that is no cgroup: floor's mkdir there succeeds, the
    // cpu.stat it then opens is missing, and the directory is removed.
    let plain = tempfile::tempdir().unwrap();
    let mut command = floor(program, &["/bin/true"]);
    command.env("FLOOR_CGROUP2", plain.path());
    let run = run_clean(command, &[&root, plain.path()]);
    assert_eq!(run.code(), Some(125), "{}", run.stderr());
    assert!(run.stderr().contains(" is not a cgroup2 directory"), "{}", run.stderr());
    assert_eq!(
        std::fs::read_dir(plain.path()).unwrap().count(),
        0,
        "floor left its directory in {}",
        plain.path().display()
    );
    let mut command = floor(program, &["/bin/true"]);
    command.env("FLOOR_V1", "cpu");
    let run = run_clean(command, &[&root]);
    assert_eq!(run.code(), Some(125), "{}", run.stderr());

    // A failure after the cgroup2 cgroup was made: `nobody` may create
    // cgroups in a directory delegated to it, not in the v1 memory
    // hierarchy. The cgroup2 one must be gone again.
    let Some(v1) = own_v1_memory_dir() else {
        return skip::skip(test, format!("no cgroup v1 memory hierarchy at {V1_MEMORY_MOUNT} (pure cgroup v2?)"));
    };
    let delegated = Delegated::new(&root);
    let mut command = floor(program, &["/bin/true"]);
    command.env("FLOOR_CGROUP2", &delegated.0).env("FLOOR_V1", "memory").uid(NOBODY).gid(NOBODY);
    let run = run_clean(command, &[&delegated.0, &v1]);
    assert_eq!(run.code(), Some(125), "{}", run.stderr());
    assert!(run.stderr().starts_with("floor: mkdir ") && run.stderr().contains(&run.name), "{}", run.stderr());
    // The v2 mkdir had succeeded (the error is the v1 one): it was removed.
    assert!(floor_cgroups(&delegated.0).is_empty());

    // SIGTERM to floor itself is passed on to the command; floor then
    // removes its cgroup and exits as the command did.
    let before = floor_cgroups(&root);
    let mut child = floor(program, &["sleep", "30"]).stderr(Stdio::piped()).spawn().unwrap();
    let made = root.join(format!("floor.{}", child.id()));
    let _cleanup = KillOnDrop(made.clone());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !made.join("cgroup.procs").exists() || std::fs::read_to_string(made.join("cgroup.procs")).unwrap().is_empty()
    {
        assert!(std::time::Instant::now() < deadline, "floor did not start sleep in {} within 10 s", made.display());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
    assert_eq!(floor_cgroups(&root), before, "floor left {} after SIGTERM", made.display());

    // A child killed by a signal also ends with its cgroup removed.
    let run = run_clean(floor(program, &["sh", "-c", "kill -KILL $$"]), &[&root]);
    assert_eq!(run.code(), Some(128 + 9), "{}", run.stderr());
    assert_eq!(run.out.status.signal(), None, "floor itself exits");
}

/// A cgroup2 directory owned by `nobody` (its `cgroup.procs`,
/// `cgroup.threads` and `cgroup.subtree_control` too: delegation,
/// Documentation/admin-guide/cgroup-v2.rst "Delegation"), removed on drop.
struct Delegated(PathBuf);

impl Delegated {
    fn new(root: &Path) -> Self {
        let dir = root.join(format!("floor-test-delegated.{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        let delegated = Delegated(dir);
        for path in ["", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"] {
            std::os::unix::fs::chown(delegated.0.join(path), Some(NOBODY), Some(NOBODY)).unwrap();
        }
        delegated
    }
}

impl Drop for Delegated {
    fn drop(&mut self) {
        for entry in std::fs::read_dir(&self.0).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
        // Not a second panic while a failed assertion unwinds (that aborts).
        if let Err(e) = std::fs::remove_dir(&self.0)
            && !std::thread::panicking()
        {
            panic!("removing {}: {e}", self.0.display());
        }
    }
}

/// A cgroup floor should have removed: if the test fails before floor did,
/// what is in it is killed (`cgroup.kill`) and it is removed on drop.
struct KillOnDrop(PathBuf);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if !self.0.exists() {
            return;
        }
        let _ = std::fs::write(self.0.join("cgroup.kill"), "1");
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

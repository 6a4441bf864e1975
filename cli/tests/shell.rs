//! `stepmon shell FILE` as a CI runner calls it: a user made for the test
//! (removed at its end, also when it fails), the script run both by plain
//! `bash --noprofile --norc -eo pipefail FILE` and by `stepmon shell FILE`
//! as that user, from the same directory, with the same umask, groups and
//! environment. What the script sees (`id`, `pwd`, `umask`, the whole
//! environment as bytes) and what it writes (stdout and stderr, bytes,
//! also NUL and bytes that are not UTF-8) must be the same both ways, and
//! so must its exit status (`exit 3`, a `false` under `-e`):
//! * with passwordless sudo (a drop-in in /etc/sudoers.d, removed at the
//!   end): the step in the job record with a cgroup of its own, named by
//!   `GITHUB_ACTION` (`build`), else by the script's first command line
//!   (`__run_2`, GitHub's own id, names nothing); stderr exactly the script's;
//! * without (the drop-in absent): the same, the step measured on the
//!   enclosing rung, and one notice line before the script's stderr.
//!
//! No variable is left out of the comparison: the script's environment is
//! the caller's, byte for byte, also through sudo (which resets its own).
//! And as root, where no sudo is needed, with and without a job record.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::skip;
use serde_json::Value;

/// Longer than any of these scripts takes through sudo on a loaded machine.
const STUCK: Duration = Duration::from_secs(120);
/// The tools the test needs besides sudo (Debian's passwd and util-linux).
const TOOLS: [&str; 6] = [
    "/usr/sbin/useradd",
    "/usr/sbin/userdel",
    "/usr/sbin/groupadd",
    "/usr/sbin/groupdel",
    "/usr/bin/setpriv",
    "/usr/bin/setsid",
];
/// The names of the test's users and groups, then the test's PID.
const PREFIX: &str = "stepmon-shtest-";
/// The umask the user runs with (not root's 022: it must be carried).
const UMASK: &str = "002";

/// One test at a time: each makes a user (useradd locks /etc/passwd).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run_tool(program: &str, args: &[&OsStr]) {
    let output = Command::new(program).args(args).output().unwrap();
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// A user of the test's own, with a user group, one more supplementary
/// group of its own and `users`, and a directory it owns (its home, its
/// scripts, its job record); all removed on drop, with the sudoers drop-in.
struct TestUser {
    name: String,
    extra_group: String,
    uid: u32,
    dir: tempfile::TempDir,
    sudoers: PathBuf,
}

impl TestUser {
    /// `None` (after `SKIPPED`) where the test cannot make one.
    fn create(test: &str, sudo_needed: bool) -> Option<TestUser> {
        if !rustix::process::geteuid().is_root() {
            skip::skip(test, "needs root to make a user");
            return None;
        }
        if let Some(tool) = TOOLS.iter().find(|tool| !Path::new(tool).exists()) {
            skip::skip(test, format_args!("no {tool}"));
            return None;
        }
        if sudo_needed && !Path::new("/usr/bin/sudo").exists() {
            skip::skip(test, "no /usr/bin/sudo (scripts/setup installs Debian's sudo)");
            return None;
        }
        sweep_stale();
        let name = format!("{PREFIX}{}", std::process::id());
        let dir = tempfile::Builder::new().prefix("stepmon-cli-test-shell-").tempdir().unwrap();
        let home = dir.path().join("home");
        let mut user = TestUser {
            extra_group: format!("{name}-g"),
            sudoers: Path::new("/etc/sudoers.d").join(&name),
            name,
            uid: 0,
            dir,
        };
        // From here on, drop removes what was made.
        run_tool("/usr/sbin/groupadd", &[user.extra_group.as_ref()]);
        let groups = format!("users,{}", user.extra_group);
        let args = ["--no-create-home", "--home-dir"].map(OsStr::new).into_iter().chain([home.as_os_str()]);
        let args: Vec<&OsStr> = args
            .chain(["--shell", "/bin/bash", "--user-group", "--groups", &groups, &user.name].map(OsStr::new))
            .collect();
        run_tool("/usr/sbin/useradd", &args);
        let id = Command::new("id").args(["-u", &user.name]).output().unwrap();
        let uid: u32 = String::from_utf8(id.stdout).unwrap().trim().parse().unwrap();
        user.uid = uid;
        std::fs::create_dir(&home).unwrap();
        for dir in [user.dir.path(), home.as_path()] {
            std::os::unix::fs::chown(dir, Some(uid), None).unwrap();
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Some(user)
    }

    /// Passwordless sudo for the user, as GitHub's hosted runners give
    /// theirs (a drop-in checked by visudo).
    fn allow_sudo(&self) {
        self.allow_sudo_of("ALL");
    }

    /// Passwordless sudo of `commands` alone for the user.
    fn allow_sudo_of(&self, commands: &str) {
        std::fs::write(&self.sudoers, format!("{} ALL=(ALL:ALL) NOPASSWD: {commands}\n", self.name)).unwrap();
        std::fs::set_permissions(&self.sudoers, std::fs::Permissions::from_mode(0o440)).unwrap();
        run_tool("/usr/sbin/visudo", &["-cf".as_ref(), self.sudoers.as_os_str()]);
    }

    /// An executable script `name` in the user's directory.
    fn script(&self, name: &str, body: &str) {
        let path = self.dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    /// The job record's path.
    fn job(&self) -> PathBuf {
        self.dir.path().join("job.jsonl")
    }

    /// The environment both ways get, and nothing else: a CI's kind of
    /// variables, one with every character a shell treats specially, one
    /// that is not UTF-8.
    fn env(&self, github_action: &str) -> Vec<(OsString, OsString)> {
        let (home, job) = (self.dir.path().join("home"), self.job());
        let pairs: [(&str, &OsStr); 12] = [
            ("PATH", "/usr/local/bin:/usr/bin:/bin".as_ref()),
            ("HOME", home.as_os_str()),
            ("USER", self.name.as_ref()),
            ("LOGNAME", self.name.as_ref()),
            ("LANG", "C.UTF-8".as_ref()),
            ("GITHUB_ACTION", github_action.as_ref()),
            ("GITHUB_WORKSPACE", self.dir.path().as_os_str()),
            ("STEPMON_JOB", job.as_os_str()),
            ("OTEL_SERVICE_NAME", "ci".as_ref()),
            ("TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".as_ref()),
            ("STEPMON_SHTEST_TRICKY", "a b\n=c\t'\"$HOME \\ é".as_ref()),
            ("STEPMON_SHTEST_BYTES", OsStr::from_bytes(b"\xff\xfe=ok")),
        ];
        pairs.into_iter().map(|(name, value)| (name.into(), value.to_owned())).collect()
    }

    /// `command` run as the user (its groups from /etc/group, as a login
    /// gives them), in its directory, with umask [`UMASK`], `env` alone,
    /// stdin empty, in a session of its own (no terminal: sudo's `use_pty`
    /// then takes none, as in CI).
    fn run(&self, command: &[&OsStr], env: &[(OsString, OsString)]) -> Output {
        let mut wrapped = self.command(command, env);
        let what = format!("{command:?}");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(wrapped.output());
        });
        rx.recv_timeout(STUCK).unwrap_or_else(|_| panic!("{what} did not end within {STUCK:?}")).unwrap()
    }

    /// [`TestUser::run`]'s command, to spawn: each program execs the next,
    /// so its PID is `command`'s.
    fn command(&self, command: &[&OsStr], env: &[(OsString, OsString)]) -> Command {
        let mut wrapped = Command::new("/usr/bin/setsid");
        wrapped
            .args(["/bin/sh", "-c", &format!("umask {UMASK} && exec \"$@\""), "sh", "/usr/bin/setpriv"])
            .arg(format!("--reuid={}", self.name))
            .arg(format!("--regid={}", self.name))
            .args(["--init-groups", "--"])
            .args(command)
            .env_clear()
            .envs(env.iter().map(|(n, v)| (n, v)))
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        wrapped
    }

    /// `script` by plain bash and by `stepmon shell` (with `flags`), as
    /// the user, with `github_action`.
    fn both_ways(&self, shell: &[&str], flags: &[&str], script: &str, github_action: &str) -> (Output, Output) {
        let env = self.env(github_action);
        let plain: Vec<&OsStr> = shell.iter().map(OsStr::new).chain([OsStr::new(script)]).collect();
        let stepmon = env!("CARGO_BIN_EXE_stepmon");
        let words = [stepmon, "shell"];
        let measured: Vec<&OsStr> = words.iter().chain(flags).chain([&script]).map(OsStr::new).collect();
        (self.run(&plain, &env), self.run(&measured, &env))
    }

    /// The job record's last step.
    fn last_step(&self) -> Recorded {
        last_step(&self.job())
    }

    /// `stepmon shell` of `script` as the user: its stdout.
    fn measured_stdout(&self, script: &str) -> String {
        let stepmon = OsStr::new(env!("CARGO_BIN_EXE_stepmon"));
        let output = self.run(&[stepmon, "shell".as_ref(), script.as_ref()], &self.env("__run_9"));
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stdout)
    }
}

/// A step of a job record: its name, its status, the rung of each of its
/// field groups.
struct Recorded {
    name: String,
    exit_code: i64,
    rungs: serde_json::Map<String, Value>,
    /// The start line's action: the script in the CI's words.
    action: Value,
}

impl Recorded {
    fn rung(&self, of: &str) -> &str {
        self.rungs[of]["rung"].as_str().unwrap()
    }
}

/// The last step of the job record `job`.
fn last_step(job: &Path) -> Recorded {
    let text = std::fs::read_to_string(job).unwrap();
    let line = |kind: &str| -> Value {
        let line = text.lines().rev().find(|line| line.contains(&format!("\"kind\":\"{kind}\""))).unwrap();
        serde_json::from_str(line).unwrap()
    };
    let (start, end) = (line("stepStart"), line("stepEnd"));
    assert_eq!(start["step"], end["step"], "{start} {end}");
    Recorded {
        name: start["name"].as_str().unwrap().to_owned(),
        exit_code: end["exitCode"].as_i64().unwrap(),
        rungs: end["brief"]["sources"].as_object().unwrap().clone(),
        action: start["action"].clone(),
    }
}

/// The rungs of a step's own cgroup.
const OWN: [&str; 3] = ["cgroupV2", "cgroupV1", "systemdScope"];

impl Drop for TestUser {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.sudoers);
        // userdel removes the user's own group with it (USERGROUPS_ENAB).
        let _ = Command::new("/usr/sbin/userdel").arg(&self.name).stderr(Stdio::null()).status();
        let _ = Command::new("/usr/sbin/groupdel").arg(&self.extra_group).stderr(Stdio::null()).status();
    }
}

/// Users, groups and drop-ins of earlier runs of this test killed before
/// their clean-up (their PID is gone).
fn sweep_stale() {
    let Ok(passwd) = std::fs::read_to_string("/etc/passwd") else { return };
    for name in passwd.lines().filter_map(|line| line.split(':').next()).filter(|n| n.starts_with(PREFIX)) {
        let pid = &name[PREFIX.len()..];
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        let _ = std::fs::remove_file(Path::new("/etc/sudoers.d").join(name));
        let _ = Command::new("/usr/sbin/userdel").arg(name).status();
        let _ = Command::new("/usr/sbin/groupdel").arg(format!("{name}-g")).status();
    }
}

/// What the script sees and writes, to compare: ids, directory, umask,
/// the environment sorted as bytes, bytes that are not text on both
/// streams.
const SEES: &str = "\
id
pwd
umask
env -0 | LC_ALL=C sort -z
printf 'bytes\\0\\377\\r\\n'
printf 'to stderr\\0\\376\\n' >&2
";

const BASH: [&str; 5] = ["bash", "--noprofile", "--norc", "-eo", "pipefail"];

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The two runs saw and wrote the same, exited alike; stepmon's stderr
/// has `notice` before the script's.
fn assert_same(plain: &Output, measured: &Output, notice: Option<&str>) {
    assert_eq!(measured.status.code(), plain.status.code(), "stepmon's stderr: {}", text(&measured.stderr));
    assert_eq!(text(&measured.stdout), text(&plain.stdout));
    assert_eq!(measured.stdout, plain.stdout);
    let stderr = match notice {
        Some(prefix) => {
            let (first, rest) = measured.stderr.split_at(measured.stderr.iter().position(|&b| b == b'\n').unwrap() + 1);
            assert!(first.starts_with(prefix.as_bytes()), "{}", text(first));
            rest.to_vec()
        }
        None => measured.stderr.clone(),
    };
    assert_eq!(stderr, plain.stderr, "{}", text(&measured.stderr));
}

/// The exit statuses of `exit 3` and of a `false` under `-e`, both ways,
/// and the step names the job record has for them.
fn exit_statuses_kept(user: &TestUser, notice: Option<&str>) {
    user.script("three.sh", "echo before\nexit 3\necho after\n");
    user.script("false.sh", "# fails\nfalse\necho after\n");
    let (plain, measured) = user.both_ways(&BASH, &[], "three.sh", "__run_2");
    assert_eq!(plain.status.code(), Some(3));
    assert_same(&plain, &measured, notice);
    let step = user.last_step();
    assert_eq!((step.name.as_str(), step.exit_code), ("echo before", 3));
    let (plain, measured) = user.both_ways(&BASH, &[], "false.sh", "__run_3");
    assert_eq!((plain.status.code(), plain.stdout.as_slice()), (Some(1), &b""[..]));
    assert_same(&plain, &measured, notice);
    let step = user.last_step();
    assert_eq!((step.name.as_str(), step.exit_code), ("false", 1));
    let (plain, measured) = user.both_ways(&["sh", "-e"], &["--sh"], "false.sh", "lint");
    assert_eq!(plain.status.code(), Some(1));
    assert_same(&plain, &measured, notice);
    assert_eq!(user.last_step().name, "lint");
}

#[test]
fn through_sudo_the_script_sees_and_writes_what_plain_bash_does() {
    let _one = one_at_a_time();
    let Some(user) = TestUser::create("through_sudo_the_script_sees_and_writes_what_plain_bash_does", true) else {
        return;
    };
    user.allow_sudo();
    user.script("sees.sh", SEES);
    let (plain, measured) = user.both_ways(&BASH, &[], "sees.sh", "build");
    let seen = text(&plain.stdout);
    assert!(seen.starts_with(&format!("uid={}({})", user.uid, user.name)), "{seen}");
    assert!(seen.contains("100(users)") && seen.contains(&format!("({})", user.extra_group)), "{seen}");
    assert!(seen.contains(&format!("\n{}\n0{UMASK}\n", user.dir.path().display())), "{seen}");
    assert_same(&plain, &measured, None);
    // Placed with root's rights: a cgroup of the step's own, measured
    // there; the record stays the user's file.
    let step = user.last_step();
    assert_eq!((step.name.as_str(), step.exit_code), ("build", 0));
    assert!(OWN.contains(&step.rung("cpu")), "{:?}", step.rungs);
    user.script("cgroup.sh", "cat /proc/self/cgroup\n");
    let cgroups = user.measured_stdout("cgroup.sh");
    assert!(cgroups.lines().any(|line| line.contains("/stepmon-run.")), "{cgroups}");
    assert_eq!(std::fs::metadata(user.job()).unwrap().uid(), user.uid);
    exit_statuses_kept(&user, None);
}

#[test]
fn without_sudo_the_script_runs_as_the_user_on_the_enclosing_rung() {
    let _one = one_at_a_time();
    let Some(user) = TestUser::create("without_sudo_the_script_runs_as_the_user_on_the_enclosing_rung", false) else {
        return;
    };
    user.script("sees.sh", SEES);
    let (plain, measured) = user.both_ways(&BASH, &[], "sees.sh", "build");
    assert!(text(&plain.stdout).starts_with(&format!("uid={}", user.uid)));
    assert_same(&plain, &measured, Some("stepmon: notice: "));
    let notice = text(&measured.stderr);
    assert!(
        notice.lines().next().unwrap().contains("the script runs with your own rights, measured where they reach"),
        "{notice}"
    );
    // Measured where the user's rights reach: the process tree and the
    // enclosing cgroup.
    let step = user.last_step();
    assert_eq!((step.name.as_str(), step.exit_code), ("build", 0));
    assert_eq!((step.rung("cpu"), step.rung("memory")), ("processTree", "enclosingCgroup"), "{:?}", step.rungs);
    user.script("cgroup.sh", "cat /proc/self/cgroup\n");
    let cgroups = user.measured_stdout("cgroup.sh");
    assert!(!cgroups.contains("/stepmon-run."), "{cgroups}");
    exit_statuses_kept(&user, Some("stepmon: notice: "));
}

#[test]
fn as_root_no_sudo_is_needed_and_without_a_job_the_summary_is_on_stderr() {
    let name = "as_root_no_sudo_is_needed_and_without_a_job_the_summary_is_on_stderr";
    if common::live(name).is_none() {
        return;
    }
    let dir = common::scratch("shell");
    std::fs::write(dir.join("s.sh"), "echo out\necho err >&2\nexit 5\n").unwrap();
    let job = dir.join("job.jsonl");
    let run = |env: &[(&str, &OsStr)]| {
        common::stepmon()
            .args(["shell", "s.sh"])
            .env_remove("STEPMON_JOB")
            .env_remove("GITHUB_ACTION")
            .envs(env.iter().copied())
            .current_dir(&*dir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let recorded = run(&[("STEPMON_JOB", job.as_os_str()), ("GITHUB_ACTION", "test".as_ref())]);
    assert_eq!(
        (recorded.status.code(), text(&recorded.stdout), text(&recorded.stderr)),
        (Some(5), "out\n".into(), "err\n".into())
    );
    let step = last_step(&job);
    assert_eq!((step.name.as_str(), step.exit_code), ("test", 5));
    assert!(OWN.contains(&step.rung("cpu")), "{:?}", step.rungs);
    // The job's views tell it by its first command line, not by the
    // shell and its temporary file.
    assert_eq!(step.action, serde_json::json!({"action": "script", "shell": "bash", "line": "echo out"}));
    let table = common::stepmon().args(["report", "-f", "markdown"]).arg(&job).output().unwrap();
    assert!(text(&table.stdout).contains("| test (echo out) |"), "{}", text(&table.stdout));
    // No job record: measured all the same, the summary after the script's stderr.
    let alone = run(&[]);
    let stderr = text(&alone.stderr);
    assert_eq!(alone.status.code(), Some(5));
    assert!(stderr.starts_with("err\n"), "{stderr}");
    assert!(stderr.contains("stepmon: 'echo out' `bash --noprofile --norc -eo pipefail s.sh` exited 5"), "{stderr}");
}

#[test]
fn a_sudo_that_refuses_stepmon_leaves_the_script_to_run_once_as_the_user() {
    let _one = one_at_a_time();
    let name = "a_sudo_that_refuses_stepmon_leaves_the_script_to_run_once_as_the_user";
    let Some(user) = TestUser::create(name, true) else {
        return;
    };
    // `sudo -n true` succeeds, `sudo -n stepmon …` is refused.
    user.allow_sudo_of("/usr/bin/true, /bin/true");
    user.script("count.sh", "echo ran >> runs\necho out\necho err >&2\nexit 6\n");
    let (plain, measured) = user.both_ways(&BASH, &[], "count.sh", "count");
    assert_eq!((plain.status.code(), measured.status.code()), (Some(6), Some(6)), "{}", text(&measured.stderr));
    assert_eq!(measured.stdout, plain.stdout);
    // Once by plain bash, once by stepmon: the refused sudo ran nothing.
    assert_eq!(std::fs::read_to_string(user.dir.path().join("runs")).unwrap(), "ran\nran\n");
    let stderr = text(&measured.stderr);
    let notice =
        stderr.lines().find(|line| line.starts_with("stepmon: notice: ")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(notice.contains("-n` of stepmon exited 1 before it started the script"), "{stderr}");
    assert!(stderr.ends_with(&format!("{notice}\nerr\n")), "{stderr}");
    let step = user.last_step();
    assert_eq!((step.name.as_str(), step.exit_code, step.rung("cpu")), ("count", 6, "processTree"));
}

#[test]
fn a_signal_to_the_caller_reaches_the_script_through_sudo() {
    let _one = one_at_a_time();
    let Some(user) = TestUser::create("a_signal_to_the_caller_reaches_the_script_through_sudo", true) else {
        return;
    };
    user.allow_sudo();
    // A CI runner cancelling a step signals the process it started.
    user.script("slow.sh", "echo started\nsleep 60\necho not reached\n");
    let stepmon = OsStr::new(env!("CARGO_BIN_EXE_stepmon"));
    let mut child = user
        .command(&[stepmon, "shell".as_ref(), "slow.sh".as_ref()], &user.env("slow"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut started = [0u8; 8];
    std::io::Read::read_exact(&mut stdout, &mut started).unwrap();
    assert_eq!(&started, b"started\n");
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = common::wait_for(&mut child, Duration::from_secs(30));
    // bash killed by SIGTERM: 128 + 15, as `stepmon run` gives it.
    assert_eq!(status.code(), Some(143));
    let step = user.last_step();
    assert_eq!((step.name.as_str(), step.exit_code), ("slow", 143));
    assert!(OWN.contains(&step.rung("cpu")), "{:?}", step.rungs);
}

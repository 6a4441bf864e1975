//! `stepmon wrap` and `RUSTC_WRAPPER=stepmon` as a real build's launcher:
//! cargo on a small crate tree (tests/data/wrap/cargo: a binary, a library
//! with a build script, a proc-macro; path dependencies only, built
//! offline), make on a three-file C project (tests/data/wrap/c) with
//! `CC="stepmon wrap cc"`, and both behind a wrapper of the caller's own.
//! Each build is compared with the same build without stepmon: what the
//! build reads (stdout, stderr, exit status, the signal, the environment,
//! the working directory) is the same, and the job record holds one action
//! per compiler run, named by what it builds. Every build goes to a fresh
//! scratch directory. As root (cgroups); `SKIPPED <name>: <why>` otherwise,
//! and without cargo, make or cc.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::fixtures::{clean, copy_tree, data, fake_wrapper, text, tool};
use common::{leftovers, live, scratch, skip};
use stepmon_model::action::{Action, CrateKind};
use stepmon_report::job::{self, JobStep};

const STEPMON: &str = env!("CARGO_BIN_EXE_stepmon");

/// cargo, when it runs here (`None` after printing `SKIPPED`).
fn cargo(name: &str) -> Option<PathBuf> {
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    if clean(&cargo).arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success()) {
        return Some(cargo);
    }
    skip::skip(name, "no cargo to build the fixture crates");
    None
}

/// Runs `command` in `dir`, its output collected.
fn output(command: &mut Command, dir: &Path) -> Output {
    command.current_dir(dir).stdin(Stdio::null()).output().unwrap()
}

/// The steps of the job record `path`, read as `stepmon report` reads it
/// (every line whole).
fn steps(path: &Path) -> Vec<JobStep> {
    let record = job::read(&std::fs::read_to_string(path).unwrap());
    assert!(record.lost.is_empty() && record.unknown.is_empty(), "{:?} {:?}", record.lost, record.unknown);
    record.steps
}

fn action(step: &JobStep) -> &Action {
    step.start.as_ref().and_then(|s| s.action.as_ref()).unwrap_or_else(|| panic!("step {} has no action", step.id))
}

/// Every step ended (with `code`), its cgroups gone.
fn ended_clean(steps: &[JobStep], base: &Path, code: impl Fn(&JobStep) -> i32) {
    for step in steps {
        let end = step.end.as_ref().unwrap_or_else(|| panic!("step {} has no end", step.id));
        assert_eq!(end.exit_code, code(step), "{}", action(step));
        let pid: u32 = step.id.split('.').next().unwrap().parse().unwrap();
        assert!(leftovers(base, pid).is_empty(), "stepmon {pid} left cgroups behind");
    }
}

/// `(crate, kind)` of each `Running \`…rustc … --crate-name …\`` line of
/// `cargo build -v`: what cargo compiled.
fn running_rustc(stderr: &str) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = stderr
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("Running `"))
        .filter(|command| command.contains(" --crate-name "))
        .map(|command| {
            let words: Vec<&str> = command.split(' ').collect();
            let after = |flag: &str| words.iter().position(|w| *w == flag).map(|i| words[i + 1]);
            let name = after("--crate-name").unwrap().to_owned();
            let kind = if words.contains(&"--test") {
                "test"
            } else if name == "build_script_build" {
                "build script"
            } else {
                CrateKind::words(match after("--crate-type").unwrap() {
                    "lib" => CrateKind::Lib,
                    "bin" => CrateKind::Bin,
                    "proc-macro" => CrateKind::ProcMacro,
                    other => panic!("crate type {other}"),
                })
            };
            (name, kind)
        })
        .collect();
    out.sort();
    out
}

/// `output`'s lines with `target` (a target directory) written `<target>`,
/// sorted: two builds of one tree print the same messages, in the order
/// their parallel units happen to finish.
fn messages(output: &[u8], target: &Path) -> Vec<String> {
    let mut lines: Vec<String> =
        text(output).lines().map(|l| l.replace(target.to_str().unwrap(), "<target>")).collect();
    lines.sort();
    lines
}

#[test]
fn cargo_through_the_launcher_is_the_same_build_with_every_rustc_an_action() {
    let name = "cargo_through_the_launcher_is_the_same_build_with_every_rustc_an_action";
    let Some(base) = live(name) else { return };
    let Some(cargo) = cargo(name) else { return };
    let dir = scratch("wrap-cargo");
    let tree = dir.join("tree");
    copy_tree(&data("cargo"), &tree);
    let build = |target: &Path| {
        let mut command = clean(&cargo);
        command.args(["build", "-v", "--offline", "--message-format=json", "-j2"]).env("CARGO_TARGET_DIR", target);
        command.env("CARGO_HOME", dir.join("cargo-home"));
        command
    };
    let (plain_target, wrapped_target, record) = (dir.join("plain"), dir.join("wrapped"), dir.join("job.jsonl"));
    let plain = output(&mut build(&plain_target), &tree);
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    let wrapped = output(build(&wrapped_target).env("RUSTC_WRAPPER", STEPMON).env("STEPMON_JOB", &record), &tree);
    assert!(wrapped.status.success(), "{}", text(&wrapped.stderr));

    // The same messages: artifacts, the build script's run, the warning
    // (rustc's JSON diagnostic read by cargo from rustc's stderr), the
    // build's end. Only the target directory differs.
    let (before, after) = (messages(&plain.stdout, &plain_target), messages(&wrapped.stdout, &wrapped_target));
    assert_eq!(before, after);
    assert!(after.iter().any(|m| m.contains("\"reason\":\"compiler-message\"") && m.contains("unused variable")));
    assert!(after.iter().any(|m| m.contains("\"reason\":\"build-finished\",\"success\":true")));

    // And cargo's own lines, but for those that name the commands (with
    // the launcher in front), the target directory and the time taken.
    let said = |output: &Output, target: &Path| {
        let lines = messages(&output.stderr, target).into_iter();
        lines
            .filter(|l| !l.trim_start().starts_with("Running `") && !l.trim_start().starts_with("Finished `"))
            .collect::<Vec<_>>()
    };
    assert_eq!(said(&plain, &plain_target), said(&wrapped, &wrapped_target));

    // One action per rustc cargo ran, by crate and kind; cargo called
    // `stepmon $RUSTC …` for each.
    let stderr = text(&wrapped.stderr);
    let ran = running_rustc(&stderr);
    assert_eq!(ran.len(), 4, "{stderr}");
    assert!(
        stderr.lines().filter(|l| l.contains(" --crate-name ")).all(|l| l.contains(&format!("Running `{STEPMON} ")))
    );
    let steps = steps(&record);
    let (probes, actions): (Vec<&JobStep>, Vec<&JobStep>) = steps.iter().partition(|s| action(s).is_probe());
    let mut recorded: Vec<(String, &'static str)> = actions
        .iter()
        .map(|s| match action(s) {
            Action::Crate(c) => (c.crate_name.clone(), c.kind.words()),
            other => panic!("not a crate: {other:?}"),
        })
        .collect();
    recorded.sort();
    assert_eq!(recorded, ran);
    // cargo's questions to rustc before the build (`-vV`, the `___`
    // crate), and the library's build script's trial compile: probes, the
    // last one named by the package whose build script ran it.
    let (trials, cargos): (Vec<&JobStep>, Vec<&JobStep>) =
        probes.iter().partition(|s| matches!(action(s), Action::Probe(p) if p.package.is_some()));
    let trials: Vec<String> = trials.iter().map(|s| action(s).to_string()).collect();
    assert_eq!(trials, ["wrap-fixture-lib 0.1.3 (build script probe: probe.rs)"]);
    assert!(!cargos.is_empty());
    for probe in &cargos {
        let Action::Probe(p) = action(probe) else { unreachable!() };
        assert!(p.asks == ["version"] || p.asks.contains(&"cfg".to_owned()), "{p:?}");
    }
    // In words, with the packages' versions from cargo's environment.
    let mut words: Vec<String> = actions.iter().map(|s| action(s).to_string()).collect();
    words.sort();
    assert_eq!(
        words,
        [
            "wrap-fixture-app 0.2.0 (bin)",
            "wrap-fixture-lib 0.1.3 (build script)",
            "wrap-fixture-lib 0.1.3 (lib)",
            "wrap-fixture-macro 0.4.0 (proc-macro)",
        ]
    );
    ended_clean(&steps, &base, |_| 0);
    // Each measured: rustc holds megabytes.
    for step in &actions {
        let entry = job::Entry::of_job(step, "job.jsonl".to_owned());
        let peak = entry.step.summary.memory.peak_bytes.unwrap_or(0);
        assert!(peak > 1 << 20, "{}: memory peak {peak}", action(step));
    }
    // `stepmon report` lists them so.
    let report = Command::new(STEPMON).arg("report").arg(&record).output().unwrap();
    let report = text(&report.stdout);
    for line in &words {
        assert!(report.contains(line.as_str()), "{line}: {report}");
    }
    // And the wrapped build's program works.
    let app = Command::new(wrapped_target.join("debug/wrap-fixture-app")).output().unwrap();
    assert_eq!(text(&app.stdout), "by its build script 42\n");
}

#[test]
fn a_failing_compile_keeps_its_status_and_its_diagnostics() {
    let name = "a_failing_compile_keeps_its_status_and_its_diagnostics";
    let Some(base) = live(name) else { return };
    let Some(cargo) = cargo(name) else { return };
    let dir = scratch("wrap-failing");
    let tree = dir.join("tree");
    copy_tree(&data("cargo"), &tree);
    std::fs::write(tree.join("lib/src/lib.rs"), "pub fn greeting() -> &'static str {\n    42\n}\n").unwrap();
    let record = dir.join("job.jsonl");
    // One job at a time (-j1): cargo's lines come in one order, so its
    // whole stderr compares byte for byte.
    let build = |target: &str| {
        let mut command = clean(&cargo);
        command.args(["build", "--offline", "--color", "never", "-j1"]).env("CARGO_TARGET_DIR", dir.join(target));
        command.env("CARGO_HOME", dir.join("cargo-home"));
        command
    };
    let plain = output(&mut build("plain"), &tree);
    let wrapped = output(build("wrapped").env("RUSTC_WRAPPER", STEPMON).env("STEPMON_JOB", &record), &tree);
    assert_eq!(plain.status.code(), Some(101), "{}", text(&plain.stderr));
    assert_eq!(wrapped.status.code(), plain.status.code());
    assert_eq!(text(&wrapped.stderr), text(&plain.stderr));
    assert_eq!(wrapped.stdout, plain.stdout);
    assert!(text(&wrapped.stderr).contains("error[E0308]: mismatched types"));
    // rustc's own diagnostics, rendered by rustc: the same bytes.
    let rustc = |out: &str| -> Vec<std::ffi::OsString> {
        let out = dir.join(out).into_os_string();
        ["rustc", "--crate-type", "lib", "--color", "never", "--out-dir"]
            .map(Into::into)
            .into_iter()
            .chain([out, "lib/src/lib.rs".into()])
            .collect()
    };
    let direct = output(clean("rustc").args(&rustc("direct")[1..]), &tree);
    let launched = output(clean(STEPMON).arg("wrap").args(rustc("launched")).env("STEPMON_JOB", &record), &tree);
    assert_eq!(direct.status.code(), Some(1));
    assert_eq!((launched.status.code(), &launched.stdout, &launched.stderr), (Some(1), &direct.stdout, &direct.stderr));
    // The failed compiles are in the record with their status.
    let steps = steps(&record);
    let failed: Vec<String> = steps
        .iter()
        .filter(|s| s.end.as_ref().is_some_and(|e| e.exit_code == 1))
        .map(|s| action(s).to_string())
        .collect();
    assert_eq!(failed, ["wrap-fixture-lib 0.1.3 (lib)", "lib (lib)"]);
    ended_clean(&steps, &base, |s| if failed.contains(&action(s).to_string()) { 1 } else { 0 });
}

#[test]
fn make_with_cc_wrapped_has_three_compiles_and_a_link_also_behind_a_wrapper() {
    let name = "make_with_cc_wrapped_has_three_compiles_and_a_link_also_behind_a_wrapper";
    let Some(base) = live(name) else { return };
    if !tool(name, "make") || !tool(name, "cc") {
        return;
    }
    let dir = scratch("wrap-make");
    let wrapper = fake_wrapper(&dir);
    for (tree, cc) in
        [("direct", format!("{STEPMON} wrap cc")), ("chained", format!("{STEPMON} wrap {} cc", wrapper.display()))]
    {
        let tree = dir.join(tree);
        copy_tree(&data("c"), &tree);
        let record = tree.join("job.jsonl");
        let make = output(clean("make").arg(format!("CC={cc}")).env("STEPMON_JOB", &record), &tree);
        assert!(make.status.success(), "{}", text(&make.stderr));
        assert!(make.stderr.is_empty(), "{}", text(&make.stderr));
        let app = Command::new(tree.join("app")).output().unwrap();
        assert_eq!(text(&app.stdout), "hello from three files (22)\n");
        let steps = steps(&record);
        let mut named: BTreeMap<String, (Option<String>, Option<String>)> = BTreeMap::new();
        for step in &steps {
            let (words, parts) = match action(step) {
                Action::Compile(c) => (action(step).to_string(), (c.output.clone(), c.source.clone())),
                Action::Link(l) => (action(step).to_string(), (Some(l.output.clone()), None)),
                other => panic!("neither a compile nor a link: {other:?}"),
            };
            named.insert(words, parts);
        }
        let some = |s: &str| Some(s.to_owned());
        let expected = BTreeMap::from([
            ("app (cc link)".to_owned(), (some("app"), None)),
            ("count.o (cc)".to_owned(), (some("count.o"), some("count.c"))),
            ("greet.o (cc)".to_owned(), (some("greet.o"), some("greet.c"))),
            ("main.o (cc)".to_owned(), (some("main.o"), some("main.c"))),
        ]);
        assert_eq!(named, expected, "{tree:?}");
        assert_eq!(steps.len(), 4);
        ended_clean(&steps, &base, |_| 0);
    }
    let calls = std::fs::read_to_string(dir.join("calls.log")).unwrap();
    assert_eq!(calls.lines().count(), 4, "{calls}");
    assert!(calls.lines().all(|l| l.starts_with("cc ")), "{calls}");

    // rustc behind a wrapper, as `stepmon wrap WRAPPER rustc …` and as
    // cargo calls RUSTC_WRAPPER=stepmon with a RUSTC_WORKSPACE_WRAPPER.
    std::fs::write(dir.join("chained.rs"), "pub fn f() {}\n").unwrap();
    let record = dir.join("rustc.jsonl");
    for front in [&["wrap"][..], &[]] {
        let run = output(
            clean(STEPMON)
                .args(front)
                .arg(&wrapper)
                .args(["rustc", "--crate-name", "chained", "--crate-type", "lib", "chained.rs"])
                .env("STEPMON_JOB", &record)
                .env("CARGO_PKG_NAME", "chained")
                .env("CARGO_PKG_VERSION", "1.2.3"),
            &dir,
        );
        assert!(run.status.success() && run.stderr.is_empty(), "{}", text(&run.stderr));
    }
    let steps = steps(&record);
    let words: Vec<String> = steps.iter().map(|s| action(s).to_string()).collect();
    assert_eq!(words, ["chained 1.2.3 (lib)", "chained 1.2.3 (lib)"]);
    ended_clean(&steps, &base, |_| 0);
}

#[test]
fn the_action_sees_and_says_what_it_would_without_stepmon() {
    let name = "the_action_sees_and_says_what_it_would_without_stepmon";
    let Some(base) = live(name) else { return };
    let dir = scratch("wrap-same");
    let record = dir.join("job.jsonl");
    // Bytes that are no text, on both streams; a status; the environment
    // and the working directory.
    let script = r#"printf 'out\000\377\n'; printf 'err\001\376' >&2; env | sort; pwd; exit 7"#;
    let direct = output(clean("sh").args(["-c", script]).env("SOME_SETTING", "kept"), &dir);
    let mut wrapped = clean(STEPMON);
    wrapped.args(["wrap", "sh", "-c", script]).env("SOME_SETTING", "kept");
    let unrecorded = output(&mut wrapped, &dir);
    let recorded = output(wrapped.env("STEPMON_JOB", &record), &dir);
    assert_eq!(direct.status.code(), Some(7));
    for launched in [&unrecorded, &recorded] {
        assert_eq!(launched.status.code(), Some(7));
        assert_eq!(launched.stderr, direct.stderr, "{}", text(&launched.stderr));
        // The environment as given, less STEPMON_JOB where it is set.
        let stdout: Vec<u8> = launched
            .stdout
            .split_inclusive(|b| *b == b'\n')
            .filter(|line| !line.starts_with(b"STEPMON_JOB="))
            .flatten()
            .copied()
            .collect();
        assert_eq!(text(&stdout), text(&direct.stdout));
        assert_eq!(stdout, direct.stdout);
    }
    // Death by a signal is death by that signal.
    for signal in [15, 9] {
        let killed = output(
            clean(STEPMON).args(["wrap", "sh", "-c", &format!("kill -{signal} $$")]).env("STEPMON_JOB", &record),
            &dir,
        );
        assert_eq!(killed.status.signal(), Some(signal), "{:?}", killed.status);
        assert!(killed.stderr.is_empty(), "{}", text(&killed.stderr));
    }
    // A program that is not there: a shell's status and one line.
    let missing = output(clean(STEPMON).args(["wrap", "no-such-program-here"]), &dir);
    assert_eq!(missing.status.code(), Some(127));
    assert!(text(&missing.stderr).starts_with("stepmon: error: "), "{}", text(&missing.stderr));
    // Asked to speak, it says its summary after the action's own bytes.
    let verbose =
        output(clean(STEPMON).args(["wrap", "sh", "-c", "echo said >&2"]).env("STEPMON_WRAP_VERBOSE", "1"), &dir);
    let said = text(&verbose.stderr);
    assert!(said.starts_with("said\n") && said.len() > "said\n".len() && said.contains("sh"), "{said}");
    // Only the steps with STEPMON_JOB set are recorded: the one above and the kills.
    let steps = steps(&record);
    let codes: Vec<i32> = steps.iter().map(|s| s.end.as_ref().unwrap().exit_code).collect();
    assert_eq!(codes, [7, 128 + 15, 128 + 9]);
    assert!(steps.iter().all(|s| matches!(action(s), Action::Program(p) if p.program == "sh")));
    ended_clean(&steps, &base, |s| s.end.as_ref().unwrap().exit_code);
}

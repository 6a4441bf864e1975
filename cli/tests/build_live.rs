//! `stepmon build -- BUILD` on real builds: cargo on the small offline
//! crate tree of the launcher's tests (tests/data/wrap/cargo), make on
//! the three-file C project (tests/data/wrap/c), CMake on it with the
//! Makefile and Ninja generators, and cargo with a
//! `RUSTC_WRAPPER` of the caller's own set before (a fake wrapper that
//! notes each call). The job record holds the build's own step and one
//! action per compiler run, each action's cgroups nested inside the
//! build's (so the build's peak holds every action's); the report names
//! every action and the remainder. As root (cgroups); `SKIPPED <name>:
//! <why>` otherwise, and without cargo, make, cmake, ninja or cc.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::fixtures::{clean, copy_tree, data, fake_wrapper, text, tool};
use common::{leftovers, live, scratch};
use stepmon_model::source::Rung;
use stepmon_report::build::Build;
use stepmon_report::job;

const STEPMON: &str = env!("CARGO_BIN_EXE_stepmon");

/// `stepmon build --job RECORD -o REPORT -- ARGS…` in `dir`.
fn build_in(dir: &Path, record: &Path, report: &Path, format: &str, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = clean(STEPMON);
    command.args(["build", "--job"]).arg(record).arg("-o").arg(report).args(["--format", format, "--"]).args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.current_dir(dir).stdin(Stdio::null()).output().unwrap()
}

/// The crate names of cargo's `Running \`…rustc … --crate-name X …\`` lines.
fn running_rustc(stderr: &str) -> Vec<String> {
    let mut names: Vec<String> = stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("Running `"))
        .filter_map(|command| {
            let words: Vec<&str> = command.split(' ').collect();
            let at = words.iter().position(|w| *w == "--crate-name")?;
            Some(words[at + 1].to_owned())
        })
        .collect();
    names.sort();
    names
}

/// The build in `record`, every line whole.
fn read(record: &Path) -> Build {
    let record = job::read(&std::fs::read_to_string(record).unwrap());
    assert!(record.lost.is_empty(), "{:?}", record.lost);
    Build::of_record(&record, "job.jsonl", None).unwrap()
}

/// The build's peak at least each action's (the actions' cgroups are
/// nested in the build's: `each_action_runs_in_a_cgroup_nested_in_the_builds`),
/// and no cgroup left of any stepmon.
fn nested_and_clean(build: &Build, record: &Path, base: &Path) {
    let record = job::read(&std::fs::read_to_string(record).unwrap());
    let peak = build.memory_peak_bytes.unwrap();
    for action in &build.actions {
        let row = build.row(action);
        let own = row.memory_peak_bytes.unwrap();
        assert!(own > 1 << 20 && peak >= own, "{}: peak {own}, the build's {peak}", row.label);
    }
    for step in &record.steps {
        let pid: u32 = step.id.split('.').next().unwrap().parse().unwrap();
        assert!(leftovers(base, pid).is_empty(), "stepmon {pid} left cgroups behind");
    }
}

/// The mount point of each cgroup hierarchy mounted at its root, by the
/// name `/proc/self/cgroup` gives it (`""` for cgroup2, else its
/// controllers as listed there, e.g. `memory`, `cpu,cpuacct`).
fn mount_points() -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for line in std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines() {
        let Some((front, back)) = line.split_once(" - ") else { continue };
        let (front, back): (Vec<&str>, Vec<&str>) = (front.split(' ').collect(), back.split(' ').collect());
        if front.get(3) != Some(&"/") {
            continue;
        }
        match back.first() {
            Some(&"cgroup2") => found.push((String::new(), PathBuf::from(front[4]))),
            Some(&"cgroup") => {
                let options: Vec<&str> = back.get(2).unwrap_or(&"").split(',').collect();
                found.push((
                    options.iter().filter(|o| !["rw", "ro"].contains(o)).copied().collect::<Vec<_>>().join(","),
                    PathBuf::from(front[4]),
                ));
            }
            _ => {}
        }
    }
    found
}

/// `/proc/self/cgroup` as `(hierarchy, path)` pairs: `""` for cgroup2.
fn cgroups(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some((controllers.to_owned(), path.to_owned()))
        })
        .collect()
}

#[test]
fn each_action_runs_in_a_cgroup_nested_in_the_builds() {
    let name = "each_action_runs_in_a_cgroup_nested_in_the_builds";
    let Some(base) = live(name) else { return };
    let dir = scratch("build-nested");
    // The build and its one action each say where the kernel put them; the
    // action holds 4 MB in its shell (a static busybox's in the VM tier is
    // far smaller than that).
    let script = format!(
        "cat /proc/self/cgroup > outer.txt && {STEPMON} wrap sh -c 'cat /proc/self/cgroup > inner.txt; x=$(yes | head -c 4000000); test ${{#x}} -ge 3999999'"
    );
    let (record, report) = (dir.join("job.jsonl"), dir.join("report.txt"));
    let out = build_in(&dir, &record, &report, "text", &["sh", "-c", &script], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let outer = cgroups(&std::fs::read_to_string(dir.join("outer.txt")).unwrap());
    let inner = cgroups(&std::fs::read_to_string(dir.join("inner.txt")).unwrap());
    let own = cgroups(&std::fs::read_to_string("/proc/self/cgroup").unwrap());
    // In every hierarchy the build got a cgroup of its own in, the
    // action's is below the build's. In cgroup2 the build's command runs in
    // a leaf child of the build's cgroup (`stepmon-command`), which itself
    // holds no process and so can give the actions' cgroups controllers
    // (the no-internal-process rule): the action's cgroup is beside it.
    let mut nested = Vec::new();
    for ((hierarchy, theirs), ((_, ours), (_, mine))) in inner.iter().zip(outer.iter().zip(&own)) {
        if ours == mine {
            continue; // the build has no cgroup of its own in this hierarchy
        }
        let build = if hierarchy.is_empty() {
            ours.strip_suffix("/stepmon-command").unwrap_or_else(|| panic!("the build's command runs in {ours}"))
        } else {
            ours.as_str()
        };
        assert!(theirs.starts_with(&format!("{build}/stepmon-run.")), "{hierarchy}: {theirs} is not below {build}");
        nested.push((hierarchy.clone(), build.to_owned()));
    }
    // Where cgroup2 has controllers (pure cgroup v2), the action's cgroup
    // has its own memory controller: its peak is its own, not the build's.
    let cgroup2 = mount_points().into_iter().find(|(h, _)| h.is_empty()).map(|(_, m)| m).unwrap();
    let own_dir = cgroup2.join(own.iter().find(|(h, _)| h.is_empty()).unwrap().1.trim_start_matches('/'));
    let pure_v2 = std::fs::read_to_string(own_dir.join("cgroup.controllers")).is_ok_and(|c| c.contains("memory"));
    assert!(nested.iter().any(|(h, _)| h.is_empty()), "no cgroup2 nesting: {outer:?} {inner:?}");
    eprintln!("nested in: {nested:?}");
    // The action is the record's; the build's cgroups are gone after it,
    // and with them the nested ones.
    let build = read(&record);
    assert_eq!(build.actions.len(), 1);
    let peak = build.row(&build.actions[0]).memory_peak_bytes.unwrap();
    eprintln!("the action's memory peak: {peak} bytes");
    assert!(peak >= 4_000_000, "the action's peak {peak} is below the 4 MB it held");
    nested_and_clean(&build, &record, &base);
    // The action's memory and CPU are its own cgroup's: cgroup v2 where
    // that has controllers (pure v2, through the build's cgroup), else the
    // v1 hierarchy nested likewise (hybrid) — never the enclosing build's.
    let steps = job::read(&std::fs::read_to_string(&record).unwrap()).steps;
    let action = steps.iter().find(|s| s.start.as_ref().is_some_and(|s| s.action.is_some())).unwrap();
    let sources = &action.end.as_ref().unwrap().brief.as_ref().expect("an action's end in brief").sources;
    eprintln!("the action's sources: {sources:?} (pure cgroup v2: {pure_v2})");
    let own_cgroup = if pure_v2 { Rung::CgroupV2 } else { Rung::CgroupV1 };
    assert_eq!(sources.memory.as_ref().map(|s| s.rung), Some(own_cgroup), "{sources:?}");
    if pure_v2 {
        for (group, source) in [("cpu", &sources.cpu), ("pids", &sources.pids), ("pressure", &sources.pressure)] {
            assert_eq!(source.as_ref().map(|s| s.rung), Some(Rung::CgroupV2), "{group}: {sources:?}");
        }
    }
    // IO: the action's cgroup where its io.stat counted any (this one
    // writes nothing to a disk: its process tree's task IO accounting).
    let io = sources.io.as_ref().map(|s| s.rung);
    assert!(matches!(io, Some(Rung::CgroupV2 | Rung::CgroupV1 | Rung::ProcessTree)), "{sources:?}");
    let mounts = mount_points();
    for (hierarchy, path) in &nested {
        let (_, mount) =
            mounts.iter().find(|(h, _)| h == hierarchy).unwrap_or_else(|| panic!("no mount of {hierarchy:?}"));
        let dir = mount.join(path.trim_start_matches('/'));
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}

#[test]
fn cargo_build_has_every_rustc_an_action_nested_in_the_build() {
    let name = "cargo_build_has_every_rustc_an_action_nested_in_the_build";
    let Some(base) = live(name) else { return };
    if !tool(name, "cargo") {
        return;
    }
    let dir = scratch("build-cargo");
    let tree = dir.join("tree");
    copy_tree(&data("cargo"), &tree);
    let (record, report) = (dir.join("job.jsonl"), dir.join("report.md"));
    let env = [("CARGO_HOME", &*dir.join("cargo-home")), ("CARGO_TARGET_DIR", &*dir.join("target"))];
    let out = build_in(&tree, &record, &report, "markdown", &["cargo", "build", "-v", "--offline", "-j2"], &env);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // One action per rustc cargo ran, named by its crate.
    let build = read(&record);
    let ran = running_rustc(&stderr);
    assert_eq!(ran.len(), 4, "{stderr}");
    assert_eq!(build.actions.len(), ran.len());
    assert!(build.probes >= 1, "cargo's questions to rustc are probes");
    nested_and_clean(&build, &record, &base);
    // The report names every action and the remainder.
    let report = std::fs::read_to_string(&report).unwrap();
    for action in &build.actions {
        let label = &build.row(action).label;
        assert!(report.contains(label.as_str()), "{label} not in the report:\n{report}");
    }
    assert!(report.contains("**remainder**: outside every action"), "{report}");
    let cpu = build.remainder.cpu_seconds.unwrap();
    assert!(cpu > 0.0 && cpu < build.cpu_seconds.unwrap(), "remainder {cpu} s of {:?}", build.cpu_seconds);
    assert!(!build.critical_path.actions.is_empty());
    // The same report later, from the record kept.
    let again =
        clean(STEPMON).args(["build", "--format", "markdown", "-o", "-", "--from"]).arg(&record).output().unwrap();
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(text(&again.stdout), report);
    // The build's program works.
    let app = Command::new(dir.join("target/debug/wrap-fixture-app")).output().unwrap();
    assert_eq!(text(&app.stdout), "by its build script 42\n");
}

#[test]
fn make_has_three_compiles_and_a_link() {
    let name = "make_has_three_compiles_and_a_link";
    let Some(base) = live(name) else { return };
    if !tool(name, "make") || !tool(name, "cc") {
        return;
    }
    let dir = scratch("build-make");
    let tree = dir.join("tree");
    copy_tree(&data("c"), &tree);
    let (record, report) = (dir.join("job.jsonl"), dir.join("report.txt"));
    let out = build_in(&tree, &record, &report, "text", &["make", "-j2"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let build = read(&record);
    let mut names: Vec<String> = build.actions.iter().map(|a| build.row(a).label.clone()).collect();
    names.sort();
    assert_eq!(names, ["app (cc link)", "count.o (cc)", "greet.o (cc)", "main.o (cc)"]);
    nested_and_clean(&build, &record, &base);
    let report = std::fs::read_to_string(&report).unwrap();
    assert!(report.starts_with("build: make (make -j2) — exit 0"), "{report}");
    assert!(report.contains("actions: 4 (compile 3, link 1)"), "{report}");
    assert!(report.contains("remainder: outside every action"), "{report}");
    let app = Command::new(tree.join("app")).output().unwrap();
    assert_eq!(text(&app.stdout), "hello from three files (22)\n");

    // CMake configured under `stepmon build` takes CC (`stepmon wrap cc`)
    // as its compiler and puts its launcher (`stepmon;wrap`) in front:
    // one action all the same.
    let doubled = dir.join("doubled.jsonl");
    let out = clean(STEPMON)
        .args(["wrap", STEPMON, "wrap", "cc", "-c", "-o", "again.o", "count.c"])
        .env("STEPMON_JOB", &doubled)
        .current_dir(&tree)
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", text(&out.stderr));
    let steps = job::read(&std::fs::read_to_string(&doubled).unwrap()).steps;
    let names: Vec<String> =
        steps.iter().map(|s| s.start.as_ref().and_then(|s| s.action.as_ref()).unwrap().to_string()).collect();
    assert_eq!(names, ["again.o (cc)"]);
    assert!(tree.join("again.o").is_file());
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// `output` with each compile command it echoes cut to the compiler's
/// arguments (`/usr/bin/cc -MD -MT …` to `-MD -MT …`).
fn compiler_arguments(output: &str) -> Vec<&str> {
    output.lines().map(|l| l.find(" -MD -MT ").map_or(l, |at| l[at..].trim_start())).collect()
}

/// `cmake ARGS…` run plainly in `dir`.
fn cmake(dir: &Path, args: &[&str]) -> Output {
    clean("cmake").args(args).current_dir(dir).stdin(Stdio::null()).output().unwrap()
}

/// The three-file C project configured and built with CMake's `generator`,
/// once plainly and once under `stepmon build` (configure, then build, each
/// a build of its own as a developer runs them): the configure keeps the
/// launcher in the build tree, so that the later `cmake --build` runs each
/// compile and the link as an action named by its output; its status and
/// output are the plain build's, also when a compile fails.
fn cmake_builds_with(name: &str, generator: &str, tool_program: &str) {
    let Some(base) = live(name) else { return };
    if !tool(name, "cmake") || !tool(name, tool_program) || !tool(name, "cc") {
        return;
    }
    let dir = scratch("build-cmake");
    let source = dir.join("source");
    copy_tree(&data("c"), &source);
    let (plain, measured) = (dir.join("plain"), dir.join("measured"));
    let source_arg = source.to_str().unwrap();
    let configure = |tree: &Path| ["-S", source_arg, "-B", tree.to_str().unwrap(), "-G", generator].map(str::to_owned);
    let build = |tree: &Path| ["--build", tree.to_str().unwrap(), "-j", "1"].map(str::to_owned);
    let out = cmake(&dir, &strs(&configure(&plain)));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plain_build = cmake(&dir, &strs(&build(&plain)));
    assert!(plain_build.status.success(), "{}", text(&plain_build.stderr));

    // Configure under `stepmon build`: the launcher goes into the build tree.
    let (configured, configure_report) = (dir.join("configure.jsonl"), dir.join("configure.txt"));
    let args = [vec!["cmake".to_owned()], configure(&measured).to_vec()].concat();
    let out = build_in(&dir, &configured, &configure_report, "text", &strs(&args), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cache = std::fs::read_to_string(measured.join("CMakeCache.txt")).unwrap();
    let launcher =
        cache.lines().find(|l| l.starts_with("CMAKE_C_COMPILER_LAUNCHER:")).unwrap_or_else(|| panic!("{cache}"));
    assert!(launcher.ends_with(&format!("={STEPMON};wrap")), "{launcher}");

    // The build: every compile and the link an action, its output the plain one's.
    let (record, report) = (dir.join("job.jsonl"), dir.join("report.txt"));
    let args = [vec!["cmake".to_owned()], build(&measured).to_vec()].concat();
    let args = strs(&args);
    let out = build_in(&dir, &record, &report, "text", &args, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), text(&plain_build.stdout));
    let built = read(&record);
    let mut names: Vec<String> = built.actions.iter().map(|a| built.row(a).label.clone()).collect();
    names.sort();
    // Named by the output as CMake passes it (relative to the build tree).
    let objects = ["count", "greet", "main"].map(|o| format!("CMakeFiles/app.dir/{o}.c.o (cc)"));
    assert_eq!(names, [&objects[..], &["app (cc link)".to_owned()]].concat(), "{generator}");
    nested_and_clean(&built, &record, &base);
    let report = std::fs::read_to_string(&report).unwrap();
    assert!(report.contains("actions: 4 (compile 3, link 1)"), "{report}");
    let app = Command::new(measured.join("app")).output().unwrap();
    assert_eq!(text(&app.stdout), "hello from three files (22)\n");

    // A compile that fails: the plain build's status and diagnostics.
    std::fs::write(source.join("greet.c"), "const char *greet(void) { return 42 }\n").unwrap();
    let plain_failed = cmake(&dir, &strs(&build(&plain)));
    let (failed_record, failed_report) = (dir.join("failed.jsonl"), dir.join("failed.txt"));
    let out = build_in(&dir, &failed_record, &failed_report, "text", &args, &[]);
    assert_ne!(plain_failed.status.code(), Some(0));
    assert_eq!(out.status.code(), plain_failed.status.code(), "{}", text(&out.stderr));
    // Ninja echoes a failed command: its program is the launcher then.
    assert_eq!(compiler_arguments(&text(&out.stdout)), compiler_arguments(&text(&plain_failed.stdout)));
    // The compiler's diagnostics: on stderr (make), or on stdout (Ninja
    // collects a command's output and prints it).
    let plain_said = text(&plain_failed.stderr) + &text(&plain_failed.stdout);
    let said = text(&out.stderr) + &text(&out.stdout);
    let error = plain_said.lines().find(|l| l.contains("error:")).unwrap_or_else(|| panic!("{plain_said}"));
    assert!(said.contains(error), "{error} not in:\n{said}");
    let failed = read(&failed_record);
    let failed: Vec<String> = failed.failed().iter().map(|&i| failed.row(&failed.actions[i]).label.clone()).collect();
    assert_eq!(failed, ["CMakeFiles/app.dir/greet.c.o (cc)"]);
}

#[test]
fn cmake_with_makefiles_has_three_compiles_and_a_link() {
    cmake_builds_with("cmake_with_makefiles_has_three_compiles_and_a_link", "Unix Makefiles", "make");
}

#[test]
fn cmake_with_ninja_has_three_compiles_and_a_link() {
    cmake_builds_with("cmake_with_ninja_has_three_compiles_and_a_link", "Ninja", "ninja");
}

#[test]
fn a_rustc_wrapper_set_before_runs_behind_the_launcher() {
    let name = "a_rustc_wrapper_set_before_runs_behind_the_launcher";
    let Some(base) = live(name) else { return };
    if !tool(name, "cargo") {
        return;
    }
    let dir = scratch("build-chained");
    let wrapper = fake_wrapper(&dir);
    let calls = dir.join("calls.log");
    let tree = dir.join("tree");
    copy_tree(&data("cargo"), &tree);
    let (record, report) = (dir.join("job.jsonl"), dir.join("report.html"));
    let env = [
        ("CARGO_HOME", &*dir.join("cargo-home")),
        ("CARGO_TARGET_DIR", &*dir.join("target")),
        ("RUSTC_WRAPPER", &*wrapper),
    ];
    let out = build_in(&tree, &record, &report, "html", &["cargo", "build", "-v", "--offline", "-j2"], &env);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // cargo called stepmon, stepmon the wrapper, the wrapper rustc: every
    // compile (and cargo's questions) went through the wrapper.
    let calls = std::fs::read_to_string(&calls).unwrap();
    let compiles: Vec<&str> = calls.lines().filter(|l| l.contains(" --crate-name ") && !l.contains("___")).collect();
    assert!(
        stderr.lines().filter(|l| l.contains(" --crate-name ")).all(|l| l.contains(&format!("Running `{STEPMON} "))),
        "{stderr}"
    );
    let build = read(&record);
    assert_eq!(compiles.len(), build.actions.len(), "{calls}");
    assert_eq!(build.actions.len(), running_rustc(&stderr).len());
    // Named by the crate behind the wrapper.
    let mut names: Vec<String> = build.actions.iter().map(|a| build.row(a).label.clone()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "wrap-fixture-app 0.2.0 (bin)",
            "wrap-fixture-lib 0.1.3 (build script)",
            "wrap-fixture-lib 0.1.3 (lib)",
            "wrap-fixture-macro 0.4.0 (proc-macro)"
        ]
    );
    nested_and_clean(&build, &record, &base);
    let page = std::fs::read_to_string(&report).unwrap();
    assert_eq!(page.matches("<rect class=\"action k-").count(), 4);
}

/// The record of a real `stepmon build -- cargo build --offline -j2` of the
/// fixture tree (docs/builds.md shows its text report), reported again in
/// each format: no root needed, nothing run.
#[test]
fn a_kept_record_is_reported_in_every_format() {
    let record = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/build/cargo-fixture.jsonl");
    let report = |format: &str| {
        let out =
            clean(STEPMON).args(["build", "--format", format, "-o", "-", "--from"]).arg(&record).output().unwrap();
        assert!(out.status.success() && out.stderr.is_empty(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let (plain, markdown, html) = (report("text"), report("markdown"), report("html"));
    let build = read(&record);
    assert_eq!(build.actions.len(), 4);
    for action in &build.actions {
        let label = build.row(action).label.as_str();
        for (format, shown) in [("text", &plain), ("markdown", &markdown), ("html", &html)] {
            assert!(shown.contains(label), "{format}: {label} missing");
        }
    }
    assert!(plain.starts_with("build: cargo (cargo build --offline -j2) — exit 0"), "{plain}");
    assert!(markdown.starts_with("## stepmon build\n"));
    assert_eq!(html.matches("<rect class=\"action k-").count(), 4);
    // A record that is no build's, and a file that is no record.
    let empty = scratch("build-from");
    std::fs::write(empty.join("empty.jsonl"), "").unwrap();
    let out = clean(STEPMON).args(["build", "--from"]).arg(empty.join("empty.jsonl")).output().unwrap();
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no build step"), "{}", text(&out.stderr));
}

#[test]
fn a_failing_build_keeps_its_status_and_names_the_failed_action() {
    let name = "a_failing_build_keeps_its_status_and_names_the_failed_action";
    let Some(base) = live(name) else { return };
    if !tool(name, "cargo") {
        return;
    }
    let dir = scratch("build-failing");
    let tree = dir.join("tree");
    copy_tree(&data("cargo"), &tree);
    std::fs::write(tree.join("lib/src/lib.rs"), "pub fn greeting() -> &'static str {\n    42\n}\n").unwrap();
    let (record, report) = (dir.join("job.jsonl"), dir.join("report.txt"));
    let env = [("CARGO_HOME", &*dir.join("cargo-home")), ("CARGO_TARGET_DIR", &*dir.join("target"))];
    let out = build_in(&tree, &record, &report, "text", &["cargo", "build", "--offline", "-j1"], &env);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{stderr}");
    assert!(stderr.contains("error[E0308]: mismatched types"), "{stderr}");
    let build = read(&record);
    assert_eq!(build.exit_code, Some(101));
    let failed: Vec<String> = build.failed().iter().map(|&i| build.row(&build.actions[i]).label.clone()).collect();
    assert_eq!(failed, ["wrap-fixture-lib 0.1.3 (lib)"]);
    let report = std::fs::read_to_string(&report).unwrap();
    assert!(report.starts_with("build: cargo (cargo build --offline -j1) — exit 101"), "{report}");
    assert!(report.contains("; 1 FAILED"), "{report}");
    assert!(report.contains("\nfailed actions:\n"), "{report}");
    assert!(report.contains("wrap-fixture-lib 0.1.3 (lib) — FAILED"), "{report}");
    for step in job::read(&std::fs::read_to_string(&record).unwrap()).steps {
        let pid: u32 = step.id.split('.').next().unwrap().parse().unwrap();
        assert!(leftovers(&base, pid).is_empty(), "stepmon {pid} left cgroups behind");
    }
}

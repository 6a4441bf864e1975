//! Result files on a full file system: a 64 KiB tmpfs, mounted in a mount
//! namespace of the test's own (`unshare -m`; never on the host's) and
//! filled before stepmon runs. An earlier result survives byte for byte,
//! nothing is left where there was nothing, the step's status is kept
//! (`--strict-output`: 125) and the error line names the file. Needs root
//! (the mount) and `unshare`; prints `SKIPPED <name>: <why>` otherwise.
//! Also, without root: an unwritable `-o` fails before the step runs.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{live, run_stepmon, scratch, stepmon};

/// What a run of stepmon on the full tmpfs left.
struct OnFullDisk {
    /// stepmon's exit status.
    code: i32,
    stderr: String,
    /// The tmpfs's files after the run (the filler removed), copied out of
    /// the namespace before it went away: name → bytes.
    after: Vec<(String, Vec<u8>)>,
}

/// Runs `stepmon ARGS` in `work` (relative paths `m/…` are on the tmpfs)
/// with the tmpfs mounted at `work/m`, seeded with the files of `seed`,
/// then filled; `None` (after printing `SKIPPED`) where that cannot be done.
fn on_full_disk(name: &str, work: &Path, seed: &[(&str, &[u8])], args: &[&str]) -> Option<OnFullDisk> {
    if !rustix::process::geteuid().is_root() {
        common::skip::skip(name, "needs root to mount a tmpfs (in a mount namespace of its own)");
        return None;
    }
    match Command::new("unshare").args(["-m", "true"]).output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            common::skip::skip(
                name,
                format_args!("unshare -m fails here: {}", String::from_utf8_lossy(&out.stderr).trim()),
            );
            return None;
        }
        Err(e) => {
            common::skip::skip(name, format_args!("no unshare: {e}"));
            return None;
        }
    }
    let (m, seeded, after) = (work.join("m"), work.join("seed"), work.join("after"));
    for dir in [&m, &seeded, &after] {
        std::fs::create_dir(dir).unwrap();
    }
    for (file, bytes) in seed {
        std::fs::write(seeded.join(file), bytes).unwrap();
    }
    // `unshare -m` makes the new namespace's mounts private: the tmpfs is
    // never seen outside, and goes away with the shell.
    let script = r#"set -u
mount -t tmpfs -o size=64k tmpfs m || exit 90
cp -a seed/. m/ || exit 91
cat /dev/zero > m/fill 2>/dev/null
[ "$(df -k m | awk 'NR==2 {print $4}')" = 0 ] || exit 92
"$@"
code=$?
rm -f m/fill
cp -a m/. after/ || exit 93
exit $code"#;
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", script, "sh"])
        .arg(env!("CARGO_BIN_EXE_stepmon"))
        .args(args)
        .current_dir(work)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!(90..=93).contains(&code), "the tmpfs set-up failed ({code}): {stderr}");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&after)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    Some(OnFullDisk { code, stderr, after: files })
}

/// An earlier run's document (a real one, written to a normal directory).
fn earlier_document(dir: &Path) -> Vec<u8> {
    let path = dir.join("earlier.json");
    let out = run_stepmon(&["run", "-q", "-o", path.to_str().unwrap(), "--", "true"]);
    assert!(out.status.success(), "{}", out.stderr);
    std::fs::read(path).unwrap()
}

fn names(files: &[(String, Vec<u8>)]) -> Vec<&str> {
    files.iter().map(|(name, _)| name.as_str()).collect()
}

#[test]
fn run_output_on_a_full_disk_keeps_the_earlier_file_and_the_steps_status() {
    let name = "run_output_on_a_full_disk_keeps_the_earlier_file_and_the_steps_status";
    if live(name).is_none() {
        return;
    }
    let work = scratch("full-run");
    let earlier = earlier_document(&work);
    for (step, status) in [("exit 0", 0), ("exit 3", 3)] {
        let dir = work.join(format!("status-{status}"));
        std::fs::create_dir(&dir).unwrap();
        let Some(out) = on_full_disk(
            name,
            &dir,
            &[("out.json", &earlier)],
            &["run", "-o", "m/out.json", "--textfile", "m", "--", "sh", "-c", step],
        ) else {
            return;
        };
        assert_eq!(out.code, status, "the step's own status: {}", out.stderr);
        assert_eq!(names(&out.after), ["out.json"], "no temporary left, no textfile: {}", out.stderr);
        assert!(out.after[0].1 == earlier, "the earlier out.json, byte for byte");
        // The summary, then one error line per result that failed.
        assert!(out.stderr.contains(&format!("`sh -c '{step}'` exited {status}")), "{}", out.stderr);
        let errors: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("stepmon: error:")).collect();
        assert_eq!(errors.len(), 2, "{}", out.stderr);
        assert!(
            errors[0].starts_with("stepmon: error: cannot write m/out.json: No space left on device")
                && errors[0].contains("the earlier m/out.json is kept as it was")
                && errors[0].contains("the step's numbers are in the summary above")
                && errors[0].contains(&format!("exit status {status}, the step's own")),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].starts_with("stepmon: error: cannot write m/stepmon_sh.prom: No space left on device")
                && errors[1].contains("no m/stepmon_sh.prom was created"),
            "{}",
            errors[1]
        );
    }
}

#[test]
fn run_output_on_a_full_disk_leaves_nothing_and_strict_output_exits_125() {
    let name = "run_output_on_a_full_disk_leaves_nothing_and_strict_output_exits_125";
    if live(name).is_none() {
        return;
    }
    let work = scratch("full-new");
    let Some(out) = on_full_disk(name, &work, &[], &["run", "-q", "--strict-output", "-o", "m/new.json", "--", "true"])
    else {
        return;
    };
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(out.after.is_empty(), "nothing left behind: {:?}", names(&out.after));
    assert_eq!(
        out.stderr.trim_end(),
        "stepmon: error: cannot write m/new.json: No space left on device (os error 28); no m/new.json was \
         created; exit status 125 (--strict-output; the step's was 0)"
    );
}

#[test]
fn report_output_on_a_full_disk_keeps_the_earlier_file() {
    let name = "report_output_on_a_full_disk_keeps_the_earlier_file";
    let work = scratch("full-report");
    // A saved run of the report crate's test data.
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/runs/hybrid-exit7.json");
    std::fs::copy(run, work.join("run.json")).unwrap();
    let earlier = b"<html>an earlier report</html>\n".repeat(100);
    let Some(out) = on_full_disk(
        name,
        &work,
        &[("report.html", &earlier)],
        &["report", "-f", "html", "-o", "m/report.html", "run.json"],
    ) else {
        return;
    };
    assert_eq!(out.code, 125, "writing the report is all `stepmon report` does: {}", out.stderr);
    assert_eq!(names(&out.after), ["report.html"]);
    assert!(out.after[0].1 == earlier, "the earlier report.html, byte for byte");
    assert!(out.stderr.starts_with("stepmon: error: cannot write m/report.html: No space left on device"));
    // None before: none after.
    let fresh = work.join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    std::fs::copy(work.join("run.json"), fresh.join("run.json")).unwrap();
    let Some(out) = on_full_disk(name, &fresh, &[], &["report", "-o", "m/report.txt", "run.json"]) else { return };
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(out.after.is_empty(), "{:?}", names(&out.after));
}

#[test]
fn an_unwritable_output_fails_before_the_step_runs() {
    let work = scratch("unwritable");
    let marker = work.join("ran");
    let touch = ["--", "touch", marker.to_str().unwrap()];
    for (option, target) in
        [("-o", work.join("missing/out.json")), ("-o", work.to_path_buf()), ("--textfile", work.join("missing"))]
    {
        let mut args = vec!["run", "-q", option, target.to_str().unwrap()];
        args.extend(touch);
        let out = stepmon().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{args:?}: {stderr}");
        assert!(stderr.contains(target.to_str().unwrap()), "the error names it: {stderr}");
        assert!(!marker.exists(), "{args:?}: the step ran");
    }
    // Nothing was created in the directory given as -o.
    let left: Vec<_> = std::fs::read_dir(&*work).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

//! The store: concurrent adds lose nothing, the same run is stored once,
//! and files that are not stepmon's history (of this or an older schema)
//! are refused with a typed error and left byte for byte as they were.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use stepmon_testsupport::skip;

use stepmon_history::{Machine, Measure, RunKey, RunRecord, SCHEMA_VERSION, Store, StoreError};

fn key() -> RunKey {
    RunKey { step: "build".into(), runner_class: "Linux-X64".into(), ..RunKey::default() }
}

fn run(tag: &str, i: i64) -> RunRecord {
    RunRecord {
        key: key(),
        branch: Some("main".into()),
        time: jiff::Timestamp::from_second(1_800_000_000 + i).unwrap(),
        commit: Some(format!("{i:040x}")),
        machine: if i % 7 == 0 { Machine::Busy } else { Machine::Quiet },
        measures: vec![
            Measure { metric: "cpu-seconds".into(), value: 1.0 + 0.001 * i as f64 },
            Measure { metric: "memory-peak-bytes".into(), value: 104_857_600.0 },
        ],
        content_key: format!("{tag}-{i}"),
    }
}

/// The child of `two_processes_adding_at_once_lose_none`: adds 100 runs,
/// one transaction each, to the file its parent names.
#[test]
fn child_adds_runs() {
    let (Ok(path), Ok(tag)) = (std::env::var("STEPMON_HISTORY_TEST_DB"), std::env::var("STEPMON_HISTORY_TEST_TAG"))
    else {
        return;
    };
    for i in 0..100 {
        // A new connection each time, as separate `stepmon baseline add`s do.
        let mut store = Store::open(Path::new(&path)).unwrap();
        assert_eq!(store.add(&[run(&tag, i)]).unwrap().added, 1);
    }
}

#[test]
fn two_processes_adding_at_once_lose_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|tag| {
            Command::new(&exe)
                .args(["--exact", "child_adds_runs", "--nocapture", "--test-threads=1"])
                .env("STEPMON_HISTORY_TEST_DB", &db)
                .env("STEPMON_HISTORY_TEST_TAG", tag)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a child failed to add its runs");
    }
    let store = Store::open(&db).unwrap();
    assert_eq!(store.count().unwrap(), 200);
    for tag in ["a", "b"] {
        for i in 0..100 {
            assert!(store.contains(&format!("{tag}-{i}")).unwrap(), "{tag}-{i} lost");
        }
    }
}

#[test]
fn the_same_run_is_stored_once_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut store = Store::open(&db).unwrap();
    let runs: Vec<RunRecord> = (0..40).map(|i| run("x", i)).collect();
    let added = store.add(&runs).unwrap();
    assert_eq!((added.added, added.already), (40, 0));
    let again = store.add(&runs[..10]).unwrap();
    assert_eq!((again.added, again.already), (0, 10));
    drop(store);
    let store = Store::open(&db).unwrap();
    assert_eq!(store.count().unwrap(), 40);
    // The last 30 runs, and the last 30 quiet ones (for wall, CPU, stall).
    let history = store.history(&key(), Some("main"), 30).unwrap();
    let newest: Vec<RunRecord> = runs.iter().rev().take(30).cloned().collect();
    assert_eq!(history[..30], newest[..], "newest first, every field as added");
    let quiet = history.iter().filter(|r| r.machine != Machine::Busy).count();
    assert_eq!(quiet, 30, "the last 30 quiet runs are there too");
    assert!(store.history(&key(), Some("feature"), 30).unwrap().is_empty());
    let other = RunKey { runner_class: "Linux-ARM64".into(), ..key() };
    assert!(store.history(&other, None, 30).unwrap().is_empty(), "another runner class never compares");
}

#[test]
fn the_sqlite3_shell_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    Store::open(&db).unwrap().add(&(0..3).map(|i| run("s", i)).collect::<Vec<_>>()).unwrap();
    let out = match Command::new("sqlite3")
        .arg(&db)
        .arg("SELECT step, count(*), max(value) FROM runs JOIN measures ON run_id = runs.id WHERE metric = 'cpu-seconds' GROUP BY step; PRAGMA user_version;")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            skip::skip("the_sqlite3_shell_reads_it", format_args!("no sqlite3 shell ({e}; scripts/setup installs it)"));
            return;
        }
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("build|3|1.002\n{SCHEMA_VERSION}\n"));
}

fn unchanged_after_refusal(path: &Path, check: impl Fn(&StoreError) -> bool) {
    let before = std::fs::read(path).unwrap();
    let error = Store::open(path).expect_err("the file was accepted");
    assert!(check(&error), "wrong error: {error:?}");
    assert!(error.to_string().contains("left as it is") || error.to_string().contains("upgrade"), "{error}");
    assert_eq!(std::fs::read(path).unwrap(), before, "the file was changed");
    assert!(
        !path.with_extension("db-wal").exists() || std::fs::metadata(path.with_extension("db-wal")).unwrap().len() == 0
    );
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    std::fs::write(&db, "{\"not\": \"a database\"}\n").unwrap();
    unchanged_after_refusal(&db, |e| matches!(e, StoreError::NotSqlite { .. }));
}

#[test]
fn a_damaged_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    Store::open(&db).unwrap().add(&(0..50).map(|i| run("c", i)).collect::<Vec<_>>()).unwrap();
    // Checkpointed into the main file; then its header's page size and
    // everything after the header scrambled, as a torn copy might be.
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 4096);
    for (i, b) in bytes.iter_mut().enumerate().skip(16) {
        *b = (i * 131 % 251) as u8;
    }
    std::fs::write(&db, &bytes).unwrap();
    for side in ["db-wal", "db-shm"] {
        let _ = std::fs::remove_file(db.with_extension(side));
    }
    unchanged_after_refusal(&db, |e| matches!(e, StoreError::Corrupt { .. }));
}

#[test]
fn another_programs_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    }
    unchanged_after_refusal(&db, |e| matches!(e, StoreError::Foreign { .. }));
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    Store::open(&db).unwrap().add(&[run("n", 1)]).unwrap();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        c.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
    }
    unchanged_after_refusal(
        &db,
        |e| matches!(e, StoreError::NewerSchema { version, .. } if *version == SCHEMA_VERSION + 1),
    );
}

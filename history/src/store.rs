//! The store: one SQLite file (schema in docs/baselines.md).
//!
//! * Two processes may add at once: the file is in WAL mode, a writer
//!   waits up to [`BUSY_TIMEOUT`] for the other, and each [`Store::add`] is
//!   one `BEGIN IMMEDIATE` transaction (<https://www.sqlite.org/wal.html>,
//!   <https://www.sqlite.org/lang_transaction.html>).
//! * A file is recognised by its `PRAGMA application_id`
//!   ([`APPLICATION_ID`]) and its schema by `PRAGMA user_version`
//!   ([`SCHEMA_VERSION`]); anything else — not SQLite, damaged, another
//!   program's database, a newer schema — is a [`StoreError`] and the file
//!   is left as it was.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, params};

use crate::metric::Measure;
use crate::record::{Machine, RunKey, RunRecord};

/// `PRAGMA application_id` of a stepmon history file: "STMH".
pub const APPLICATION_ID: i32 = 0x5354_4d48;
/// `PRAGMA user_version`: the schema this version writes and reads.
pub const SCHEMA_VERSION: i32 = 1;
/// How long a writer waits for another process's transaction.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    content_key TEXT NOT NULL UNIQUE,
    step TEXT NOT NULL,
    labels TEXT NOT NULL,
    repository TEXT NOT NULL,
    job TEXT NOT NULL,
    runner_class TEXT NOT NULL,
    branch TEXT,
    time TEXT NOT NULL,
    time_us INTEGER NOT NULL,
    commit_sha TEXT,
    machine TEXT NOT NULL CHECK (machine IN ('quiet', 'busy', 'unknown'))
);
CREATE INDEX IF NOT EXISTS runs_by_key ON runs (step, labels, repository, job, runner_class, time_us);
CREATE TABLE IF NOT EXISTS measures (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run_id, metric)
) WITHOUT ROWID;
";

/// Why a history file cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The file is not an SQLite database (its header says otherwise).
    NotSqlite {
        /// The file.
        path: PathBuf,
    },
    /// An SQLite database of another program (its application id).
    Foreign {
        /// The file.
        path: PathBuf,
        /// Its `PRAGMA application_id`.
        application_id: i32,
    },
    /// Written by a newer stepmon: its schema is unknown to this one.
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its `PRAGMA user_version`.
        version: i32,
    },
    /// SQLite found the file damaged.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// SQLite's words.
        detail: String,
    },
    /// Reading or writing the file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// Any other SQLite error.
    Sqlite {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NotSqlite { path } => {
                write!(f, "{}: not a stepmon history file (not an SQLite database); left as it is", path.display())
            }
            StoreError::Foreign { path, application_id } => write!(
                f,
                "{}: an SQLite database of another program (application id {application_id:#x}, stepmon's is {APPLICATION_ID:#x}); left as it is",
                path.display()
            ),
            StoreError::NewerSchema { path, version } => write!(
                f,
                "{}: history schema version {version} is newer than this stepmon's ({SCHEMA_VERSION}); upgrade stepmon (the file is left as it is)",
                path.display()
            ),
            StoreError::Corrupt { path, detail } => {
                write!(f, "{}: damaged SQLite database ({detail}); left as it is", path.display())
            }
            StoreError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            StoreError::Sqlite { path, source } => write!(f, "{}: SQLite: {source}", path.display()),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Io { source, .. } => Some(source),
            StoreError::Sqlite { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What [`Store::add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Added {
    /// Runs new to the store.
    pub added: usize,
    /// Runs it already had (same content key): not added again.
    pub already: usize,
}

/// An open history file.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use stepmon_history::{Machine, Measure, RunKey, RunRecord, Store};
/// let dir = tempfile::tempdir()?;
/// let mut store = Store::open(&dir.path().join("history.db"))?;
/// let run = RunRecord {
///     key: RunKey { step: "build".into(), ..RunKey::default() },
///     branch: Some("main".into()),
///     time: jiff::Timestamp::from_second(1_800_000_000)?,
///     commit: None,
///     machine: Machine::Quiet,
///     measures: vec![Measure { metric: "cpu-seconds".into(), value: 1.5 }],
///     content_key: "k1".into(),
/// };
/// assert_eq!(store.add(std::slice::from_ref(&run))?.added, 1);
/// assert_eq!(store.add(std::slice::from_ref(&run))?.already, 1);
/// assert_eq!(store.history(&run.key, None, 30)?, [run]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Store {
    connection: Connection,
    path: PathBuf,
}

/// The 16 bytes every SQLite 3 database starts with
/// (<https://www.sqlite.org/fileformat.html#the_database_header>).
const HEADER: &[u8; 16] = b"SQLite format 3\0";

impl Store {
    /// Opens `path`, creating it (and its schema) when it does not exist or
    /// is empty.
    ///
    /// # Errors
    /// [`StoreError`]: a file that is not stepmon's history of this or an
    /// older schema is refused and left untouched.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let io = |source| StoreError::Io { path: path.to_owned(), source };
        let existing = match std::fs::metadata(path) {
            Ok(meta) => meta.len() > 0,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(io(e)),
        };
        if existing {
            let mut head = [0u8; 16];
            let read = std::io::Read::read(&mut std::fs::File::open(path).map_err(io)?, &mut head).map_err(io)?;
            if read < head.len() || &head != HEADER {
                return Err(StoreError::NotSqlite { path: path.to_owned() });
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | if existing { OpenFlags::empty() } else { OpenFlags::SQLITE_OPEN_CREATE };
        let sqlite = |source| classify(path, source);
        let connection = Connection::open_with_flags(path, flags).map_err(sqlite)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        let mut store = Store { connection, path: path.to_owned() };
        // Two processes making a new file at once: switching it to WAL and
        // writing its schema can meet the other's lock where SQLite returns
        // SQLITE_BUSY at once instead of calling the busy handler (its
        // deadlock avoidance, https://www.sqlite.org/c3ref/busy_handler.html):
        // try again until the busy timeout is spent.
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            match store.prepare(existing) {
                Err(e) if e.is_busy() && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(200));
                }
                done => return done.map(|()| store),
            }
        }
    }

    fn prepare(&mut self, existing: bool) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sqlite = |source| classify(&path, source);
        let pragma = |c: &Connection, name: &str| c.pragma_query_value(None, name, |row| row.get::<_, i32>(0));
        let (id, version) = (
            pragma(&self.connection, "application_id").map_err(sqlite)?,
            pragma(&self.connection, "user_version").map_err(sqlite)?,
        );
        if existing && id != APPLICATION_ID {
            let tables: i64 =
                self.connection.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0)).map_err(sqlite)?;
            // An SQLite file with neither our id nor any table (made by
            // `sqlite3 FILE` and nothing else) becomes ours; one with
            // tables of its own is another program's.
            if tables > 0 || id != 0 {
                return Err(StoreError::Foreign { path: path.clone(), application_id: id });
            }
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema { path: path.clone(), version });
        }
        if id == APPLICATION_ID && version == SCHEMA_VERSION {
            return Ok(());
        }
        // A new file (or one being made by another process at this moment):
        // WAL first (it cannot change inside a transaction), then the
        // schema in one transaction, checked again under its lock.
        self.connection.pragma_update(None, "journal_mode", "WAL").map_err(sqlite)?;
        let tx = self.connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sqlite)?;
        let (id, version) =
            (pragma(&tx, "application_id").map_err(sqlite)?, pragma(&tx, "user_version").map_err(sqlite)?);
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema { path: path.clone(), version });
        }
        if id == 0 || id == APPLICATION_ID {
            tx.execute_batch(SCHEMA).map_err(sqlite)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID).map_err(sqlite)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(sqlite)?;
        } else {
            return Err(StoreError::Foreign { path: path.clone(), application_id: id });
        }
        tx.commit().map_err(sqlite)
    }

    /// Adds `runs` in one transaction; a run already stored (same content
    /// key) is not added again.
    ///
    /// # Errors
    /// SQLite's errors (a full disk, a lock held past [`BUSY_TIMEOUT`]).
    pub fn add(&mut self, runs: &[RunRecord]) -> Result<Added, StoreError> {
        let path = self.path.clone();
        let sqlite = |source| classify(&path, source);
        let tx = self.connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sqlite)?;
        let mut added = Added::default();
        {
            let mut run_insert = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO runs (content_key, step, labels, repository, job, runner_class, branch, \
                     time, time_us, commit_sha, machine) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )
                .map_err(sqlite)?;
            let mut measure_insert = tx
                .prepare_cached("INSERT INTO measures (run_id, metric, value) VALUES (?1, ?2, ?3)")
                .map_err(sqlite)?;
            for run in runs {
                let k = &run.key;
                let changed = run_insert
                    .execute(params![
                        run.content_key,
                        k.step,
                        k.labels_text(),
                        k.repository,
                        k.job,
                        k.runner_class,
                        run.branch,
                        run.time.to_string(),
                        micros(run.time),
                        run.commit,
                        run.machine.name(),
                    ])
                    .map_err(sqlite)?;
                if changed == 0 {
                    added.already += 1;
                    continue;
                }
                let id = tx.last_insert_rowid();
                for m in &run.measures {
                    measure_insert.execute(params![id, m.metric, m.value]).map_err(sqlite)?;
                }
                added.added += 1;
            }
        }
        tx.commit().map_err(sqlite)?;
        Ok(added)
    }

    /// The runs comparable with `key` (on `branch` when given), newest
    /// first: the last `window` runs, and for the wall, CPU and stall
    /// baselines also the last `window` runs on a machine that was not busy.
    ///
    /// # Errors
    /// SQLite's errors.
    pub fn history(&self, key: &RunKey, branch: Option<&str>, window: usize) -> Result<Vec<RunRecord>, StoreError> {
        let sqlite = |source| classify(&self.path, source);
        let window = i64::try_from(window).unwrap_or(i64::MAX);
        let select = "SELECT id, content_key, branch, time, commit_sha, machine FROM runs \
             WHERE step = ?1 AND labels = ?2 AND repository = ?3 AND job = ?4 AND runner_class = ?5 \
             AND (?6 IS NULL OR branch = ?6)";
        let sql = format!(
            "SELECT * FROM (SELECT * FROM ({select} ORDER BY time_us DESC LIMIT ?7) UNION \
             SELECT * FROM ({select} AND machine != 'busy' ORDER BY time_us DESC LIMIT ?7))"
        );
        let mut statement = self.connection.prepare_cached(&sql).map_err(sqlite)?;
        let rows = statement
            .query_map(
                params![key.step, key.labels_text(), key.repository, key.job, key.runner_class, branch, window],
                |row| {
                    Ok((
                        row.get::<_, i64>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, Option<String>>(2)?,
                        row.get::<_, String>(3)?,
                        row.get::<_, Option<String>>(4)?,
                        row.get::<_, String>(5)?,
                    ))
                },
            )
            .map_err(sqlite)?;
        let mut measures =
            self.connection.prepare_cached("SELECT metric, value FROM measures WHERE run_id = ?1").map_err(sqlite)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, content_key, branch, time, commit, machine) = row.map_err(sqlite)?;
            let measures = measures
                .query_map([id], |r| Ok(Measure { metric: r.get(0)?, value: r.get(1)? }))
                .map_err(sqlite)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(sqlite)?;
            let corrupt =
                |what: &str| StoreError::Corrupt { path: self.path.clone(), detail: format!("run {id}: {what}") };
            out.push(RunRecord {
                key: key.clone(),
                branch,
                time: time.parse().map_err(|_| corrupt("time is not RFC 3339"))?,
                commit,
                machine: Machine::of_name(&machine).ok_or_else(|| corrupt("unknown machine state"))?,
                measures,
                content_key,
            });
        }
        out.sort_by_key(|r| std::cmp::Reverse(r.time));
        Ok(out)
    }

    /// Every stored run (of `step` when given), grouped by key and oldest
    /// first within a key: what `stepmon baseline show` draws. One query
    /// over the key index, measures joined in.
    ///
    /// # Errors
    /// SQLite's errors; a row that does not read back is [`StoreError::Corrupt`].
    pub fn runs(&self, step: Option<&str>) -> Result<Vec<RunRecord>, StoreError> {
        let sqlite = |source| classify(&self.path, source);
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT r.id, r.content_key, r.step, r.labels, r.repository, r.job, r.runner_class, r.branch, r.time, \
                 r.commit_sha, r.machine, m.metric, m.value FROM runs r LEFT JOIN measures m ON m.run_id = r.id \
                 WHERE (?1 IS NULL OR r.step = ?1) \
                 ORDER BY r.step, r.labels, r.repository, r.job, r.runner_class, r.time_us, r.id",
            )
            .map_err(sqlite)?;
        let mut rows = statement.query([step]).map_err(sqlite)?;
        let mut out: Vec<RunRecord> = Vec::new();
        let mut last_id = None;
        while let Some(row) = rows.next().map_err(sqlite)? {
            let id: i64 = row.get(0).map_err(sqlite)?;
            if last_id != Some(id) {
                last_id = Some(id);
                let corrupt =
                    |what: &str| StoreError::Corrupt { path: self.path.clone(), detail: format!("run {id}: {what}") };
                let time: String = row.get(8).map_err(sqlite)?;
                let machine: String = row.get(10).map_err(sqlite)?;
                let labels: String = row.get(3).map_err(sqlite)?;
                out.push(RunRecord {
                    key: RunKey {
                        step: row.get(2).map_err(sqlite)?,
                        labels: RunKey::labels_of_text(&labels),
                        repository: row.get(4).map_err(sqlite)?,
                        job: row.get(5).map_err(sqlite)?,
                        runner_class: row.get(6).map_err(sqlite)?,
                    },
                    branch: row.get(7).map_err(sqlite)?,
                    time: time.parse().map_err(|_| corrupt("time is not RFC 3339"))?,
                    commit: row.get(9).map_err(sqlite)?,
                    machine: Machine::of_name(&machine).ok_or_else(|| corrupt("unknown machine state"))?,
                    measures: Vec::new(),
                    content_key: row.get(1).map_err(sqlite)?,
                });
            }
            if let (Some(metric), Some(value), Some(run)) = (
                row.get::<_, Option<String>>(11).map_err(sqlite)?,
                row.get::<_, Option<f64>>(12).map_err(sqlite)?,
                out.last_mut(),
            ) {
                run.measures.push(Measure { metric, value });
            }
        }
        Ok(out)
    }

    /// How many runs the store holds.
    ///
    /// # Errors
    /// SQLite's errors.
    pub fn count(&self) -> Result<u64, StoreError> {
        self.connection
            .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|source| classify(&self.path, source))
    }

    /// Whether a run of `content_key` is stored.
    ///
    /// # Errors
    /// SQLite's errors.
    pub fn contains(&self, content_key: &str) -> Result<bool, StoreError> {
        self.connection
            .query_row("SELECT 1 FROM runs WHERE content_key = ?1", [content_key], |_| Ok(()))
            .optional()
            .map(|found| found.is_some())
            .map_err(|source| classify(&self.path, source))
    }
}

fn micros(t: jiff::Timestamp) -> i64 {
    t.as_microsecond()
}

/// SQLite's "not a database" and "corrupt" codes as [`StoreError::Corrupt`].
impl StoreError {
    /// Whether another connection held a lock the operation needed.
    fn is_busy(&self) -> bool {
        use rusqlite::ErrorCode;
        matches!(self, StoreError::Sqlite { source, .. }
            if matches!(source.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)))
    }
}

fn classify(path: &Path, source: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            StoreError::Corrupt { path: path.to_owned(), detail: source.to_string() }
        }
        _ => StoreError::Sqlite { path: path.to_owned(), source },
    }
}

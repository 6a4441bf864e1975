//! `stepmon top`: a table of the steps running on this machine, one row
//! each, redrawn every second (clear and home, plain ANSI: no TUI library),
//! or one snapshot with `--once` (text or `--json`). The steps and their
//! numbers are `stepmon_runner::admin::running`'s; their names and job records
//! come from the owners' command lines and `stepmon-job`'s markers.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use stepmon_job::{MarkerDirs, RunningMarker};
use stepmon_report::units;
use stepmon_runner::admin::running::{RunningStep, RunningSteps, StepNow};

use crate::error::CliError;

/// How often the table is read and redrawn (the rates are over it).
const REFRESH: Duration = Duration::from_secs(1);

/// Arguments of `stepmon top`.
#[derive(Debug, clap::Args)]
pub struct TopArgs {
    /// The column to sort by, largest first (name: in order).
    #[arg(long, value_enum, default_value = "cpu")]
    pub sort: SortKey,
    /// Print one table (the rates over one second) and exit.
    #[arg(long)]
    pub once: bool,
    /// With --once: the rows as JSON.
    #[arg(long, requires = "once")]
    pub json: bool,
}

/// What the rows are sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SortKey {
    /// CPU cores now.
    Cpu,
    /// Memory now.
    Memory,
    /// Bytes read and written a second.
    Io,
    /// Time since the step started.
    Elapsed,
    /// The step's name.
    Name,
}

/// PSI `some` stall shares of one row.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Stall {
    cpu: Option<f64>,
    memory: Option<f64>,
    io: Option<f64>,
}

/// One row: a running step as the table and `--json` show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    /// The step's name (`--name`, else its program's base name).
    name: String,
    /// Its job record, when it has one.
    job: Option<PathBuf>,
    /// Its id in the job record.
    job_step: Option<String>,
    /// The run directory's name (the same in every hierarchy).
    run: String,
    /// The stepmon (or builder) process that runs it.
    owner_pid: u32,
    /// When it was read.
    at: jiff::Timestamp,
    elapsed_seconds: Option<f64>,
    /// CPU time so far, s (its cgroup's usage).
    cpu_seconds: Option<f64>,
    /// CPU cores over the last second.
    cpu_cores: Option<f64>,
    memory_bytes: Option<u64>,
    memory_limit_bytes: Option<u64>,
    read_bytes_per_second: Option<f64>,
    write_bytes_per_second: Option<f64>,
    stall: Stall,
    tasks: Option<u64>,
}

/// `--name` and `--job` of a `stepmon run` command line, and its command's
/// default name; `None` for another program (a builder using the runner).
fn from_run_argv(argv: &[String]) -> Option<(String, Option<PathBuf>)> {
    let mut args = argv.iter().skip(1);
    if args.next().map(String::as_str) != Some("run") {
        return None;
    }
    let (mut name, mut job) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--" => break,
            "--name" => name = args.next().cloned(),
            "--job" => job = args.next().map(PathBuf::from),
            other => {
                if let Some(value) = other.strip_prefix("--name=") {
                    name = Some(value.to_owned());
                } else if let Some(value) = other.strip_prefix("--job=") {
                    job = Some(PathBuf::from(value));
                }
            }
        }
    }
    let command: Vec<String> = args.cloned().collect();
    Some((name.unwrap_or_else(|| stepmon_model::labels::default_name(&command)), job))
}

/// The action of a launcher's command line (`stepmon wrap cc -c -o a.o
/// a.c`, cargo's `stepmon rustc …`) named by what it builds, as its job
/// record names it (without the package version, which is in cargo's
/// environment; its marker has that); `None` for another command line.
fn from_launcher_argv(argv: &[String]) -> Option<(String, Option<PathBuf>)> {
    let words: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
    let action = crate::wrap::action_of_argv(&words)?;
    let action: Vec<String> = action.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    Some((stepmon_job::action::identify(&action, |_| None).to_string(), None))
}

/// The `.<n>` of a run directory's name (0 without one).
fn run_number(run: &str) -> u64 {
    run.split('.').nth(3).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// The row of `now`, named from its owner's command line and its marker.
fn row(now: &StepNow, markers: &[RunningMarker]) -> Row {
    let step: &RunningStep = &now.step;
    let (mut name, mut job) =
        from_run_argv(&step.owner_command).or_else(|| from_launcher_argv(&step.owner_command)).unwrap_or_else(|| {
            // A builder: its program, and the run directory's number.
            let program = stepmon_model::labels::default_name(&step.owner_command);
            (format!("{program}#{}", run_number(&step.run)), None)
        });
    let marker =
        markers.iter().find(|m| m.pid == step.owner_pid && m.start == step.owner_start && m.n == run_number(&step.run));
    if let Some(marker) = marker {
        job = Some(marker.job.clone());
        if let Some(marked) = &marker.name {
            name.clone_from(marked);
        }
    }
    let rates = now.rates.unwrap_or_default();
    let sample = &now.sample;
    Row {
        name,
        job,
        job_step: marker.map(|m| m.step.clone()),
        run: step.run.clone(),
        owner_pid: step.owner_pid,
        at: sample.timestamp,
        elapsed_seconds: now.elapsed_seconds,
        #[allow(clippy::cast_precision_loss)] // ns far below 2^52 s
        cpu_seconds: sample.cpu_stat.and_then(|c| c.usage_nanos).map(|ns| ns as f64 / 1e9),
        cpu_cores: rates.cpu_cores,
        memory_bytes: sample.stepmon.memory_current,
        memory_limit_bytes: sample.stepmon.memory_max.and_then(stepmon_model::sample::LimitJson::value),
        read_bytes_per_second: rates.read_bytes_per_second,
        write_bytes_per_second: rates.write_bytes_per_second,
        stall: Stall { cpu: rates.stall.cpu, memory: rates.stall.memory, io: rates.stall.io },
        tasks: sample.pids_stat.current,
    }
}

/// Sorts `rows` by `key`, largest first (names in order); absent last.
fn sort(rows: &mut [Row], key: SortKey) {
    let number = |row: &Row| -> Option<f64> {
        #[allow(clippy::cast_precision_loss)]
        match key {
            SortKey::Cpu => row.cpu_cores,
            SortKey::Memory => row.memory_bytes.map(|b| b as f64),
            SortKey::Io => match (row.read_bytes_per_second, row.write_bytes_per_second) {
                (None, None) => None,
                (r, w) => Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)),
            },
            SortKey::Elapsed => row.elapsed_seconds,
            SortKey::Name => None,
        }
    };
    rows.sort_by(|a, b| {
        let by_number = match (number(a), number(b)) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        by_number.then_with(|| a.name.cmp(&b.name)).then_with(|| a.run.cmp(&b.run))
    });
}

fn or_dash(value: Option<String>) -> String {
    value.unwrap_or_else(|| "-".to_owned())
}

fn rate(bytes_per_second: f64) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // rounded, ≥ 0
    let whole = bytes_per_second.max(0.0).round() as u64;
    format!("{}/s", units::bytes(whole))
}

fn share(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |s| format!("{:.0}%", s * 100.0))
}

/// `text` cut to `width` characters (the last one an ellipsis).
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    text.chars().take(width.saturating_sub(1)).chain(std::iter::once('…')).collect()
}

/// The rows as a table, a header line first.
fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<20} {:<16} {:>9} {:>6} {:>10} {:>10} {:>22} {:>14} {:>6}\n",
        "STEP", "JOB", "ELAPSED", "CORES", "MEMORY", "LIMIT", "IO READ/WRITE", "STALL C/M/I", "TASKS"
    );
    for row in rows {
        let job = row.job.as_ref().and_then(|j| j.file_name()).map(|f| f.to_string_lossy().into_owned());
        let io = match (row.read_bytes_per_second, row.write_bytes_per_second) {
            (Some(r), Some(w)) => format!("{}/{}", rate(r), rate(w)),
            _ => "-".to_owned(),
        };
        let stall = format!("{}/{}/{}", share(row.stall.cpu), share(row.stall.memory), share(row.stall.io));
        out += &format!(
            "{:<20} {:<16} {:>9} {:>6} {:>10} {:>10} {:>22} {:>14} {:>6}\n",
            fit(&row.name, 20),
            fit(&or_dash(job), 16),
            or_dash(row.elapsed_seconds.map(units::seconds)),
            or_dash(row.cpu_cores.map(|c| format!("{c:.2}"))),
            or_dash(row.memory_bytes.map(units::bytes)),
            or_dash(row.memory_limit_bytes.map(units::bytes)),
            io,
            stall,
            or_dash(row.tasks.map(|t| t.to_string())),
        );
    }
    out
}

/// The rows of one refresh.
fn rows(steps: &mut RunningSteps, key: SortKey) -> Vec<Row> {
    let markers = MarkerDirs::from_env().running();
    let mut rows: Vec<Row> = steps.refresh().iter().map(|now| row(now, &markers)).collect();
    sort(&mut rows, key);
    rows
}

/// Runs `stepmon top`.
pub fn top(args: &TopArgs) -> Result<i32, CliError> {
    let mut steps = RunningSteps::new();
    if args.once {
        steps.refresh();
        std::thread::sleep(REFRESH);
        let rows = rows(&mut steps, args.sort);
        let text = if args.json {
            serde_json::to_string_pretty(&rows).map_err(|e| CliError::new(format!("JSON: {e}")))? + "\n"
        } else {
            table(&rows)
        };
        crate::out::emit(&text)?;
        return Ok(0);
    }
    // Stdin read a key at a time (its output processing, `\n` as CR LF, is
    // left as it is).
    let terminal = crate::terminal::Raw::stdin();
    let on_terminal = std::io::stdout().is_terminal();
    let mut key = args.sort;
    steps.refresh();
    let mut next = Instant::now() + REFRESH;
    loop {
        match crate::terminal::key_until(terminal.as_ref(), next) {
            Some(b'q' | b'Q' | 0x03 | 0x04) => return Ok(0),
            Some(b'c') => key = SortKey::Cpu,
            Some(b'm') => key = SortKey::Memory,
            Some(b'i') => key = SortKey::Io,
            Some(b'e') => key = SortKey::Elapsed,
            Some(b'n') => key = SortKey::Name,
            Some(_) => continue,
            None => next = Instant::now() + REFRESH,
        }
        let rows = rows(&mut steps, key);
        // Redrawn in place on a terminal; a pipe gets one table after another.
        let mut screen = String::from(if on_terminal { CLEAR_AND_HOME } else { "\n" });
        screen += &format!(
            "stepmon top: {} running step{}, sorted by {}{}\n\n",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" },
            format!("{key:?}").to_lowercase(),
            if terminal.is_some() { " (c m i e n to sort, q to quit)" } else { "" },
        );
        screen += &table(&rows);
        let mut stdout = std::io::stdout().lock();
        if stdout.write_all(screen.as_bytes()).and_then(|()| stdout.flush()).is_err() {
            // The reader went away.
            return Ok(0);
        }
    }
}

/// ANSI: clear the screen, cursor home.
const CLEAR_AND_HOME: &str = "\x1b[H\x1b[2J";

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn names_and_jobs_come_from_stepmon_runs_command_line() {
        assert_eq!(from_run_argv(&argv("stepmon run -- make -j8")), Some(("make".to_owned(), None)));
        assert_eq!(
            from_run_argv(&argv("/usr/bin/stepmon run --name build --job ci.jsonl -q -- /usr/bin/cc x.c")),
            Some(("build".to_owned(), Some(PathBuf::from("ci.jsonl"))))
        );
        assert_eq!(
            from_run_argv(&argv("stepmon run --name=b --job=j.jsonl -- sh")),
            Some(("b".to_owned(), Some(PathBuf::from("j.jsonl"))))
        );
        // After `--` it is the step's own argument.
        assert_eq!(from_run_argv(&argv("stepmon run -- tool --name x")), Some(("tool".to_owned(), None)));
        assert_eq!(from_run_argv(&argv("my-builder --jobs 4")), None);
        assert_eq!(run_number("stepmon-run.12.34"), 0);
        assert_eq!(run_number("stepmon-run.12.34.5"), 5);
    }

    #[test]
    fn a_launchers_action_is_named_by_what_it_builds() {
        let name = |line: &str| from_launcher_argv(&argv(line)).map(|(n, _)| n);
        assert_eq!(name("/usr/bin/stepmon wrap cc -c -o main.o main.c").as_deref(), Some("main.o (cc)"));
        assert_eq!(
            name("stepmon /opt/rust/bin/rustc --crate-name serde --edition=2021 src/lib.rs --crate-type lib")
                .as_deref(),
            Some("serde (lib)")
        );
        assert_eq!(name("stepmon run -- cc -c a.c"), None);
        assert_eq!(name("my-builder --jobs 4"), None);
    }

    fn named(name: &str, cores: Option<f64>, memory: Option<u64>) -> Row {
        Row {
            name: name.to_owned(),
            job: None,
            job_step: None,
            run: format!("stepmon-run.1.{name}"),
            owner_pid: 1,
            at: jiff::Timestamp::UNIX_EPOCH,
            elapsed_seconds: None,
            cpu_seconds: None,
            cpu_cores: cores,
            memory_bytes: memory,
            memory_limit_bytes: None,
            read_bytes_per_second: None,
            write_bytes_per_second: None,
            stall: Stall::default(),
            tasks: None,
        }
    }

    #[test]
    fn rows_sort_largest_first_absent_last_names_in_order() {
        let mut rows = vec![named("b", Some(0.5), Some(9)), named("a", None, Some(1)), named("c", Some(1.5), None)];
        sort(&mut rows, SortKey::Cpu);
        assert_eq!(rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["c", "b", "a"]);
        sort(&mut rows, SortKey::Memory);
        assert_eq!(rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["b", "a", "c"]);
        sort(&mut rows, SortKey::Name);
        assert_eq!(rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        let text = table(&rows);
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(text.lines().nth(3).unwrap().starts_with("c "), "{text}");
    }
}

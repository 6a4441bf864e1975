//! The fleet's Prometheus as the history: the runs a `--push` or
//! `--textfile` export left in any server speaking the Prometheus HTTP API
//! (Prometheus, Thanos, Mimir), read back as [`RunRecord`]s. No I/O here:
//! [`Source::requests`] says what to ask (`GET /api/v1/query_range`,
//! <https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries>),
//! the caller fetches, [`Runs::add_response`] reads each answer.
//!
//! A run stays in its exporter (Pushgateway, a textfile) until the next
//! one replaces it, so one run is seen at many evaluation times; each run's
//! `stepmon_step_end_timestamp_seconds` tells them apart: samples of one
//! step's labels with one end time are one run, counted once. The
//! statistics are the embedded store's ([`crate::check`]), computed here
//! from the de-duplicated runs — not `quantile_over_time`, which would
//! weigh a run by how many scrapes saw it.
//!
//! What the store has and Prometheus has not: the commit and the run id
//! (never labels: their cardinality grows with every run), the branch,
//! and each command's numbers (not exported).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;

use crate::metric::Measure;
use crate::record::{Machine, RunKey, RunRecord};

/// The scheme prefix of a Prometheus history: `prometheus+http://HOST:9090`.
pub const SCHEME: &str = "prometheus+";

/// The end time's sample name.
pub const END: &str = "stepmon_step_end_timestamp_seconds";
/// The machine-load stateset's sample name (and its state label).
pub const MACHINE: &str = "stepmon_step_machine_load";

/// The history's metrics and the exported samples they are read from
/// (`resource`/`kind` labels of the pressure family; IO is read + write).
const SAMPLES: &[(&str, &str, Option<&str>)] = &[
    ("stepmon_step_cpu_usage_seconds_total", "cpu-seconds", None),
    ("stepmon_step_wall_seconds", "wall-seconds", None),
    ("stepmon_step_memory_peak_bytes", "memory-peak-bytes", None),
    ("stepmon_step_io_read_bytes_total", "io-bytes", None),
    ("stepmon_step_io_write_bytes_total", "io-bytes", None),
    ("stepmon_step_pressure_stall_seconds_total", "cpu-stall-seconds", Some("cpu")),
    ("stepmon_step_pressure_stall_seconds_total", "memory-stall-seconds", Some("memory")),
    ("stepmon_step_pressure_stall_seconds_total", "io-stall-seconds", Some("io")),
    ("stepmon_step_pids_peak", "pids-peak", None),
];

/// Every sample name the reader asks for.
#[must_use]
pub fn sample_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = SAMPLES.iter().map(|s| s.0).chain([END, MACHINE]).collect();
    names.dedup();
    names
}

/// Labels that are not part of a step's identity: the exporter's
/// (`instance`, `job`, `exported_*`), the export's bookkeeping (`origin`,
/// `index`), the CI context (`ci_*`, compared through the run key's own
/// fields, not labels) and the families' own.
fn is_identity(label: &str) -> bool {
    !(matches!(label, "__name__" | "instance" | "job" | "origin" | "index" | "resource" | "kind" | MACHINE)
        || label.starts_with("exported_")
        || label.starts_with("ci_"))
}

/// Where the runs are and how far back to look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The server's base URL (`http://HOST:9090`, a path prefix kept).
    pub base: String,
    /// How far back from now, seconds (`?range=30d`, the default).
    pub range_seconds: u64,
    /// The evaluation step, seconds (`?step=60s`, the default): a run
    /// replaced in its exporter sooner than this can be missed.
    pub step_seconds: u64,
}

/// At most this many evaluation points per request (Prometheus refuses
/// more than 11,000 per series).
pub const POINTS_PER_REQUEST: u64 = 10_000;

fn duration(text: &str) -> Result<u64, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (n, unit) = text.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("`{text}` is not a duration (e.g. 60s, 15m, 2h, 30d)"))?;
    let scale = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(format!("`{text}`: unknown unit `{unit}` (s, m, h, d, w)")),
    };
    n.checked_mul(scale).filter(|s| *s > 0).ok_or_else(|| format!("`{text}` is not a positive duration"))
}

impl Source {
    /// The source a DB argument names, `None` when it is not
    /// `prometheus+http(s)://…`.
    ///
    /// ```
    /// use stepmon_history::prometheus::Source;
    /// let s = Source::of("prometheus+http://127.0.0.1:9090?range=2d&step=30s").unwrap()?;
    /// assert_eq!((s.base.as_str(), s.range_seconds, s.step_seconds), ("http://127.0.0.1:9090", 172_800, 30));
    /// assert!(Source::of("history.db").is_none());
    /// # Ok::<(), String>(())
    /// ```
    #[must_use]
    pub fn of(db: &str) -> Option<Result<Source, String>> {
        let url = db.strip_prefix(SCHEME)?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Some(Err(format!("{db}: expected prometheus+http://HOST:PORT or prometheus+https://…")));
        }
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut source =
            Source { base: base.trim_end_matches('/').to_owned(), range_seconds: 30 * 86_400, step_seconds: 60 };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let parsed = match pair.split_once('=') {
                Some(("range", v)) => duration(v).map(|v| source.range_seconds = v),
                Some(("step", v)) => duration(v).map(|v| source.step_seconds = v),
                _ => Err(format!("unknown parameter `{pair}` (range=DURATION, step=DURATION)")),
            };
            if let Err(e) = parsed {
                return Some(Err(format!("{db}: {e}")));
            }
        }
        Some(Ok(source))
    }

    /// The selector of `step`'s runs (every step's when `None`) with
    /// `labels`: `{__name__=~"…",step="build",team="infra"}`.
    #[must_use]
    pub fn selector(step: Option<&str>, labels: &[(String, String)]) -> String {
        let mut out = format!("{{__name__=~\"{}\"", sample_names().join("|"));
        for (k, v) in step.map(|s| ("step", s)).into_iter().chain(labels.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        {
            out.push_str(&format!(",{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")));
        }
        out.push('}');
        out
    }

    /// The `query_range` URLs that cover the range ending at `now` for
    /// `selector`, each at most [`POINTS_PER_REQUEST`] points.
    #[must_use]
    pub fn requests(&self, selector: &str, now: Timestamp) -> Vec<String> {
        let end = now.as_second();
        let start = end.saturating_sub(i64::try_from(self.range_seconds).unwrap_or(i64::MAX));
        let step = i64::try_from(self.step_seconds).unwrap_or(60);
        let chunk = step.saturating_mul(i64::try_from(POINTS_PER_REQUEST).unwrap_or(10_000));
        let query = percent_encode(selector);
        let mut out = Vec::new();
        let mut from = start;
        while from < end {
            let to = (from + chunk).min(end);
            out.push(format!("{}/api/v1/query_range?query={query}&start={from}&end={to}&step={step}", self.base));
            from = to + step;
        }
        out
    }
}

/// RFC 3986 percent-encoding of everything but unreserved characters.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What a server's answer could not be read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseError(pub String);

impl std::fmt::Display for ResponseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ResponseError {}

#[derive(Deserialize)]
struct Response {
    status: String,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    data: Option<Data>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    result_type: String,
    result: Vec<Series>,
}

#[derive(Deserialize)]
struct Series {
    metric: BTreeMap<String, String>,
    values: Vec<(f64, String)>,
}

/// The identity of a run: its step's labels and its end (µs).
type RunId = (Vec<(String, String)>, i64);

/// Runs gathered from one or more answers, each run once.
#[derive(Debug, Default)]
pub struct Runs {
    runs: BTreeMap<RunId, (BTreeMap<String, f64>, Machine)>,
}

impl Runs {
    /// Reads one `query_range` answer (`body`) into the runs.
    ///
    /// # Errors
    /// A body that is not the API's JSON, an error status, or a result
    /// that is not a matrix.
    pub fn add_response(&mut self, body: &[u8]) -> Result<(), ResponseError> {
        let response: Response = serde_json::from_slice(body).map_err(|e| {
            let head = String::from_utf8_lossy(&body[..body.len().min(80)]).replace('\n', " ");
            ResponseError(format!("not a Prometheus API answer ({e}): {head:?}"))
        })?;
        if response.status != "success" {
            return Err(ResponseError(format!(
                "the server says {}: {}",
                response.status,
                response.error.unwrap_or_default()
            )));
        }
        let data = response.data.ok_or_else(|| ResponseError("a success without data".into()))?;
        if data.result_type != "matrix" {
            return Err(ResponseError(format!("expected a matrix, got a {}", data.result_type)));
        }
        // Per exporter group (every label but the family's own), the end
        // time at each evaluation time.
        let group = |m: &BTreeMap<String, String>| -> Vec<(String, String)> {
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "__name__" | "resource" | "kind" | MACHINE))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let mut ends: BTreeMap<(Vec<(String, String)>, u64), i64> = BTreeMap::new();
        for s in data.result.iter().filter(|s| s.metric.get("__name__").map(String::as_str) == Some(END)) {
            let g = group(&s.metric);
            for (t, v) in &s.values {
                let end: f64 = v.parse().map_err(|_| ResponseError(format!("{END}: `{v}` is not a number")))?;
                #[allow(clippy::cast_possible_truncation)]
                ends.insert((g.clone(), t.to_bits()), (end * 1e6).round() as i64);
            }
        }
        for s in &data.result {
            let name = s.metric.get("__name__").map_or("", String::as_str);
            if name == END {
                continue;
            }
            let g = group(&s.metric);
            let identity: Vec<(String, String)> =
                s.metric.iter().filter(|(k, _)| is_identity(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
            for (t, v) in &s.values {
                // A sample without an end time at the same evaluation time
                // (an export older than the gauge) cannot be told apart.
                let Some(end) = ends.get(&(g.clone(), t.to_bits())) else { continue };
                let value: f64 = v.parse().map_err(|_| ResponseError(format!("{name}: `{v}` is not a number")))?;
                let (measures, machine) =
                    self.runs.entry((identity.clone(), *end)).or_insert_with(|| (BTreeMap::new(), Machine::Unknown));
                if name == MACHINE {
                    if value == 1.0 {
                        match s.metric.get(MACHINE).map(String::as_str) {
                            Some("busy") => *machine = Machine::Busy,
                            Some("quiet") => *machine = Machine::Quiet,
                            _ => {}
                        }
                    }
                    continue;
                }
                let resource = s.metric.get("resource").map(String::as_str);
                if s.metric.get("kind").is_some_and(|k| k != "some") {
                    continue;
                }
                for (_, metric, _) in SAMPLES.iter().filter(|(n, _, r)| *n == name && (r.is_none() || *r == resource)) {
                    // IO is read + write: two samples of one run add up
                    // once each (the first evaluation time that saw the run).
                    let slot = format!("{metric}\u{0}{name}");
                    measures.entry(slot).or_insert(value);
                }
            }
        }
        Ok(())
    }

    /// The runs, oldest first, each as a record of `key` (when given: a
    /// `check` compares them with a run of that key) or of its own labels.
    #[must_use]
    pub fn records(&self, key: Option<&RunKey>) -> Vec<RunRecord> {
        let mut out: Vec<RunRecord> = self
            .runs
            .iter()
            .filter_map(|((identity, end), (slots, machine))| {
                let mut measures: Vec<Measure> = Vec::new();
                for (slot, value) in slots {
                    let metric = slot.split('\u{0}').next().unwrap_or_default();
                    match measures.iter_mut().find(|m| m.metric == metric) {
                        Some(m) => m.value += value,
                        None => measures.push(Measure { metric: metric.to_owned(), value: *value }),
                    }
                }
                let time = Timestamp::from_microsecond(*end).ok()?;
                let key = key.cloned().unwrap_or_else(|| RunKey {
                    step: identity.iter().find(|(k, _)| k == "step").map(|(_, v)| v.clone()).unwrap_or_default(),
                    labels: identity.iter().filter(|(k, _)| k != "step").cloned().collect(),
                    ..RunKey::default()
                });
                let labels = identity.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
                Some(RunRecord {
                    key,
                    branch: None,
                    time,
                    commit: None,
                    machine: *machine,
                    measures,
                    content_key: format!("prometheus:{end}:{labels}"),
                })
            })
            .collect();
        out.sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.content_key.cmp(&b.content_key)));
        out
    }
}

//! The OpenMetrics export read back by a real consumer: every exposition is
//! piped through `check_openmetrics.py`, which parses it with
//! `prometheus_client.openmetrics.parser.text_string_to_metric_families`
//! (plus the checks that parser leaves out), and the parsed values are
//! compared with the steps' summaries and verdicts.
//!
//! Python with `prometheus_client` (Debian: `python3-prometheus-client`) is
//! looked for as `$STEPMON_PYTHON`, `python3`, then `/usr/bin/python3` (a
//! pyenv `python3` on PATH may lack Debian's packages). Without it the tests
//! print `SKIPPED: ...` to stderr and pass — unless
//! `STEPMON_REQUIRE_LIVE=1`, when they fail.

mod common;

use std::collections::BTreeMap;

use serde::Deserialize;
use stepmon_export::openmetrics;
use stepmon_report::Step;

const CHECKER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/check_openmetrics.py");

/// A Python that can import the parser, or `None` (after printing why)
/// when the tests are to be skipped.
fn python() -> Option<String> {
    common::openmetrics_python_or_skip("openmetrics")
}

#[derive(Debug, Deserialize)]
struct Parsed {
    families: Vec<Family>,
}

#[derive(Debug, Deserialize)]
struct Family {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    unit: String,
    help: String,
    samples: Vec<Sample>,
}

#[derive(Debug, Deserialize)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    /// The value as Python's `repr` wrote it: parsed here with `str::parse`,
    /// which rounds correctly (serde_json's default float reader may be off
    /// by one ulp).
    #[serde(deserialize_with = "text_number")]
    value: f64,
}

fn text_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}

/// Runs the checker on `text`: `Ok(parsed)` or `Err(its stderr)`.
fn run_checker(python: &str, text: &str) -> Result<Parsed, String> {
    let (ok, stdout, stderr) = common::pipe(python, &[CHECKER], text);
    if ok { Ok(serde_json::from_slice(&stdout).unwrap()) } else { Err(format!("the checker failed: {stderr}")) }
}

fn parse(python: &str, text: &str) -> Parsed {
    let parsed =
        run_checker(python, text).unwrap_or_else(|e| panic!("the parser rejected the exposition: {e}\n{text}"));
    let samples: usize = parsed.families.iter().map(|f| f.samples.len()).sum();
    eprintln!("prometheus_client parsed {} families, {samples} samples", parsed.families.len());
    parsed
}

impl Parsed {
    fn family(&self, name: &str) -> Option<&Family> {
        self.families.iter().find(|f| f.name == name)
    }

    /// The values of `sample` whose labels include `labels`.
    fn values(&self, sample: &str, labels: &[(&str, &str)]) -> Vec<f64> {
        self.families
            .iter()
            .flat_map(|f| &f.samples)
            .filter(|s| s.name == sample && labels.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(v)))
            .map(|s| s.value)
            .collect()
    }

    /// The one value of `sample` for step `index`, `None` when absent.
    fn value(&self, sample: &str, index: usize, labels: &[(&str, &str)]) -> Option<f64> {
        let index = index.to_string();
        let mut all = vec![("index", index.as_str())];
        all.extend_from_slice(labels);
        let values = self.values(sample, &all);
        assert!(values.len() <= 1, "{sample} {all:?}: {values:?}");
        values.first().copied()
    }

    /// The true state of stateset `family` for step `index`.
    fn state(&self, family: &str, index: usize) -> String {
        let f = self.family(family).unwrap_or_else(|| panic!("no {family}"));
        let index = index.to_string();
        let true_states: Vec<&str> = f
            .samples
            .iter()
            .filter(|s| s.labels["index"] == index && s.value == 1.0)
            .map(|s| s.labels[family].as_str())
            .collect();
        assert_eq!(true_states.len(), 1, "{family}: {true_states:?}");
        true_states[0].to_owned()
    }
}

#[allow(clippy::cast_precision_loss)]
fn as_f64(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}

fn camel(value: impl serde::Serialize) -> String {
    serde_json::to_value(value).unwrap().as_str().unwrap().to_owned()
}

/// What every step's samples must say, from its summary and verdicts.
fn assert_matches_step(parsed: &Parsed, index: usize, step: &Step) {
    let s = &step.summary;
    let v = step.verdicts();
    #[allow(clippy::cast_precision_loss)]
    let end = step.end.map(|t| t.as_microsecond() as f64 / 1e6);
    let float_checks: [(&str, Option<f64>); 15] = [
        ("stepmon_step_wall_seconds", step.wall_seconds),
        ("stepmon_step_end_timestamp_seconds", end),
        ("stepmon_step_cpu_user_seconds_total", s.cpu.user_seconds),
        ("stepmon_step_cpu_system_seconds_total", s.cpu.system_seconds),
        ("stepmon_step_cpu_usage_seconds_total", s.cpu.usage_seconds),
        ("stepmon_step_cpu_average_cores", s.cpu.average_cores),
        ("stepmon_step_cpu_throttled_seconds_total", s.cpu.throttled_seconds),
        ("stepmon_step_cpu_limit_cores", v.throttling.limit_cores),
        ("stepmon_step_machine_cpu_busy_ratio", s.machine.cpu_busy_share),
        ("stepmon_step_machine_cpu_others_busy_ratio", s.machine.others_busy_share),
        ("stepmon_step_machine_cpu_steal_ratio", s.machine.steal_share),
        ("stepmon_step_machine_cpu_stall_ratio", v.machine.machine_cpu_stall_share),
        ("stepmon_step_collector_cpu_seconds_total", step.run.as_ref().and_then(|r| r.collector.cpu_seconds)),
        ("stepmon_step_exit_code", step.run.as_ref().and_then(|r| r.exit_code).map(f64::from)),
        ("stepmon_step_throttled", v.throttling.throttled.map(|t| if t { 1.0 } else { 0.0 })),
    ];
    let int_checks: [(&str, Option<u64>); 14] = [
        ("stepmon_step_cpu_throttled_periods_total", s.cpu.throttled_periods.map(u64::from)),
        ("stepmon_step_memory_peak_bytes", s.memory.peak_bytes),
        ("stepmon_step_memory_anon_at_peak_bytes", s.memory.anon_at_peak_bytes),
        ("stepmon_step_memory_file_at_peak_bytes", s.memory.file_at_peak_bytes),
        ("stepmon_step_memory_limit_bytes", v.memory.limit_bytes),
        ("stepmon_step_oom_kills_total", s.memory.oom_kills),
        ("stepmon_step_oom_group_kills_total", s.memory.oom_group_kills),
        ("stepmon_step_memory_max_hits_total", s.memory.max_hits),
        ("stepmon_step_memory_high_hits_total", s.memory.high_hits),
        ("stepmon_step_io_read_bytes_total", s.io.read_bytes),
        ("stepmon_step_io_write_bytes_total", s.io.write_bytes),
        ("stepmon_step_pids_peak", s.pids_peak),
        ("stepmon_step_network_receive_bytes_total", s.net_rx_bytes),
        ("stepmon_step_network_transmit_bytes_total", s.net_tx_bytes),
    ];
    let checks = float_checks.into_iter().chain(int_checks.into_iter().map(|(n, v)| (n, as_f64(v))));
    // Known values come back exactly (shortest round-trip floats); unknown
    // ones have no sample at all (never a 0).
    for (sample, expected) in checks {
        assert_eq!(parsed.value(sample, index, &[]), expected, "{sample} of step {index} ({})", step.name);
    }
    for (resource, stall) in [("cpu", &s.cpu_stall), ("memory", &s.memory_stall), ("io", &s.io_stall)] {
        let r = ("resource", resource);
        let seconds = "stepmon_step_pressure_stall_seconds_total";
        assert_eq!(parsed.value(seconds, index, &[r, ("kind", "some")]), stall.some_seconds, "{resource}");
        assert_eq!(parsed.value(seconds, index, &[r, ("kind", "full")]), stall.full_seconds, "{resource}");
        assert_eq!(parsed.value("stepmon_step_pressure_stall_ratio", index, &[r]), stall.some_share, "{resource}");
    }
    assert_eq!(parsed.state("stepmon_step_bottleneck", index), camel(v.bottleneck.class));
    assert_eq!(parsed.state("stepmon_step_memory_outcome", index), camel(v.memory.class));
    assert_eq!(parsed.state("stepmon_step_machine_load", index), camel(v.machine.class));
    let info = parsed.family("stepmon_step").unwrap();
    assert_eq!(info.kind, "info");
    let info = info.samples.iter().find(|s| s.labels["index"] == index.to_string()).unwrap();
    assert_eq!(info.name, "stepmon_step_info");
    assert_eq!(info.labels["step"], step.name);
    let exit = step.run.as_ref().and_then(|r| r.exit_code).map_or_else(String::new, |c| c.to_string());
    assert_eq!(info.labels["exit_code"], exit);
    assert_eq!(info.labels["wall_source"], camel(step.wall_source));
}

fn assert_well_formed(parsed: &Parsed, steps: usize) {
    for family in &parsed.families {
        assert!(!family.help.is_empty(), "{}", family.name);
        if !family.unit.is_empty() {
            assert!(family.name.ends_with(&format!("_{}", family.unit)), "{}", family.name);
        }
        for sample in &family.samples {
            let index: usize = sample.labels["index"].parse().unwrap();
            assert!(index < steps);
            assert!(sample.labels.contains_key("step") && sample.labels.contains_key("origin"));
        }
    }
}

#[test]
fn every_recorded_run_parses_and_matches_its_summary() {
    let Some(python) = python() else { return };
    for (file, step) in common::runs::runs() {
        let text = openmetrics::render(std::slice::from_ref(&step));
        let parsed = parse(&python, &text);
        eprintln!("{file}: {}", parsed.families.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(" "));
        assert_well_formed(&parsed, 1);
        assert_matches_step(&parsed, 0, &step);
    }
}

#[test]
fn pure_v2_run_with_oom_kill_throttling_and_io() {
    let Some(python) = python() else { return };
    let step = common::runs::load("pure-v2-6.1-oom-throttled-io.json");
    let text = openmetrics::render(std::slice::from_ref(&step));
    let parsed = parse(&python, &text);
    let excerpt: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("oom_kills") || l.contains("throttled_seconds") || l.contains("EOF"))
        .collect();
    eprintln!("excerpt:\n{}", excerpt.join("\n"));
    // The numbers of the recorded run (its JSON's stepmon.summary).
    assert_eq!(parsed.value("stepmon_step_oom_kills_total", 0, &[]), Some(1.0));
    assert_eq!(parsed.value("stepmon_step_memory_max_hits_total", 0, &[]), Some(35.0));
    assert_eq!(parsed.value("stepmon_step_cpu_usage_seconds_total", 0, &[]), Some(2.502193));
    assert_eq!(parsed.value("stepmon_step_cpu_throttled_seconds_total", 0, &[]), Some(3.132274));
    assert_eq!(parsed.value("stepmon_step_cpu_throttled_periods_total", 0, &[]), Some(48.0));
    assert_eq!(parsed.value("stepmon_step_memory_peak_bytes", 0, &[]), Some(50_331_648.0));
    assert_eq!(parsed.value("stepmon_step_memory_limit_bytes", 0, &[]), Some(50_331_648.0));
    assert_eq!(parsed.value("stepmon_step_io_write_bytes_total", 0, &[]), Some(16_777_216.0));
    assert_eq!(parsed.value("stepmon_step_pids_peak", 0, &[]), Some(11.0));
    assert_eq!(parsed.state("stepmon_step_memory_outcome", 0), "oomKilled");
    assert_eq!(parsed.family("stepmon_step_oom_kills").unwrap().kind, "counter");
    assert_eq!(parsed.family("stepmon_step_cpu_usage_seconds").unwrap().unit, "seconds");
    // Not measured in a VM without network isolation: no sample, not 0.
    assert!(parsed.family("stepmon_step_network_receive_bytes").is_none());
}

#[test]
fn hybrid_runs_leave_out_what_was_not_measured() {
    let Some(python) = python() else { return };
    let step = common::runs::load("hybrid-exit7.json");
    let parsed = parse(&python, &openmetrics::render(std::slice::from_ref(&step)));
    assert_eq!(parsed.value("stepmon_step_exit_code", 0, &[]), Some(7.0));
    // The memory controller is on cgroup v1 on that host: no memory numbers.
    assert!(step.summary.memory.peak_bytes.is_none());
    for family in ["stepmon_step_memory_peak_bytes", "stepmon_step_oom_kills", "stepmon_step_cpu_throttled_seconds"] {
        assert!(parsed.family(family).is_none(), "{family}");
    }
    assert_eq!(parsed.state("stepmon_step_memory_outcome", 0), "unknown");
    let net = common::runs::load("hybrid-net-isolated.json");
    let parsed = parse(&python, &openmetrics::render(std::slice::from_ref(&net)));
    assert_eq!(parsed.value("stepmon_step_network_receive_bytes_total", 0, &[]), Some(16_803_436.0));
    assert_eq!(parsed.value("stepmon_step_network_transmit_bytes_total", 0, &[]), Some(16_803_436.0));
}

/// A BuildKit build of three steps: two recorded runs and one BuildKit step
/// made of the pure-v2 run's samples.
fn build() -> Vec<Step> {
    let text = std::fs::read_to_string(common::runs::runs_dir().join("pure-v2-6.1-oom-throttled-io.json")).unwrap();
    let document: stepmon_model::document::RunDocument = serde_json::from_str(&text).unwrap();
    let buildkit = Step::from_buildkit(
        "RUN make \"all\"".to_owned(),
        "step3".to_owned(),
        Some("sha256:0123abcd".to_owned()),
        document.usage(),
    );
    vec![common::runs::load("hybrid-cpu-3s.json"), common::runs::load("hybrid-exit7.json"), buildkit]
}

#[test]
fn several_steps_in_one_exposition() {
    let Some(python) = python() else { return };
    let steps = build();
    let text = openmetrics::render(&steps);
    let parsed = parse(&python, &text);
    assert_well_formed(&parsed, steps.len());
    for (index, step) in steps.iter().enumerate() {
        assert_matches_step(&parsed, index, step);
    }
    // One sample per step in a per-step family, each family once.
    assert_eq!(parsed.values("stepmon_step_cpu_usage_seconds_total", &[]).len(), 3);
    let info = &parsed.family("stepmon_step").unwrap().samples[2];
    assert_eq!(info.labels["origin"], "buildKit");
    assert_eq!(info.labels["step_id"], "step3");
    assert_eq!(info.labels["digest"], "sha256:0123abcd");
    assert_eq!(info.labels["step"], "RUN make \"all\"");
    // A BuildKit step has no exit code and no collector.
    assert_eq!(parsed.value("stepmon_step_exit_code", 2, &[]), None);
    assert_eq!(parsed.value("stepmon_step_collector_cpu_seconds_total", 2, &[]), None);
    // Families are contiguous: each TYPE line appears once.
    let types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE ")).collect();
    let mut unique = types.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(types.len(), unique.len());
}

#[test]
fn step_names_are_escaped() {
    let names = [
        "sh -c 'echo \"quoted\" \\ back\\slash'",
        "two\nlines",
        "unicode ✓ ü 日本 \u{1F680}",
        "tab\tand\u{7f}delete",
        "",
        "trailing backslash \\",
    ];
    let steps: Vec<Step> = names
        .iter()
        .map(|name| {
            let mut step = common::runs::load("hybrid-exit7.json");
            step.name = (*name).to_owned();
            step
        })
        .collect();
    let text = openmetrics::render(&steps);
    // No raw line feed inside a sample line: every line is metadata, a
    // sample, or the EOF.
    for line in text.lines() {
        assert!(line.starts_with("# ") || line.starts_with("stepmon_"), "{line:?}");
    }
    assert!(text.contains(r#"step="sh -c 'echo \"quoted\" \\ back\\slash'""#));
    assert!(text.contains(r#"step="two\nlines""#));
    let Some(python) = python() else { return };
    let parsed = parse(&python, &text);
    let info = &parsed.family("stepmon_step").unwrap().samples;
    let parsed_names: Vec<&str> = info.iter().map(|s| s.labels["step"].as_str()).collect();
    assert_eq!(parsed_names, names);
}

#[test]
fn two_steps_of_the_same_name_stay_distinct() {
    let Some(python) = python() else { return };
    let steps = vec![common::runs::load("hybrid-exit7.json"), common::runs::load("hybrid-exit7.json")];
    let parsed = parse(&python, &openmetrics::render(&steps));
    assert_eq!(parsed.values("stepmon_step_exit_code", &[]), [7.0, 7.0]);
}

/// The checker is no rubber stamp: it rejects what the spec forbids.
#[test]
fn the_checker_rejects_invalid_expositions() {
    let Some(python) = python() else { return };
    let good = "# TYPE a gauge\n# HELP a x\na 1\n# EOF\n";
    assert!(run_checker(&python, good).is_ok());
    let bad = [
        ("no EOF", "# TYPE a gauge\n# HELP a x\na 1\n"),
        ("line after EOF", "# TYPE a gauge\n# HELP a x\na 1\n# EOF\na 2\n"),
        ("NaN counter", "# TYPE a counter\n# HELP a x\na_total NaN\n# EOF\n"),
        ("unit not a suffix", "# TYPE a counter\n# UNIT a seconds\n# HELP a x\na_total 1\n# EOF\n"),
        ("unescaped quote", "# TYPE a gauge\n# HELP a x\na{s=\"x\"y\"} 1\n# EOF\n"),
        (
            "family twice",
            "# TYPE a gauge\n# HELP a x\na 1\n# TYPE b gauge\n# HELP b x\nb 1\n# TYPE a gauge\n# HELP a x\n# EOF\n",
        ),
        ("no HELP", "# TYPE a gauge\na 1\n# EOF\n"),
        ("two true states", "# TYPE s stateset\n# HELP s x\ns{s=\"a\"} 1\ns{s=\"b\"} 1\n# EOF\n"),
        ("duplicate label set", "# TYPE a gauge\n# HELP a x\na{l=\"1\"} 1\na{l=\"1\"} 2\n# EOF\n"),
    ];
    for (why, text) in bad {
        assert!(run_checker(&python, text).is_err(), "accepted: {why}");
    }
}

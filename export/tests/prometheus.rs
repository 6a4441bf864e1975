//! The Prometheus text format 0.0.4 export checked by real consumers:
//! `promtool check metrics` (Prometheus' own parser and linter) must exit 0
//! and print nothing on every exposition, and `prometheus_client`'s 0.0.4
//! parser must read the hostile step names and labels back as written.
//! The samples must be exactly the OpenMetrics export's (one family table).
//!
//! `promtool` (Debian: `prometheus`) is looked for as `$STEPMON_PROMTOOL`,
//! then `promtool`; Python as in `tests/openmetrics.rs`. Without them the
//! tests print `SKIPPED <test>: <why>` and pass, unless
//! `STEPMON_REQUIRE_LIVE=1`, when they fail.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};

use stepmon_export::{openmetrics, prometheus};
use stepmon_model::document::RunDocument;
use stepmon_model::labels::{CiContext, Label};
use stepmon_report::Step;

use common::skip::skip;

fn promtool(test: &str) -> Option<String> {
    let candidates = std::env::var("STEPMON_PROMTOOL").into_iter().chain(["promtool".to_owned()]);
    for tool in candidates {
        if Command::new(&tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok() {
            return Some(tool);
        }
    }
    skip(test, "no promtool (tried $STEPMON_PROMTOOL, promtool; Debian: apt install prometheus)");
    None
}

fn python(test: &str) -> Option<String> {
    if let Some(python) = common::python_with("prometheus_client.parser") {
        return Some(python);
    }
    skip(test, "no python3 with prometheus_client.parser (Debian: apt install python3-prometheus-client)");
    None
}

/// Feeds `text` to `program args` on stdin: (success, stdout, stderr).
fn pipe(program: &str, args: &[&str], text: &str) -> (bool, String, String) {
    let (ok, out, err) = common::pipe(program, args, text);
    (ok, String::from_utf8_lossy(&out).into(), err)
}

/// `promtool check metrics` accepts `text` without a word (no lint either).
fn assert_promtool_clean(tool: &str, text: &str) {
    let (ok, stdout, stderr) = pipe(tool, &["check", "metrics"], text);
    assert!(ok && stdout.is_empty() && stderr.is_empty(), "promtool: ok={ok}\n{stdout}{stderr}\n--- input:\n{text}");
}

/// Names and values no exposition may garble.
const HOSTILE: [&str; 6] =
    ["say \"hi\"", "C:\\build\\out\\", "line one\nline two", "tab\tcr\r end", "ünïcödé ✓ 构建 🚀", "} x=\"y\" {"];

/// The recorded run `stem` with a name, labels and a CI context.
fn named(stem: &str, name: &str, labels: &[(&str, &str)], ci: Option<CiContext>) -> Step {
    let text = std::fs::read_to_string(common::runs::runs_dir().join(format!("{stem}.json"))).unwrap();
    let mut document: RunDocument = serde_json::from_str(&text).unwrap();
    let run = document.stepmon.as_mut().expect("a stepmon run");
    run.name = Some(name.to_owned());
    run.labels = labels.iter().map(|(k, v)| Label::new(*k, *v)).collect();
    run.ci = ci;
    Step::from_run(&document)
}

fn hostile_ci(value: &str) -> CiContext {
    CiContext::from_env(|k| match k {
        "GITLAB_CI" => Some("true".to_owned()),
        "CI_PROJECT_PATH" | "CI_JOB_NAME" | "CI_RUNNER_DESCRIPTION" | "CI_PIPELINE_ID" => Some(value.to_owned()),
        _ => None,
    })
    .unwrap()
}

/// Every exposition the tests check: each recorded run alone, all of them
/// in one report, and each hostile text as a name, a label value and CI
/// context, plus a hand-edited document whose labels are unusable.
fn expositions() -> Vec<(String, Vec<Step>)> {
    let runs = common::runs::runs();
    let mut out: Vec<(String, Vec<Step>)> =
        runs.iter().map(|(stem, step)| (stem.clone(), vec![step.clone()])).collect();
    out.push(("all runs".to_owned(), runs.iter().map(|(_, s)| s.clone()).collect()));
    let stem = &runs[0].0;
    for text in HOSTILE {
        out.push((
            format!("hostile {text:?}"),
            vec![named(stem, text, &[("team", text), ("k", "v")], Some(hostile_ci(text)))],
        ));
    }
    // Keys `--label` refuses, as a hand-edited document may hold them: the
    // encoder drops them (a repeated key keeps its first value).
    let bad = [("step", "x"), ("bad-key", "x"), ("__name__", "x"), ("team", "a"), ("team", "b"), ("", "x")];
    out.push(("unusable label keys".to_owned(), vec![named(stem, "build", &bad, None)]));
    out
}

#[test]
fn promtool_accepts_every_exposition() {
    let Some(tool) = promtool("promtool_accepts_every_exposition") else { return };
    for (what, steps) in expositions() {
        let text = prometheus::render(&steps);
        assert!(!text.is_empty(), "{what}");
        assert_promtool_clean(&tool, &text);
    }
}

/// What the old export had wrong, so that promtool would have failed it:
/// OpenMetrics is not 0.0.4 (this checks the check).
#[test]
fn promtool_rejects_openmetrics() {
    let Some(tool) = promtool("promtool_rejects_openmetrics") else { return };
    let (_, step) = common::runs::runs().remove(0);
    let (ok, stdout, stderr) = pipe(&tool, &["check", "metrics"], &openmetrics::render(&[step]));
    assert!(!ok || !stdout.is_empty() || !stderr.is_empty(), "promtool accepted OpenMetrics info/stateset");
}

#[test]
fn framing_is_0_0_4() {
    for (what, steps) in expositions() {
        let text = prometheus::render(&steps);
        assert!(!text.contains("# EOF") && !text.contains("# UNIT"), "{what}");
        let mut typed = BTreeSet::new();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let Some(help) = line.strip_prefix("# HELP ") else {
                assert!(!line.starts_with('#'), "{what}: a comment outside HELP/TYPE pairs: {line}");
                continue;
            };
            let name = help.split(' ').next().unwrap();
            let type_line = lines.next().unwrap_or_default();
            let kind = type_line.strip_prefix(&format!("# TYPE {name} ")).unwrap_or_else(|| panic!("{type_line}"));
            assert!(matches!(kind, "counter" | "gauge"), "{what}: {name} {kind}");
            assert_eq!(kind == "counter", name.ends_with("_total"), "{what}: {name} {kind}");
            assert!(typed.insert(name.to_owned()), "{what}: {name} typed twice");
            // Every sample up to the next HELP is this family's, no timestamp.
            while let Some(sample) = lines.next_if(|l| !l.starts_with('#')) {
                assert!(sample.starts_with(&format!("{name}{{")), "{what}: {sample} under {name}");
                let value = sample.rsplit(' ').next().unwrap();
                assert!(value.parse::<f64>().is_ok_and(f64::is_finite), "{what}: {sample}");
                assert!(!sample.contains('\n'));
            }
        }
        assert!(typed.contains("stepmon_step_info") && typed.contains("stepmon_step_bottleneck"), "{what}");
    }
}

/// One family table: every sample line of the OpenMetrics export is in the
/// Prometheus export and the other way round.
#[test]
fn same_samples_as_openmetrics() {
    let samples = |text: &str| -> Vec<String> {
        text.lines().filter(|l| !l.starts_with('#')).map(str::to_owned).collect::<Vec<_>>()
    };
    for (what, steps) in expositions() {
        let (om, prom) = (openmetrics::render(&steps), prometheus::render(&steps));
        assert_eq!(samples(&om), samples(&prom), "{what}");
    }
}

#[test]
fn step_label_is_the_name_and_labels_follow() {
    let step = named("hybrid-exit7", "unit tests", &[("team", "infra"), ("tier", "2")], None);
    let text = prometheus::render(&[step]);
    let line = text.lines().find(|l| l.starts_with("stepmon_step_exit_code{")).unwrap();
    assert_eq!(
        line,
        r#"stepmon_step_exit_code{step="unit tests",origin="stepmonRun",index="0",team="infra",tier="2"} 7"#
    );
    // The command line is no label anywhere.
    assert!(!text.contains("exit 7"), "{text}");
}

#[test]
fn ci_context_labels_and_no_run_ids() {
    let ci = CiContext::from_env(|k| {
        Some(
            match k {
                "GITHUB_ACTIONS" => "true",
                "GITHUB_REPOSITORY" => "acme/app",
                "GITHUB_WORKFLOW" => "ci",
                "GITHUB_JOB" => "test",
                "RUNNER_NAME" => "runner-7",
                "GITHUB_RUN_ID" => "987654321",
                "GITHUB_RUN_ATTEMPT" => "3",
                _ => return None,
            }
            .to_owned(),
        )
    });
    let step = named("hybrid-exit7", "test", &[], ci);
    let text = prometheus::render(std::slice::from_ref(&step));
    let line = text.lines().find(|l| l.starts_with("stepmon_step_exit_code{")).unwrap();
    assert_eq!(
        line,
        r#"stepmon_step_exit_code{step="test",origin="stepmonRun",index="0",ci_pipeline="acme/app/ci",ci_job="test",ci_runner="runner-7"} 7"#
    );
    assert!(!text.contains("987654321") && !text.contains("attempt"), "run ids are not labels");
    // They are in the JSON and the trace.
    let json = serde_json::to_string(step.run.as_ref().unwrap()).unwrap();
    assert!(json.contains(r#""runId":"987654321""#) && json.contains(r#""attempt":"3""#), "{json}");
    let trace = stepmon_export::trace::render(&[step]);
    assert!(trace.contains("987654321") && trace.contains(r#""attempt":"3""#), "{trace}");
}

#[test]
fn statesets_are_gauges_with_one_true_state() {
    for (what, steps) in expositions() {
        let text = prometheus::render(&steps);
        for family in ["stepmon_step_bottleneck", "stepmon_step_memory_outcome", "stepmon_step_machine_load"] {
            let mut ones: BTreeMap<String, u32> = BTreeMap::new();
            for line in text.lines().filter(|l| l.starts_with(&format!("{family}{{"))) {
                let index = line.split("index=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
                let value = line.rsplit(' ').next().unwrap();
                assert!(value == "0" || value == "1", "{what}: {line}");
                *ones.entry(index).or_default() += u32::from(value == "1");
            }
            assert_eq!(ones.len(), steps.len(), "{what}: {family}");
            assert!(ones.values().all(|n| *n == 1), "{what}: {family} {ones:?}");
        }
    }
}

/// `prometheus_client`'s 0.0.4 parser reads the hostile names and label
/// values back as they were (the escaping is the format's, not ours).
#[test]
fn hostile_text_reads_back() {
    let Some(python) = python("hostile_text_reads_back") else { return };
    let script = "import sys, json\n\
                  from prometheus_client.parser import text_string_to_metric_families as parse\n\
                  out = [[s.name, s.labels, s.value] for f in parse(sys.stdin.read()) for s in f.samples]\n\
                  json.dump(out, sys.stdout)\n";
    for text in HOSTILE {
        let step = named("hybrid-exit7", text, &[("team", text)], Some(hostile_ci(text)));
        let (ok, stdout, stderr) = pipe(&python, &["-c", script], &prometheus::render(&[step]));
        assert!(ok, "{text:?}: {stderr}");
        let samples: Vec<(String, BTreeMap<String, String>, f64)> = serde_json::from_str(&stdout).unwrap();
        let exit = samples.iter().find(|(name, ..)| name == "stepmon_step_exit_code").expect("exit code");
        for key in ["step", "team", "ci_pipeline", "ci_job", "ci_runner"] {
            assert_eq!(exit.1.get(key).map(String::as_str), Some(text), "{key} of {text:?}");
        }
        assert_eq!(exit.2, 7.0);
    }
}

/// The summary names the step and still shows the whole command; the JSON
/// report carries the labels.
#[test]
fn text_and_json_name_the_step() {
    let step = named("hybrid-exit7", "unit tests", &[("team", "infra")], None);
    let text = stepmon_report::text::render(&step, &step.verdicts());
    let first = text.lines().next().unwrap();
    let command = stepmon_report::step::quote_command(&step.run.as_ref().unwrap().command);
    assert!(first.starts_with(&format!("stepmon: 'unit tests' `{command}` [team=infra] exited 7")), "{first}");
    // The default name (the program's base name) is not repeated.
    let step = named("hybrid-exit7", "sh", &[], None);
    let text = stepmon_report::text::render(&step, &step.verdicts());
    assert!(text.starts_with(&format!("stepmon: `{command}` exited 7")), "{text}");
    let step = named("hybrid-exit7", "unit tests", &[("team", "infra")], None);
    let json = stepmon_export::render(stepmon_export::Format::Json, &[step]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["steps"][0]["name"], "unit tests");
    assert_eq!(value["steps"][0]["labels"], serde_json::json!([{"key": "team", "value": "infra"}]));
}

//! Bare provenance predicates without per-step usage, as Docker Engine's
//! built-in BuildKit writes them, made from the real ones in the two-platform
//! bundle (`tests/data/buildkit-history/`): its predicates with every
//! `resourceUsage` removed (SLSA v0.2 as recorded, and the same as SLSA v1),
//! and one with neither `resourceUsage` nor `sysUsage`. Each is a
//! build-level report: every exec step with its platform and Dockerfile
//! line, no per-step usage, the machine over the build.

mod common;

use common::bundle::{TWO_PLATFORM, data};
use serde_json::{Value, json};
use stepmon_export::Format;
use stepmon_import::history::{self, Layout, NO_STEP_USAGE, StepState, bundle};

const V02_METADATA: &str = "https://mobyproject.org/buildkit@v1#metadata";

/// The bundle's provenance predicates, as recorded (bare SLSA v0.2).
fn predicates() -> Vec<Value> {
    let layout = Layout::from_archive(&data(TWO_PLATFORM)).unwrap();
    let records = layout.records().unwrap();
    let found: Vec<Value> = records
        .iter()
        .flat_map(|r| r.layers.iter())
        .filter(|(d, _)| d.media_type == bundle::IN_TOTO)
        .map(|(_, bytes)| serde_json::from_slice::<Value>(bytes).unwrap())
        .filter(|v| v.get("buildConfig").is_some())
        .collect();
    assert_eq!(found.len(), 2, "one per platform");
    found
}

/// `predicate` without any step's `resourceUsage`.
fn without_usage(mut predicate: Value) -> Value {
    for step in predicate["buildConfig"]["llbDefinition"].as_array_mut().unwrap() {
        step.as_object_mut().unwrap().remove("resourceUsage");
    }
    predicate
}

/// The same predicate as SLSA v1 lays it out (moby/buildkit
/// `solver/llbsolver/provenance/types/types.go` `ProvenancePredicateSLSA1`).
fn as_slsa1(v02: &Value) -> Value {
    json!({
        "buildDefinition": {
            "buildType": "https://github.com/moby/buildkit/blob/master/docs/attestations/slsa-definitions.md",
            "externalParameters": {},
            "internalParameters": { "buildConfig": v02["buildConfig"] },
        },
        "runDetails": {
            "builder": { "id": "" },
            "metadata": {
                "invocationID": v02["metadata"]["buildInvocationID"],
                "startedOn": v02["metadata"]["buildStartedOn"],
                "finishedOn": v02["metadata"]["buildFinishedOn"],
                "buildkit_metadata": v02["metadata"][V02_METADATA],
            },
        },
    })
}

/// Every string in `value`.
fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(strings).collect(),
        Value::Object(o) => o.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

fn exec_commands(predicate: &Value) -> Vec<String> {
    let definition = predicate.pointer("/buildConfig/llbDefinition").unwrap().as_array().unwrap();
    definition
        .iter()
        .filter_map(|s| s.pointer("/op/Op/exec/meta/args"))
        .map(|a| {
            let args: Vec<String> = serde_json::from_value(a.clone()).unwrap();
            stepmon_report::step::quote_command(&args)
        })
        .collect()
}

#[test]
fn a_predicate_without_resource_usage_is_a_build_level_report() {
    for recorded in predicates() {
        let v02 = without_usage(recorded);
        let commands = exec_commands(&v02);
        assert!(!commands.is_empty());
        let mut no_sys = v02.clone();
        no_sys["metadata"][V02_METADATA].as_object_mut().unwrap().remove("sysUsage");
        for (what, predicate, machine) in
            [("v0.2", v02.clone(), true), ("v1", as_slsa1(&v02), true), ("v0.2 without sysUsage", no_sys, false)]
        {
            let bytes = serde_json::to_vec(&predicate).unwrap();
            // The per-step importer finds nothing to import...
            assert!(stepmon_import::read_value(&predicate).is_err(), "{what}");
            // ... and the build-level report lists every exec step.
            let build = history::of_predicate(&bytes).unwrap().unwrap_or_else(|| panic!("{what}: no build"));
            assert_eq!(build.steps.len(), commands.len(), "{what}");
            for (step, command) in build.steps.iter().zip(&commands) {
                assert_eq!(step.command.as_ref(), Some(command), "{what}");
                assert_eq!(step.state, StepState::Unrecorded, "{what}");
                assert!(step.usage.is_none(), "{what}");
                assert!(step.platform.as_deref().is_some_and(|p| p.starts_with("linux/")), "{what}: {step:?}");
                assert!(step.location.as_deref().is_some_and(|l| l.starts_with("Dockerfile:")), "{what}: {step:?}");
            }
            assert_eq!(!build.machine.is_empty(), machine, "{what}");
            assert!(build.created.is_some() && build.completed.is_some(), "{what}: the predicate's start and finish");
            let text = history::render_as(Format::Text, std::slice::from_ref(&build));
            assert!(text.contains(NO_STEP_USAGE), "{what}: {text}");
            // No "run with capture-usage=true": the document does not show it was off.
            assert!(!text.contains("capture-usage=true"), "{what}: {text}");
            assert_eq!(text.contains("over the build:"), machine, "{what}: {text}");
            for step in &build.steps {
                assert!(text.contains(step.location.as_deref().unwrap()), "{what}: {text}");
                assert!(text.contains(step.platform.as_deref().unwrap()), "{what}: {text}");
            }
            let json: Value = serde_json::from_str(&history::render_as(Format::Json, std::slice::from_ref(&build)))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let rendered = json.to_string();
            for format in [Format::Markdown, Format::Html] {
                let out = history::render_as(format, std::slice::from_ref(&build));
                for step in &build.steps {
                    assert!(out.contains(step.location.as_deref().unwrap()), "{what} {format:?}: {out}");
                }
            }
            let strings = strings(&json);
            for command in &commands {
                assert!(strings.contains(command), "{what}: {command}: {json}");
            }
            assert!(rendered.contains("\"unrecorded\""), "{what}: {json}");
        }
    }
}

#[test]
fn predicates_with_usage_or_without_steps_are_not_build_level_reports() {
    // With resourceUsage: the per-step importer reads it.
    for recorded in predicates() {
        assert!(history::of_predicate(&serde_json::to_vec(&recorded).unwrap()).unwrap().is_none());
    }
    // mode=min (no buildConfig): nothing to list.
    let min = json!({"buildType": "https://mobyproject.org/buildkit@v1", "metadata": {}});
    assert!(history::of_predicate(&serde_json::to_vec(&min).unwrap()).unwrap().is_none());
    // Not a predicate at all.
    assert!(history::of_predicate(b"{\"resourceUsage\": {}}").unwrap().is_none());
}

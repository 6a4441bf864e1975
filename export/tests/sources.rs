//! Runs measured without a cgroup of their own in every export: each
//! number's source (process tree, whole machine, enclosing cgroup, lower
//! bound) is said where the number is shown.

#[path = "../../report/tests/common/sources.rs"]
mod sources;

use serde_json::Value;
use sources::{CONTAINER, OWN_CGROUP, document, with_enclosing_memory};
use stepmon_export::{self as export, Format};
use stepmon_report::Step;

#[test]
fn every_export_carries_the_sources() {
    let step = Step::from_run(&document(CONTAINER));
    let steps = std::slice::from_ref(&step);
    let om = export::render(Format::OpenMetrics, steps);
    assert!(om.contains(r#"stepmon_step_source_info{"#), "{om}");
    assert!(om.lines().any(|l| l.contains(r#"group="cpu""#) && l.contains(r#"rung="processTree""#)), "{om}");
    let trace: Value = serde_json::from_str(&export::render(Format::Trace, steps)).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let slice = events.iter().find(|e| e["ph"] == "X").unwrap();
    assert_eq!(slice["args"]["sources"]["cpu"]["rung"], "processTree", "{slice}");
    for format in [Format::Markdown, Format::Html] {
        let out = export::render(format, steps);
        assert!(out.contains("(process tree)"), "{format:?}: {out}");
        assert!(out.contains("(whole machine)"), "{format:?}");
    }
    // A step in its own cgroup has no such labels.
    let own = Step::from_run(&document(OWN_CGROUP));
    assert!(!export::render(Format::Markdown, std::slice::from_ref(&own)).contains("(process tree)"));
}

#[test]
fn an_enclosing_memory_lower_bound_says_so_in_the_markdown() {
    const MIB: u64 = 1 << 20;
    // Only memory.current samples: the largest is a lower bound.
    let step = Step::from_run(&with_enclosing_memory(&[10 * MIB, 80 * MIB, 40 * MIB], None, None));
    let md = export::render(Format::Markdown, std::slice::from_ref(&step));
    assert!(md.contains("≥ 80.0 MiB (enclosing cgroup, lower bound)"), "{md}");
}

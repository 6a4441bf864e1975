//! A stall share is at most 1 in every chart series: PSI "some" time is
//! never more than the time that passed, and a reading over it (the
//! sample's time taken before its pressure files are read) is drawn at 1.

use serde_json::{Value, json};
use stepmon_model::document::RunDocument;
use stepmon_report::Step;
use stepmon_report::series::StepSeries;

fn recorded(name: &str) -> Value {
    let path = format!("{}/tests/data/runs/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn a_stall_reading_over_its_interval_is_drawn_at_one() {
    let mut document = recorded("pure-v2-6.1-oom-throttled-io.json");
    let samples = document["resourceUsage"]["samples"].as_array_mut().unwrap();
    assert!(samples.len() >= 3);
    // The last sample's CPU stall: an hour more than the one before it.
    let before = samples[samples.len() - 2]["cpuStat"]["pressure"]["some"]["total"].as_u64().unwrap();
    let last = samples.last_mut().unwrap();
    last["cpuStat"]["pressure"]["some"]["total"] = json!(before + 3_600_000_000);
    let document: RunDocument = serde_json::from_value(document).unwrap();
    let series = StepSeries::of(&Step::from_run(&document));
    let shares = &series.cpu_stall_share;
    assert!(shares.len() >= 2, "{shares:?}");
    assert_eq!(shares.last().map(|p| p.value), Some(1.0));
    assert!(shares.iter().all(|p| (0.0..=1.0).contains(&p.value)), "{shares:?}");
    // The others as recorded: some below 1.
    assert!(shares.iter().any(|p| p.value < 1.0), "{shares:?}");
}

//! Reading runs out of Prometheus API answers: one run seen at several
//! evaluation times is one run; IO is read + write; PSI `full` is not the
//! gate's stall; the machine-load stateset says busy; what is not the API's
//! JSON is an error, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_history::Machine;
use stepmon_history::prometheus::{Runs, Source};
use stepmon_testsupport::skip;

fn series(name: &str, extra: &str, values: &[(i64, &str)]) -> String {
    let values: Vec<String> = values.iter().map(|(t, v)| format!("[{t},\"{v}\"]")).collect();
    format!(
        r#"{{"metric":{{"__name__":"{name}","step":"build","team":"infra","index":"0","origin":"stepmonRun","instance":"pgw:9091","job":"stepmon"{extra}}},"values":[{}]}}"#,
        values.join(",")
    )
}

fn answer(series: &[String]) -> String {
    format!(r#"{{"status":"success","data":{{"resultType":"matrix","result":[{}]}}}}"#, series.join(","))
}

#[test]
fn a_run_seen_in_several_scrapes_is_one_run() {
    // Run A ended at 1000.5 and was seen at 1060 and 1120; run B ended at
    // 1150 and was seen at 1180 and 1240 (on a busy machine).
    let body = answer(&[
        series(
            "stepmon_step_end_timestamp_seconds",
            "",
            &[(1060, "1000.5"), (1120, "1000.5"), (1180, "1150"), (1240, "1150")],
        ),
        series("stepmon_step_memory_peak_bytes", "", &[(1060, "100"), (1120, "100"), (1180, "130"), (1240, "130")]),
        series("stepmon_step_io_read_bytes_total", "", &[(1060, "10"), (1120, "10"), (1180, "20"), (1240, "20")]),
        series("stepmon_step_io_write_bytes_total", "", &[(1060, "1"), (1120, "1"), (1180, "2"), (1240, "2")]),
        series("stepmon_step_pressure_stall_seconds_total", r#","resource":"io","kind":"some""#, &[(1060, "0.5")]),
        series("stepmon_step_pressure_stall_seconds_total", r#","resource":"io","kind":"full""#, &[(1060, "0.25")]),
        series("stepmon_step_machine_load", r#","stepmon_step_machine_load":"busy""#, &[(1060, "0"), (1180, "1")]),
        series("stepmon_step_machine_load", r#","stepmon_step_machine_load":"quiet""#, &[(1060, "1"), (1180, "0")]),
        // A sample at a time with no end time (an older export): left out.
        series("stepmon_step_wall_seconds", "", &[(999, "3")]),
    ]);
    let mut runs = Runs::default();
    runs.add_response(body.as_bytes()).unwrap();
    // The same answer again (an overlapping request): still two runs.
    runs.add_response(body.as_bytes()).unwrap();
    let records = runs.records(None);
    assert_eq!(records.len(), 2, "{records:?}");
    let (a, b) = (&records[0], &records[1]);
    assert_eq!(a.key.step, "build");
    assert_eq!(a.key.labels, [("team".to_owned(), "infra".to_owned())]);
    assert_eq!(a.time.as_millisecond(), 1_000_500);
    assert_eq!((a.machine, b.machine), (Machine::Quiet, Machine::Busy));
    assert_eq!(a.value("memory-peak-bytes"), Some(100.0));
    assert_eq!(b.value("memory-peak-bytes"), Some(130.0));
    assert_eq!((a.value("io-bytes"), b.value("io-bytes")), (Some(11.0), Some(22.0)));
    assert_eq!(a.value("io-stall-seconds"), Some(0.5));
    assert_eq!(a.value("wall-seconds"), None);
    assert!(a.commit.is_none() && a.content_key != b.content_key);
}

#[test]
fn what_is_not_the_apis_json_is_an_error() {
    let mut runs = Runs::default();
    for (body, says) in [
        ("<html>502 Bad Gateway</html>", "not a Prometheus API answer"),
        ("", "not a Prometheus API answer"),
        (r#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#, "parse error at char 3"),
        (r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#, "expected a matrix"),
        (
            r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"stepmon_step_end_timestamp_seconds"},"values":[[1,"x"]]}]}}"#,
            "is not a number",
        ),
    ] {
        let e = runs.add_response(body.as_bytes()).unwrap_err();
        assert!(e.to_string().contains(says), "{body}: {e}");
    }
}

#[test]
fn the_requests_cover_the_range_in_chunks_the_server_accepts() {
    let source = Source::of("prometheus+http://127.0.0.1:9090/prom/?range=30d&step=60s").unwrap().unwrap();
    assert_eq!(source.base, "http://127.0.0.1:9090/prom");
    let selector = Source::selector(Some("a \"b\""), &[("team".into(), "x\\y".into())]);
    assert!(selector.ends_with(r#",step="a \"b\"",team="x\\y"}"#), "{selector}");
    let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
    let urls = source.requests(&selector, now);
    // 30 days at 60 s: 43,200 points, 10,000 a request.
    assert_eq!(urls.len(), 5, "{urls:?}");
    assert!(urls[0].starts_with("http://127.0.0.1:9090/prom/api/v1/query_range?query=%7B__name__%3D~"));
    assert!(urls[0].contains(&format!("&start={}&", 1_800_000_000 - 30 * 86_400)));
    assert!(urls[4].contains("&end=1800000000&step=60"));
    for bad in [
        "prometheus+ftp://x",
        "prometheus+http://x?range=3y",
        "prometheus+http://x?foo=1",
        "prometheus+http://x?step=0s",
    ] {
        assert!(Source::of(bad).unwrap().is_err(), "{bad}");
    }
}

/// The export of a recorded run, served back as a Prometheus answer, reads
/// as the very measures the history file would store of that run (but the
/// per-command ones, which are not exported): the reader's sample names and
/// the export's families cannot drift apart.
#[test]
fn an_exported_run_reads_back_as_the_stores_measures() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../report/tests/data/runs/pure-v2-6.1-oom-throttled-io.json");
    // stepmon-report's recorded run is not in this crate's package: the test
    // runs in the workspace and says so where it cannot (an unpacked .crate).
    if !std::path::Path::new(path).is_file() {
        let why = format_args!("{path} is stepmon-report's test data, in the workspace only");
        skip::skip("an_exported_run_reads_back_as_the_stores_measures", why);
        return;
    }
    let document: stepmon_model::document::RunDocument =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let step = stepmon_report::Step::from_run(&document);
    let exposition = stepmon_export::openmetrics::render(std::slice::from_ref(&step));
    let mut series = Vec::new();
    for line in exposition.lines().filter(|l| !l.starts_with('#')) {
        let (name, rest) = line.split_once('{').unwrap();
        let (labels, value) = rest.rsplit_once("} ").unwrap();
        let mut metric = serde_json::Map::new();
        metric.insert("__name__".into(), name.into());
        for pair in labels.split("\",") {
            let (k, v) = pair.split_once("=\"").unwrap();
            metric.insert(k.into(), v.trim_end_matches('"').into());
        }
        series.push(serde_json::json!({"metric": metric, "values": [[1_800_000_000, value]]}));
    }
    let body = serde_json::json!({"status": "success", "data": {"resultType": "matrix", "result": series}});
    let mut runs = Runs::default();
    runs.add_response(body.to_string().as_bytes()).unwrap();
    let records = runs.records(None);
    assert_eq!(records.len(), 1);
    let mut read: Vec<(String, f64)> = records[0].measures.iter().map(|m| (m.metric.clone(), m.value)).collect();
    let mut stored: Vec<(String, f64)> = stepmon_history::measures_of(&step)
        .into_iter()
        .filter(|m| !m.metric.contains(':'))
        .map(|m| (m.metric, m.value))
        .collect();
    read.sort_by(|a, b| a.0.cmp(&b.0));
    stored.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(stored.len() >= 7, "{stored:?}");
    assert_eq!(read, stored);
    assert_eq!(Some(records[0].time), step.end.map(|t| jiff::Timestamp::from_microsecond(t.as_microsecond()).unwrap()));
}

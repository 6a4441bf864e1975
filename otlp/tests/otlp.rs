//! The OTLP export: W3C trace-context parsing (the recommendation's own
//! examples and every rule it states), the spans and metric points of the
//! recorded runs against their documents, and both encodings (the
//! protobuf read back with prost, the OTLP/JSON's hex ids and string
//! integers). cli/tests/otlp_live.rs decodes the same requests with the
//! official opentelemetry-proto classes.

#[path = "../../report/tests/common/runs.rs"]
mod runs;

use prost::Message as _;
use serde_json::Value;
use stepmon_otlp::proto::common::Value as Attr;
use stepmon_otlp::proto::metrics::{Data, ExportMetricsServiceRequest, Number};
use stepmon_otlp::proto::trace::{ExportTraceServiceRequest, STATUS_CODE_ERROR, Span};
use stepmon_otlp::traceparent::check_trace_state;
use stepmon_otlp::{self as otlp, Context, Encoding, TraceContextError, TraceParent, attribute};
use stepmon_report::Step;

const W3C: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn context(parent: Option<TraceParent>) -> Context {
    Context {
        resource: vec![("host.name".to_owned(), "runner-7".to_owned())],
        parent,
        trace_state: String::new(),
        new_trace_id: [0x11; 16],
    }
}

/// Span ids 1, 2, 3, ... (as big-endian bytes).
fn counter() -> impl FnMut() -> [u8; 8] {
    let mut n = 0u64;
    move || {
        n += 1;
        n.to_be_bytes()
    }
}

fn spans(request: &ExportTraceServiceRequest) -> Vec<&Span> {
    request.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans).collect()
}

fn nanos(t: jiff::Timestamp) -> u64 {
    u64::try_from(t.as_nanosecond()).unwrap()
}

#[test]
fn traceparent_takes_the_recommendations_example() {
    let parent: TraceParent = W3C.parse().unwrap();
    assert_eq!(parent.trace_id[..4], [0x4b, 0xf9, 0x2f, 0x35]);
    assert_eq!(parent.parent_id, [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
    assert_eq!(parent.flags, 1);
    // §3.2.4: a later version may add fields after a dash.
    let future = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds";
    assert_eq!(future.parse::<TraceParent>().unwrap().parent_id, parent.parent_id);
}

#[test]
fn traceparent_refuses_what_the_recommendation_refuses() {
    type Expected = fn(&TraceContextError) -> bool;
    let cases: [(&str, Expected); 9] = [
        ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", |e| matches!(e, TraceContextError::NotHex(..))),
        ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", |e| matches!(e, TraceContextError::Version(_))),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", |e| matches!(e, TraceContextError::Zero(..))),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", |e| matches!(e, TraceContextError::Zero(..))),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", |e| matches!(e, TraceContextError::Shape(_))),
        ("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", |e| matches!(e, TraceContextError::Shape(_))),
        ("00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", |e| matches!(e, TraceContextError::Shape(_))),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", |e| matches!(e, TraceContextError::NotHex(..))),
        ("", |e| matches!(e, TraceContextError::Shape(_))),
    ];
    for (text, expected) in cases {
        let error = text.parse::<TraceParent>().unwrap_err();
        assert!(expected(&error), "{text:?}: {error:?}");
        assert!(error.to_string().contains("traceparent"), "{error}");
    }
    // Non-ASCII where a dash should be never panics.
    assert!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7ü1".parse::<TraceParent>().is_err());
}

#[test]
fn tracestate_lists() {
    assert_eq!(
        check_trace_state(" rojo=00f067aa0ba902b7,congo=t61rcWkgMzE "),
        Ok("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
    );
    assert!(check_trace_state("tenant@vendor=x, ,b=c").is_ok());
    let members: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
    for bad in ["Rojo=1", "rojo", "rojo=", "a=b=c", "a=1,a=2", "a=ü", &members.join(",")] {
        assert!(check_trace_state(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn failed_run_is_an_error_span_under_the_parent() {
    let step = runs::load("hybrid-exit7");
    let parent: TraceParent = W3C.parse().unwrap();
    let mut context = context(Some(parent));
    context.trace_state = "rojo=00f067aa0ba902b7".to_owned();
    let (request, untimed) = otlp::traces(std::slice::from_ref(&step), &context, &mut counter());
    assert!(untimed.is_empty());
    let spans = spans(&request);
    let [span] = spans[..] else { panic!("{spans:?}") };
    assert_eq!(
        (span.trace_id.as_slice(), span.parent_span_id.as_slice()),
        (&parent.trace_id[..], &parent.parent_id[..])
    );
    assert_eq!(span.span_id, 1u64.to_be_bytes());
    assert_eq!(span.trace_state, "rojo=00f067aa0ba902b7");
    assert_eq!(span.name, step.name);
    assert_eq!(span.start_time_unix_nano, nanos(step.start.unwrap()));
    assert_eq!(span.end_time_unix_nano, nanos(step.end.unwrap()));
    let status = span.status.as_ref().unwrap();
    assert_eq!((status.code, status.message.as_str()), (STATUS_CODE_ERROR, "exited with code 7"));
    let a = &span.attributes;
    assert_eq!(attribute(a, "error.type"), Some(&Attr::StringValue("7".into())));
    assert_eq!(attribute(a, "cicd.pipeline.task.run.result"), Some(&Attr::StringValue("failure".into())));
    assert_eq!(attribute(a, "process.exit.code"), Some(&Attr::IntValue(7)));
    assert_eq!(attribute(a, "cicd.pipeline.task.run.id"), Some(&Attr::StringValue("0000000000000001".into())));
    let resource = &request.resource_spans[0].resource.as_ref().unwrap().attributes;
    assert_eq!(attribute(resource, "service.name"), Some(&Attr::StringValue("stepmon".into())));
    assert_eq!(attribute(resource, "host.name"), Some(&Attr::StringValue("runner-7".into())));
}

#[test]
fn signals_and_success() {
    let mut step = runs::load("hybrid-cpu-3s");
    let run = |step: &Step| {
        let (request, _) = otlp::traces(std::slice::from_ref(step), &context(None), &mut counter());
        spans(&request)[0].clone()
    };
    let span = run(&step);
    assert!(span.status.is_none(), "success leaves the status unset");
    assert!(span.parent_span_id.is_empty() && span.trace_id == [0x11; 16], "a root of a new trace");
    assert_eq!(
        attribute(&span.attributes, "cicd.pipeline.task.run.result"),
        Some(&Attr::StringValue("success".into()))
    );
    assert_eq!(attribute(&span.attributes, "error.type"), None);
    for (signal, result, kind) in
        [(9, "failure", "SIGKILL"), (15, "cancellation", "SIGTERM"), (64, "failure", "signal 64")]
    {
        let info = step.run.as_mut().unwrap();
        (info.exit_code, info.signal) = (None, Some(signal));
        let span = run(&step);
        assert_eq!(
            attribute(&span.attributes, "cicd.pipeline.task.run.result"),
            Some(&Attr::StringValue(result.into()))
        );
        assert_eq!(attribute(&span.attributes, "error.type"), Some(&Attr::StringValue(kind.into())));
        assert_eq!(span.status.unwrap().message, format!("killed by {kind} (signal {signal})"));
    }
}

/// Each summary number is its attribute exactly when known: never a zero
/// for what was not measured.
#[test]
fn usage_attributes_are_the_summary_and_absent_when_unknown() {
    for (name, step) in runs::runs() {
        let (request, _) = otlp::traces(std::slice::from_ref(&step), &context(None), &mut counter());
        let span = spans(&request)[0].clone();
        let s = &step.summary;
        let floats = [
            ("stepmon.cpu.seconds", s.cpu.usage_seconds),
            ("stepmon.stall.cpu.seconds", s.cpu_stall.some_seconds),
            ("stepmon.stall.io.seconds", s.io_stall.some_seconds),
            ("stepmon.wall.seconds", step.wall_seconds),
        ];
        for (key, value) in floats {
            assert_eq!(attribute(&span.attributes, key), value.map(Attr::DoubleValue).as_ref(), "{name}: {key}");
        }
        let ints = [
            ("stepmon.memory.peak_bytes", s.memory.peak_bytes),
            ("stepmon.io.read_bytes", s.io.read_bytes),
            ("stepmon.io.write_bytes", s.io.write_bytes),
            ("stepmon.net.rx_bytes", s.net_rx_bytes),
        ];
        for (key, value) in ints {
            let want = value.map(|v| Attr::IntValue(i64::try_from(v).unwrap()));
            assert_eq!(attribute(&span.attributes, key), want.as_ref(), "{name}: {key}");
        }
        let sentences = step.verdicts().sentences().len();
        let Some(Attr::ArrayValue(verdicts)) = attribute(&span.attributes, "stepmon.verdicts") else { panic!() };
        assert_eq!(verdicts.values.len(), sentences, "{name}");
    }
}

#[test]
fn buildkit_steps_hang_under_one_build_span() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/tests/data/provenance/slsa1-statement.json");
    let steps = stepmon_import::steps(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(steps.len() >= 2);
    let parent: TraceParent = W3C.parse().unwrap();
    let (request, untimed) = otlp::traces(&steps, &context(Some(parent)), &mut counter());
    assert!(untimed.is_empty());
    let spans = spans(&request);
    assert_eq!(spans.len(), steps.len() + 1);
    let build = spans[0];
    assert_eq!((build.name.as_str(), build.parent_span_id.as_slice()), ("build", &parent.parent_id[..]));
    for (span, step) in spans[1..].iter().zip(&steps) {
        assert_eq!(span.parent_span_id, build.span_id, "{}", step.name);
        assert_eq!(span.trace_id, parent.trace_id);
        assert!(span.start_time_unix_nano >= build.start_time_unix_nano);
        assert!(span.end_time_unix_nano <= build.end_time_unix_nano);
        let stepmon_report::Origin::BuildKit { step_id, .. } = &step.origin else { panic!() };
        assert_eq!(attribute(&span.attributes, "cicd.pipeline.task.run.id"), Some(&Attr::StringValue(step_id.clone())));
        // BuildKit records no exit status: no result rather than a guess.
        assert_eq!(attribute(&span.attributes, "cicd.pipeline.task.run.result"), None);
    }
}

#[test]
fn metric_points_are_the_samples() {
    let step = runs::load("pure-v2-6.1-oom-throttled-io");
    let request = otlp::metrics(std::slice::from_ref(&step), &context(None));
    let metrics = &request.resource_metrics[0].scope_metrics[0].metrics;
    let samples = &step.usage.resource_usage.samples;
    let find = |name: &str| metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no {name}"));
    let Some(Data::Sum(cpu)) = &find("stepmon.step.cpu.time").data else { panic!("cpu time is a sum") };
    assert!(cpu.is_monotonic);
    #[allow(clippy::cast_precision_loss)]
    let want: Vec<(u64, Number)> = samples
        .iter()
        .filter_map(|s| Some((nanos(s.timestamp), Number::AsDouble(s.cpu_stat?.usage_nanos? as f64 / 1e9))))
        .collect();
    let got: Vec<(u64, Number)> = cpu.data_points.iter().map(|p| (p.time_unix_nano, p.value.unwrap())).collect();
    assert_eq!(got, want);
    let start = nanos(step.time_origin().unwrap());
    assert!(cpu.data_points.iter().all(|p| p.start_time_unix_nano == start.min(p.time_unix_nano)));
    let Some(Data::Gauge(memory)) = &find("stepmon.step.memory.usage").data else { panic!("memory is a gauge") };
    let want: Vec<Number> = samples
        .iter()
        .filter_map(|s| s.stepmon.memory_current)
        .map(|v| Number::AsInt(i64::try_from(v).unwrap()))
        .collect();
    assert_eq!(memory.data_points.iter().map(|p| p.value.unwrap()).collect::<Vec<_>>(), want);
    assert!(memory.data_points.iter().all(|p| p.start_time_unix_nano == 0));
    // The three PSI resources are one metric, told apart by an attribute.
    let Some(Data::Sum(stall)) = &find("stepmon.step.pressure.stall.time").data else { panic!() };
    let mut resources: Vec<String> = stall
        .data_points
        .iter()
        .filter_map(|p| match attribute(&p.attributes, "stepmon.pressure.resource") {
            Some(Attr::StringValue(r)) => Some(r.clone()),
            _ => None,
        })
        .collect();
    resources.dedup();
    assert_eq!(resources, ["cpu", "memory", "io"]);
    assert_eq!(metrics.iter().filter(|m| m.name == "stepmon.step.pressure.stall.time").count(), 1);
}

#[test]
fn protobuf_reads_back_and_json_writes_hex_ids() {
    let step = runs::load("hybrid-exit7");
    let (traces, _) = otlp::traces(std::slice::from_ref(&step), &context(Some(W3C.parse().unwrap())), &mut counter());
    let bytes = otlp::encode(Encoding::Protobuf, &traces);
    assert_eq!(ExportTraceServiceRequest::decode(bytes.as_slice()).unwrap(), traces);
    let metrics = otlp::metrics(std::slice::from_ref(&step), &context(None));
    let bytes = otlp::encode(Encoding::Protobuf, &metrics);
    assert_eq!(ExportMetricsServiceRequest::decode(bytes.as_slice()).unwrap(), metrics);

    let json: Value = serde_json::from_slice(&otlp::encode(Encoding::Json, &traces)).unwrap();
    let span = &json["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    assert_eq!(span["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(span["parentSpanId"], "00f067aa0ba902b7");
    assert_eq!(span["spanId"], "0000000000000001");
    assert_eq!(span["kind"], 1);
    assert_eq!(span["startTimeUnixNano"], nanos(step.start.unwrap()).to_string());
    assert_eq!(span["status"]["code"], 2);
    let exit = span["attributes"].as_array().unwrap().iter().find(|a| a["key"] == "process.exit.code").unwrap();
    assert_eq!(exit["value"], serde_json::json!({ "intValue": "7" }));
    let json: Value = serde_json::from_slice(&otlp::encode(Encoding::Json, &metrics)).unwrap();
    let metric = &json["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0];
    assert_eq!(metric["sum"]["aggregationTemporality"], 2);
    assert!(metric["sum"]["dataPoints"][0]["asDouble"].is_number());
    // A root span has no parentSpanId at all.
    let (root, _) = otlp::traces(std::slice::from_ref(&step), &context(None), &mut counter());
    let json: Value = serde_json::from_slice(&otlp::encode(Encoding::Json, &root)).unwrap();
    assert!(json["resourceSpans"][0]["scopeSpans"][0]["spans"][0].get("parentSpanId").is_none());
}

proptest::proptest! {
    /// Any text is a parent or a typed error, never a panic; a well-formed
    /// header reads back as the bytes it was written from.
    #[test]
    fn traceparent_never_panics(text in "\\PC{0,80}", trace in proptest::array::uniform16(1u8..), parent in proptest::array::uniform8(1u8..), flags: u8) {
        let _ = text.parse::<TraceParent>();
        let _ = check_trace_state(&text);
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let header = format!("00-{}-{}-{flags:02x}", hex(&trace), hex(&parent));
        let parsed: TraceParent = header.parse().unwrap();
        proptest::prop_assert_eq!(parsed, TraceParent { trace_id: trace, parent_id: parent, flags });
        // Any cut of it is refused.
        for end in 0..header.len() {
            proptest::prop_assert!(header[..end].parse::<TraceParent>().is_err());
        }
    }
}

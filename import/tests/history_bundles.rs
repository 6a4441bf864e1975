//! `docker buildx history export` bundles: the two real ones in
//! `tests/data/buildkit-history/` (see its SOURCE.md: BuildKit daemons
//! wrote them) and constructed variants of the layout BuildKit and buildx
//! write, each built from their source (cited in `common/bundle.rs`).

mod common;

use common::bundle::{
    FAILED, P, TWO_PLATFORM, Writer, data, machine, one, predicate, solve_status, stream, three_steps, v,
};
use serde_json::Value;
use stepmon_import::history::{self, Layout, StepState};
use stepmon_report::job::StepStatus;
use stepmon_report::step::WallSource;

/// The vertexes of a bundle's status stream, decoded on their own.
fn vertexes(bytes: &[u8]) -> Vec<history::status::Vertex> {
    let layout = Layout::from_archive(bytes).unwrap();
    let records = layout.records().unwrap();
    let (_, stream) = records[0].layers.iter().find(|(d, _)| d.media_type == history::bundle::STATUS).unwrap();
    history::status::decode(stream).unwrap().vertexes
}

#[test]
fn two_platform_build_every_vertex_accounted_for_at_its_vertex_times() {
    let bytes = data(TWO_PLATFORM);
    let build = one(&bytes);
    let c = build.counts;
    assert_eq!(c.vertexes, 10);
    assert_eq!(c.executed + c.cached + c.failed + c.incomplete, c.vertexes);
    assert_eq!(Some(i64::try_from(c.vertexes).unwrap()), c.record_total);
    assert_eq!(build.platforms, ["linux/amd64", "linux/arm64"]);
    assert!(build.error.is_none());
    let raw = vertexes(&bytes);
    assert_eq!(raw.len(), build.steps.len());
    for v in &raw {
        let step = build.steps.iter().find(|s| s.digest == v.digest).expect("every vertex is a step");
        let expected = v.completed.unwrap().duration_since(v.started.unwrap()).as_secs_f64();
        assert_eq!(step.wall_seconds, Some(expected), "{}", v.name);
        assert_eq!((step.started, step.completed), (v.started, v.completed));
    }
    // Each platform's steps are labelled with it.
    for p in ["linux/amd64", "linux/arm64"] {
        let run = build.steps.iter().find(|s| s.platform.as_deref() == Some(p) && s.name.contains("RUN echo")).unwrap();
        assert_eq!(run.location.as_deref(), Some("Dockerfile:3"));
        assert_eq!(run.command.as_deref(), Some(r#"/bin/sh -c 'echo "Hello world!"'"#));
    }
}

#[test]
fn two_platform_build_per_step_usage_equals_its_provenance() {
    let build = one(&data(TWO_PLATFORM));
    let with_usage: Vec<_> = build.steps.iter().filter(|s| s.usage.is_some()).collect();
    assert_eq!(with_usage.len(), 2);
    // The values of each predicate's one resourceUsage sample
    // (blobs 2888738… for linux/arm64 and eb76037… for linux/amd64).
    let arm = with_usage.iter().find(|s| s.platform.as_deref() == Some("linux/arm64")).unwrap();
    let usage = arm.usage.as_ref().unwrap();
    assert_eq!(usage.summary.cpu.usage_seconds, Some(0.044_956));
    assert_eq!(usage.summary.memory.peak_bytes, Some(4_403_200));
    // One sample, taken after the container exited: no live gauges.
    assert_eq!(usage.usage.resource_usage.samples.len(), 1);
    assert_eq!(usage.summary.pids_peak, None);
    assert_eq!(usage.summary.memory.anon_at_peak_bytes, None);
    // The wall time is the vertex's, and the shares follow from it.
    assert_eq!(usage.wall_source, WallSource::Vertex);
    assert_eq!(usage.wall_seconds, arm.wall_seconds);
    assert_eq!(usage.summary.wall_seconds, arm.wall_seconds);
    assert!(usage.summary.cpu.average_cores.is_some());
    assert_eq!((usage.start, usage.end), (arm.started, arm.completed));
    let text = history::render(std::slice::from_ref(&build));
    assert!(text.contains("pids     unknown: BuildKit's only sample was taken after"), "{text}");
    assert!(!text.contains("pids     peak 0"), "{text}");
}

#[test]
fn two_platform_json_has_one_wall_time_per_step() {
    let build = one(&data(TWO_PLATFORM));
    let json: Value = serde_json::from_str(&history::to_json(&[build])).unwrap();
    let steps = json[0]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 10);
    let mut with_usage = 0;
    for s in steps {
        if s["usage"].is_object() {
            with_usage += 1;
            assert_eq!(s["usage"]["wallSeconds"], s["wallSeconds"]);
            assert_eq!(s["usage"]["summary"]["wallSeconds"], s["wallSeconds"]);
            assert_eq!(s["usage"]["wallSource"], "vertex");
        }
        assert!(s["wallSeconds"].is_f64(), "{s}");
    }
    assert_eq!(with_usage, 2);
}

#[test]
fn failed_build_shows_the_error_with_the_failing_step_and_its_command() {
    let build = one(&data(FAILED));
    let c = build.counts;
    assert_eq!((c.vertexes, c.executed, c.failed, c.incomplete, c.cached), (16, 14, 1, 1, 0));
    assert_eq!(Some(16), c.record_total);
    let failed: Vec<_> = build.steps.iter().filter(|s| matches!(s.state, StepState::Failed { .. })).collect();
    assert_eq!(failed.len(), 1);
    let step = failed[0];
    assert!(step.name.contains(r#"RUN go build -ldflags "-s -w" -o /usr/bin/app ."#), "{}", step.name);
    assert_eq!(step.location.as_deref(), Some("Dockerfile:12"));
    assert_eq!(step.exit_code, Some(2));
    assert!(build.error.as_deref().unwrap().contains("exit code: 2"));
    let text = history::render(std::slice::from_ref(&build));
    assert!(text.contains("FAILED"), "{text}");
    assert!(text.contains("failing  [build 4/4] RUN go build"), "{text}");
    assert!(text.contains("no provenance attestation"), "{text}");
    // No per-step usage: a build report, not an error, and no capture-usage hint.
    assert!(!text.contains("capture-usage=true?"), "{text}");
    let entries = history::entries(&build);
    assert_eq!(entries.len(), 16);
    let failing = entries.iter().find(|e| matches!(e.status, StepStatus::NotRun { .. })).unwrap();
    assert!(failing.step.name.ends_with("(Dockerfile:12)"), "{}", failing.step.name);
    assert_eq!(failing.status, StepStatus::NotRun { exit_code: 2, error: step_error(step) });
}

fn step_error(step: &history::BuildStep) -> String {
    match &step.state {
        StepState::Failed { error } => error.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn solve_status_json_instead_of_the_status_stream() {
    let mut w = Writer::default();
    w.record("solvestatus", vec![(history::bundle::SOLVE_STATUS, solve_status(&three_steps()), None)], None);
    let build = one(&w.finish());
    assert_eq!(build.timeline_from, Some("solve status JSON"));
    assert_eq!(build.steps.len(), 3);
    assert_eq!(build.steps[1].wall_seconds, Some(18.0));
    assert_eq!(build.steps[2].state, StepState::Cached);
    assert_eq!((build.counts.executed, build.counts.cached), (2, 1));
}

#[test]
fn critical_path_follows_the_vertex_inputs() {
    let mut vs = three_steps();
    // A long step on no chain of the others, and one depending on step 1.
    vs.push(v(4, "[linux/amd64 1/1] RUN sleep", &[], 0.0, 10.0));
    vs.push(v(5, "[linux/amd64 x] RUN test", &[2], 20.0, 25.0));
    let mut w = Writer::default();
    w.record("path", vec![(history::bundle::STATUS, stream(&vs), None)], None);
    let build = one(&w.finish());
    let path: Vec<&str> = build.critical_path.iter().map(|i| build.steps[*i].name.as_str()).collect();
    assert_eq!(path, ["[1/3] FROM docker.io/library/alpine", "[2/3] RUN make", "[x] RUN test"]);
}

#[test]
fn otlp_trace_layer_is_recognised_next_to_the_stream() {
    // buildx `util/desktop/bundle/trace.go` writes the sanitized trace as
    // JSON span stubs, one per line.
    let trace = br#"{"Name":"solve","SpanContext":{"TraceID":"00","SpanID":"01"},"StartTime":"2026-01-01T00:00:00Z"}"#;
    let mut w = Writer::default();
    w.record(
        "traced",
        vec![
            (history::bundle::OTLP_TRACE, trace.to_vec(), None),
            (history::bundle::STATUS, stream(&three_steps()), None),
        ],
        None,
    );
    let build = one(&w.finish());
    assert!(build.sources.iter().any(|s| s.starts_with("OTLP trace")), "{:?}", build.sources);
    assert_eq!(build.steps.len(), 3);
}

#[test]
fn no_provenance_gives_a_build_report_with_a_truthful_notice() {
    let mut w = Writer::default();
    w.record("bare", vec![(history::bundle::STATUS, stream(&three_steps()), None)], None);
    let build = one(&w.finish());
    assert!(build.notice.as_deref().unwrap().contains("no provenance attestation"));
    assert!(build.steps.iter().all(|s| s.usage.is_none()));
    let text = history::render(&[build]);
    assert!(text.contains("timeline"), "{text}");
}

#[test]
fn provenance_with_sys_usage_but_no_resource_usage() {
    // Docker Engine's built-in BuildKit: provenance with sysUsage, no step's resourceUsage.
    let steps = [P { n: 2, args: &["/bin/sh", "-c", "make"], line: 4, usage: None }];
    let mut w = Writer::default();
    w.record(
        "engine",
        vec![
            (history::bundle::STATUS, stream(&three_steps()), None),
            (history::bundle::IN_TOTO, predicate(("linux", "amd64"), &steps, &machine()), Some("linux/amd64")),
        ],
        None,
    );
    let build = one(&w.finish());
    let notice = build.notice.as_deref().unwrap();
    assert!(notice.contains("machine samples (sysUsage) but no step's resourceUsage"), "{notice}");
    assert!(notice.contains("the record does not say which"), "{notice}");
    assert_eq!(build.machine.len(), 4);
    let make = build.steps.iter().find(|s| s.name == "[2/3] RUN make").unwrap();
    assert_eq!(make.location.as_deref(), Some("Dockerfile:4"));
    assert_eq!(make.platform.as_deref(), Some("linux/amd64"));
    // 0–20 s: busy 21 of 40 CPU-seconds; the step ran while it was not saturated by CPU time,
    // but CPU pressure 4.1 s of 20 s = 20.5 % ≥ 10 %.
    assert_eq!(make.machine.saturated, Some(true));
    assert!((make.machine.cpu_stall_share.unwrap() - 0.205).abs() < 1e-9);
    let first = &build.steps[0];
    assert_eq!(first.machine.saturated, Some(false), "{:?}", first.machine);
    let text = history::render(std::slice::from_ref(&build));
    assert!(text.contains("saturated while [linux/amd64] [2/3] RUN make (Dockerfile:4) ran"), "{text}");
    // As a job: every step an entry, with its machine samples, in its platform's group.
    let entries = history::entries(&build);
    assert_eq!(entries.len(), 3);
    assert!(entries.iter().all(|e| e.group.as_deref() == Some("linux/amd64")));
    assert_eq!(entries[2].status, StepStatus::Cached);
    assert_eq!(entries[1].step.name, "[2/3] RUN make (Dockerfile:4)");
    assert_eq!(entries[1].step.wall_seconds, Some(18.0));
    assert!(!entries[1].step.usage.sys_usage.is_empty());
}

#[test]
fn many_platforms_each_labelled() {
    let names = common::bundle::PLATFORMS.map(|(os, arch)| format!("{os}/{arch}"));
    let build = one(&common::bundle::many_platforms());
    assert_eq!(build.platforms, names);
    for (i, name) in names.iter().enumerate() {
        let step = build.steps.iter().find(|s| s.platform.as_deref() == Some(name)).unwrap();
        let usage = step.usage.as_ref().expect("usage matched by digest");
        assert_eq!(usage.summary.cpu.usage_seconds, Some(i as f64 + 1.0));
        assert_eq!(usage.wall_seconds, Some(8.0 + i as f64));
    }
    let text = history::render(&[build]);
    for name in &names {
        assert!(text.contains(&format!("    {name}: 1 step, 1 ran")), "{text}");
    }
}

#[test]
fn export_all_holds_several_builds() {
    let mut w = Writer::default();
    w.record("first", vec![(history::bundle::STATUS, stream(&three_steps()), None)], None);
    w.record("second", vec![(history::bundle::STATUS, stream(&three_steps()[..1]), None)], Some("boom"));
    let builds = history::read(&w.finish()).unwrap();
    let refs: Vec<&str> = builds.iter().map(|b| b.reference.as_str()).collect();
    assert_eq!(refs, ["first", "second"]);
    assert_eq!(builds[1].error.as_deref(), Some("boom"));
}

// ---- malformed input -----------------------------------------------------

fn error_of(bytes: &[u8]) -> String {
    let Err(e) = history::read(bytes) else { panic!("malformed input must be an error") };
    let e = e.to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

#[test]
fn truncated_gzip_is_one_line() {
    let bytes = data(TWO_PLATFORM);
    for cut in [10, bytes.len() / 2, bytes.len() - 9] {
        let e = error_of(&bytes[..cut]);
        assert!(e.contains("build history bundle"), "{e}");
    }
}

#[test]
fn tar_without_index_json() {
    let mut layout = Layout::default();
    layout.add("oci-layout", b"{}".to_vec()).unwrap();
    let e = error_of(&layout.to_archive());
    assert!(e.contains("no index.json"), "{e}");
}

#[test]
fn blob_whose_digest_does_not_match() {
    let mut w = Writer::default();
    w.record("x", vec![(history::bundle::STATUS, stream(&three_steps()), None)], None);
    let good = Layout::from_archive(&w.finish()).unwrap();
    // Rewrite every blob with its first byte changed, keeping the names.
    let mut bad = Layout::default();
    let stream_bytes = stream(&three_steps());
    let records = good.records().unwrap();
    let digest = records[0].layers[0].0.digest.clone();
    for name in ["index.json", "oci-layout"] {
        bad.add(name, good.file(name).unwrap().to_vec()).unwrap();
    }
    let mut flipped = stream_bytes;
    flipped[5] ^= 0xff;
    let hex = digest.strip_prefix("sha256:").unwrap();
    bad.add(&format!("blobs/sha256/{hex}"), flipped).unwrap();
    let index: Value = serde_json::from_slice(good.file("index.json").unwrap()).unwrap();
    let manifest_digest = index["manifests"][0]["digest"].as_str().unwrap().strip_prefix("sha256:").unwrap().to_owned();
    let manifest = good.file(&format!("blobs/sha256/{manifest_digest}")).unwrap();
    bad.add(&format!("blobs/sha256/{manifest_digest}"), manifest.to_vec()).unwrap();
    let m: Value = serde_json::from_slice(manifest).unwrap();
    let config = m["config"]["digest"].as_str().unwrap().strip_prefix("sha256:").unwrap();
    bad.add(&format!("blobs/sha256/{config}"), good.file(&format!("blobs/sha256/{config}")).unwrap().to_vec()).unwrap();
    let e = error_of(&bad.to_archive());
    assert!(e.contains("does not match its digest"), "{e}");
}

#[test]
fn protobuf_garbage_in_the_status_stream() {
    let mut garbage = 6u32.to_le_bytes().to_vec();
    garbage.extend_from_slice(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    let e = history::status::decode(&garbage).unwrap_err().to_string();
    assert!(e.contains("not a StatusResponse"), "{e}");
    let mut w = Writer::default();
    w.record("garbage", vec![(history::bundle::STATUS, garbage, None)], None);
    let e = error_of(&w.finish());
    assert!(e.contains("at byte 4 is not a StatusResponse"), "{e}");
    // Cut inside a frame.
    let mut cut = stream(&three_steps());
    cut.truncate(cut.len() - 3);
    let e = history::status::decode(&cut).unwrap_err().to_string();
    assert!(e.contains("cut short"), "{e}");
}

#[test]
fn two_gib_declared_sizes_are_refused_before_allocating() {
    // A status-stream frame declaring 2 GiB.
    let mut stream = (2u32 << 30).to_le_bytes().to_vec();
    stream.extend_from_slice(b"tiny");
    let e = history::status::decode(&stream).unwrap_err().to_string();
    assert!(e.contains("declares 2147483648 bytes"), "{e}");
    // A tar entry declaring 2 GiB, with nothing behind it.
    let mut header = tar::Header::new_ustar();
    header.set_path("blobs/sha256/00").unwrap();
    header.set_size(2 << 30);
    header.set_cksum();
    let mut archive = header.as_bytes().to_vec();
    archive.extend_from_slice(&[0u8; 1024]);
    let e = error_of(&archive);
    assert!(e.contains("declares 2147483648 bytes"), "{e}");
}

#[test]
fn not_a_bundle_at_all() {
    assert!(!history::looks_like_bundle(b"{\"resourceUsage\": {}}"));
    assert!(history::looks_like_bundle(&data(FAILED)));
    let e = error_of(b"\x1f\x8bnot really gzip");
    assert!(e.contains("build history bundle"), "{e}");
}

#[test]
fn provenance_alone_single_sample_step_has_no_live_gauges() {
    // The linux/arm64 predicate of the real bundle, read as a provenance
    // file on its own (what `docker buildx history inspect attachment`
    // prints): its exec step has one sample, taken after the container exited.
    let layout = Layout::from_archive(&data(TWO_PLATFORM)).unwrap();
    let records = layout.records().unwrap();
    let (_, predicate) = records[0]
        .layers
        .iter()
        .find(|(d, _)| d.digest.starts_with("sha256:288873807f73"))
        .expect("the linux/arm64 provenance");
    let import = stepmon_import::read(std::str::from_utf8(predicate).unwrap()).unwrap();
    assert_eq!(import.steps.len(), 1);
    let step = &import.steps[0];
    assert_eq!(step.usage.resource_usage.samples.len(), 1);
    // Cumulative counters are exact ...
    assert_eq!(step.summary.cpu.usage_seconds, Some(0.044_956));
    assert_eq!(step.summary.memory.peak_bytes, Some(4_403_200));
    // ... live gauges read an empty cgroup: unknown, not 0.
    assert_eq!(step.summary.pids_peak, None);
    assert_eq!(step.summary.memory.anon_at_peak_bytes, None);
    assert_eq!(step.summary.memory.file_at_peak_bytes, None);
    let verdicts = step.verdicts();
    let text = stepmon_report::text::render(step, &verdicts);
    assert!(text.contains("pids     unknown"), "{text}");
    assert!(!text.contains("largest sample"), "{text}");
    // Without the vertex its wall time is unknown: absent in the step and
    // in its summary alike (it was 0.0 in the summary), the reason beside.
    assert_eq!((step.wall_seconds, step.summary.wall_seconds), (None, None));
    let json: Value =
        serde_json::from_str(&stepmon_export::render(stepmon_export::Format::Json, std::slice::from_ref(step)))
            .unwrap();
    let s = &json["steps"][0];
    assert!(s["wallSeconds"].is_null() && s["summary"]["wallSeconds"].is_null(), "{s}");
    assert_eq!(s["wallSource"], "unknown");
}

#[test]
fn tar_errors_quoting_names_with_newlines_stay_one_line() {
    // Found by the history_bundle fuzz target (fuzz/regressions/history_bundle/):
    // the tar reader's message quotes the entry's name, which may hold a newline.
    let mut header = tar::Header::new_ustar();
    header.as_mut_bytes()[..12].copy_from_slice(b"index\n.json\0");
    header.set_size(4);
    header.as_mut_bytes()[148..156].copy_from_slice(b"zzzzzzz\0");
    let mut archive = header.as_bytes().to_vec();
    archive.extend_from_slice(&[0u8; 1536]);
    let e = error_of(&archive);
    assert!(e.contains("index\\n.json"), "{e}");
}

/// The two platforms' RUN steps share a name: the job views tell them
/// apart by platform (the heaviest is arm64's, 45.0 ms, not amd64's first
/// row of the same name, 26.3 ms).
#[test]
fn two_platform_job_views_name_the_heaviest_step_with_its_platform() {
    let build = one(&data(TWO_PLATFORM));
    let entries = history::entries(&build);
    let json: Value = serde_json::from_str(&stepmon_report::job::to_json(&entries, &[])).unwrap();
    // The heaviest step by its place in the job, not by its shared name.
    let rows = json["steps"].as_array().unwrap();
    let place = usize::try_from(json["heaviest"].as_u64().unwrap()).unwrap();
    let (max_place, _) = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r["cpuSeconds"].as_f64()?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!(place, max_place);
    let row = &rows[place];
    let heaviest = format!("{} [{}]", row["name"].as_str().unwrap(), row["group"].as_str().unwrap());
    assert!(heaviest.ends_with("[linux/arm64]"), "{heaviest}");
    let text = stepmon_report::job::render(&entries, &[]);
    assert!(text.contains(&format!("heaviest: {heaviest} (45.0 ms CPU)")), "{text}");
}

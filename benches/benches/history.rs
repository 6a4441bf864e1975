//! `stepmon report BUILD.dockerbuild` without the process: reading a
//! constructed `docker buildx history export` bundle (gunzip, untar, digest
//! checks, the status stream, the provenance) and rendering its text and
//! JSON report. The bundle is laid out as buildx's bundle writer does
//! (docker/buildx `util/desktop/bundle/export.go`): 30 exec steps in one
//! chain, each sent three times in the status stream (BuildKit resends a
//! vertex as it starts and completes), a provenance whose steps carry 10
//! samples each, 21 machine samples, and an incompressible result blob
//! that brings the gzip'd bundle to about 1 MiB.
//!
//! `cargo bench -p stepmon-benches --bench history`.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use stepmon_import::history::status::{PbTimestamp, PbVertex, StatusResponse, encode};
use stepmon_import::history::{self, Layout, bundle};

const STEPS: usize = 30;
const T0: i64 = 1_780_000_000;

fn digest(n: usize) -> String {
    format!("sha256:{n:064x}")
}

fn at(seconds: i64) -> String {
    jiff::Timestamp::new(T0 + seconds, 0).map(|t| t.to_string()).unwrap_or_default()
}

fn stream() -> Vec<u8> {
    let mut responses = Vec::new();
    for i in 0..STEPS {
        let start = i64::try_from(i * 10).unwrap_or(0);
        let base = PbVertex {
            digest: digest(i + 1),
            inputs: if i == 0 { Vec::new() } else { vec![digest(i)] },
            name: format!("[linux/amd64 {}/{STEPS}] RUN make -C part{i}", i + 1),
            ..PbVertex::default()
        };
        let started = PbVertex { started: Some(PbTimestamp { seconds: T0 + start, nanos: 0 }), ..base.clone() };
        let done = PbVertex { completed: Some(PbTimestamp { seconds: T0 + start + 9, nanos: 5 }), ..started.clone() };
        for v in [base, started, done] {
            responses.push(StatusResponse { vertexes: vec![v], ..StatusResponse::default() });
        }
    }
    encode(&responses)
}

fn predicate() -> Vec<u8> {
    let mut definition = Vec::new();
    let mut mapping = serde_json::Map::new();
    for i in 0..STEPS {
        let start = i64::try_from(i * 10).unwrap_or(0);
        let samples: Vec<Value> = (1..=10u64)
            .map(|k| {
                json!({"timestamp": at(start + i64::try_from(k).unwrap_or(0) - 1),
                    "cpuStat": {"usageNanos": k * 700_000_000, "userNanos": k * 600_000_000, "systemNanos": k * 100_000_000,
                        "pressure": {"some": {"total": k * 1000}, "full": {"total": k * 500}}},
                    "memoryStat": {"anon": k << 20, "file": k << 19, "peak": k << 21},
                    "ioStat": {"readBytes": k << 16, "writeBytes": k << 15},
                    "pidsStat": {"current": k}})
            })
            .collect();
        let id = format!("step{i}");
        definition.push(
            json!({"id": id, "op": {"Op": {"exec": {"meta": {"args": ["/bin/sh", "-c", format!("make -C part{i}")]}}},
            "platform": {"OS": "linux", "Architecture": "amd64"}}, "resourceUsage": {"samples": samples}}),
        );
        mapping.insert(digest(i + 1), json!(id));
    }
    let sys: Vec<Value> = (0..=20i64)
        .map(|k| {
            let t = k * 15;
            json!({"timestamp": at(t), "cpuStat": {"user": t as f64 * 1.5, "nice": 0, "system": t as f64 * 0.2,
                "idle": t as f64 * 2.0, "iowait": 0, "irq": 0, "softirq": 0, "steal": 0, "guest": 0, "guestNice": 0},
                "cpuPressure": {"some": {"total": t * 100_000}, "full": {"total": 0}}})
        })
        .collect();
    json!({"buildType": "https://mobyproject.org/buildkit@v1",
        "buildConfig": {"llbDefinition": definition, "digestMapping": mapping},
        "metadata": {"https://mobyproject.org/buildkit@v1#metadata": {"sysUsage": sys}}})
    .to_string()
    .into_bytes()
}

/// xorshift64: bytes gzip cannot shrink, like the compressed layers a real
/// result carries.
fn noise(len: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

fn descriptor(layout: &mut Layout, media: &str, bytes: Vec<u8>) -> Value {
    let size = bytes.len();
    let digest = layout.put_blob(bytes).expect("the bench bundle fits the bounds");
    json!({"mediaType": media, "digest": digest, "size": size})
}

fn bundle_bytes() -> Vec<u8> {
    let mut layout = Layout::default();
    let layers = vec![
        descriptor(&mut layout, bundle::STATUS, stream()),
        descriptor(&mut layout, bundle::IN_TOTO, predicate()),
        descriptor(&mut layout, "application/json", noise(960 << 10)),
    ];
    let record = json!({"Ref": "bench", "FrontendAttrs": {"filename": "Dockerfile"}, "CreatedAt": at(0),
        "CompletedAt": at(i64::try_from(STEPS * 10).unwrap_or(0)), "numTotalSteps": STEPS, "numCompletedSteps": STEPS});
    let config = descriptor(&mut layout, bundle::HISTORY_RECORD, record.to_string().into_bytes());
    let manifest = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config, "layers": layers});
    let m = descriptor(&mut layout, "application/vnd.oci.image.manifest.v1+json", manifest.to_string().into_bytes());
    let index = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [m]});
    layout.add("index.json", index.to_string().into_bytes()).expect("fits");
    layout.to_archive()
}

fn history(c: &mut Criterion) {
    let bytes = bundle_bytes();
    let builds = history::read(&bytes).expect("the bench bundle reads");
    assert_eq!(builds[0].steps.len(), STEPS);
    assert!(builds[0].steps.iter().all(|s| s.usage.is_some()));
    eprintln!("history bundle: {} bytes, {STEPS} steps", bytes.len());
    let mut group = c.benchmark_group("history_bundle");
    group.bench_function("read_1MiB_30_steps", |b| b.iter(|| history::read(std::hint::black_box(&bytes))));
    group.bench_function("report_text_1MiB_30_steps", |b| {
        b.iter(|| history::render(&history::read(std::hint::black_box(&bytes)).unwrap_or_default()));
    });
    group.bench_function("report_json_1MiB_30_steps", |b| {
        b.iter(|| history::to_json(&history::read(std::hint::black_box(&bytes)).unwrap_or_default()));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = history
}
criterion_main!(benches);

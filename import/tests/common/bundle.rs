//! `docker buildx history export` bundles for the tests: the two real
//! ones in `tests/data/buildkit-history/` (see its SOURCE.md) and a writer
//! of constructed variants of the layout BuildKit and buildx write, each
//! built from their source:
//!
//! * the layout: docker/buildx `util/desktop/bundle/export.go`
//!   (`exportRecord`: config = the record, `application/vnd.buildkit.historyrecord.v0`;
//!   layers = trace, status stream, result attestations; `--all`: an
//!   index of manifests annotated `vnd.buildkit.history.reference`);
//! * the record: moby/buildkit `api/services/control/control.proto`
//!   `BuildHistoryRecord` as Go's JSON writes it;
//! * the status stream: `StatusResponse`/`Vertex` of the same file, each
//!   behind a 4-byte little-endian length (BuildKit's history recorder,
//!   read back by buildx `commands/history/import.go`);
//! * solve-status JSON: moby/buildkit `client/graph.go` `SolveStatus`;
//! * provenance: `solver/llbsolver/provenance/types/types.go`
//!   (`buildConfig.llbDefinition`, `digestMapping`, `metadata[...#metadata]`
//!   `source.locations`, `sysUsage`).

use serde_json::{Value, json};
use stepmon_import::history::status::{PbTimestamp, PbVertex, StatusResponse, encode};
use stepmon_import::history::{self, Build, Layout};

pub(crate) fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/buildkit-history/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub(crate) const TWO_PLATFORM: &str = "docker~build-push-action~2778G2.dockerbuild";
pub(crate) const FAILED: &str = "docker~test-docker-action~go-error~BGI5SX.dockerbuild";

pub(crate) fn one(bytes: &[u8]) -> Build {
    let mut builds = history::read(bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(builds.len(), 1);
    builds.remove(0)
}

/// Seconds after this instant.
pub(crate) const T0: i64 = 1_780_000_000;

pub(crate) fn ts(seconds: f64) -> PbTimestamp {
    #[allow(clippy::cast_possible_truncation)]
    let whole = seconds.floor() as i64;
    #[allow(clippy::cast_possible_truncation)]
    let nanos = ((seconds - seconds.floor()) * 1e9).round() as i32;
    PbTimestamp { seconds: T0 + whole, nanos }
}

pub(crate) fn rfc3339(seconds: f64) -> String {
    let t = jiff::Timestamp::new(T0, 0).unwrap() + jiff::SignedDuration::from_secs_f64(seconds);
    t.to_string()
}

pub(crate) fn digest(n: usize) -> String {
    format!("sha256:{n:064x}")
}

/// One vertex as BuildKit sends it once done.
pub(crate) struct V {
    pub(crate) n: usize,
    pub(crate) name: String,
    pub(crate) inputs: Vec<usize>,
    pub(crate) start: f64,
    pub(crate) end: f64,
    pub(crate) cached: bool,
    pub(crate) error: &'static str,
}

pub(crate) fn v(n: usize, name: &str, inputs: &[usize], start: f64, end: f64) -> V {
    V { n, name: name.to_owned(), inputs: inputs.to_vec(), start, end, cached: false, error: "" }
}

/// The status stream BuildKit records: each vertex first without times,
/// then started, then completed (three messages, as the solver sends them).
pub(crate) fn stream(vs: &[V]) -> Vec<u8> {
    let mut responses = Vec::new();
    for x in vs {
        let base = PbVertex {
            digest: digest(x.n),
            inputs: x.inputs.iter().map(|i| digest(*i)).collect(),
            name: x.name.clone(),
            ..PbVertex::default()
        };
        responses.push(StatusResponse { vertexes: vec![base.clone()], ..StatusResponse::default() });
        let started = PbVertex { started: Some(ts(x.start)), cached: x.cached, ..base.clone() };
        responses.push(StatusResponse { vertexes: vec![started.clone()], ..StatusResponse::default() });
        let done = PbVertex { completed: Some(ts(x.end)), error: x.error.to_owned(), ..started };
        responses.push(StatusResponse { vertexes: vec![done], ..StatusResponse::default() });
    }
    encode(&responses)
}

/// The same as solve-status JSON, one `SolveStatus` per line.
pub(crate) fn solve_status(vs: &[V]) -> Vec<u8> {
    let mut out = String::new();
    for x in vs {
        let vertex = json!({"digest": digest(x.n), "inputs": x.inputs.iter().map(|i| digest(*i)).collect::<Vec<_>>(),
            "name": x.name, "started": rfc3339(x.start), "completed": rfc3339(x.end), "cached": x.cached,
            "error": x.error});
        out.push_str(&json!({"vertexes": [vertex]}).to_string());
        out.push('\n');
    }
    out.into_bytes()
}

/// A machine sample of `sysUsage` (BuildKit `executor/resources/types`
/// `SysSample`): cumulative CPU seconds and CPU pressure µs.
pub(crate) fn sys(t: f64, busy: f64, idle: f64, stall_us: u64) -> Value {
    json!({"timestamp": rfc3339(t),
        "cpuStat": {"user": busy, "nice": 0, "system": 0, "idle": idle, "iowait": 0, "irq": 0, "softirq": 0,
                    "steal": 0, "guest": 0, "guestNice": 0},
        "cpuPressure": {"some": {"avg10": 0, "avg60": 0, "avg300": 0, "total": stall_us},
                        "full": {"avg10": 0, "avg60": 0, "avg300": 0, "total": 0}}})
}

/// One exec step of a v0.2 predicate.
pub(crate) struct P {
    pub(crate) n: usize,
    pub(crate) args: &'static [&'static str],
    pub(crate) line: u64,
    pub(crate) usage: Option<Value>,
}

/// A SLSA v0.2 predicate for `platform` (OS/arch), as BuildKit writes it.
pub(crate) fn predicate(platform: (&str, &str), steps: &[P], sys_usage: &Value) -> Vec<u8> {
    let mut definition = Vec::new();
    let mut mapping = serde_json::Map::new();
    let mut locations = serde_json::Map::new();
    for (i, s) in steps.iter().enumerate() {
        let id = format!("step{i}");
        let mut step = json!({"id": id, "op": {"Op": {"exec": {"meta": {"args": s.args}}},
            "platform": {"OS": platform.0, "Architecture": platform.1}}});
        if let Some(u) = &s.usage {
            step["resourceUsage"] = u.clone();
        }
        definition.push(step);
        mapping.insert(digest(s.n), json!(id));
        locations
            .insert(id, json!({"locations": [{"ranges": [{"start": {"line": s.line}, "end": {"line": s.line}}]}]}));
    }
    json!({"buildType": "https://mobyproject.org/buildkit@v1",
        "buildConfig": {"llbDefinition": definition, "digestMapping": mapping},
        "metadata": {"https://mobyproject.org/buildkit@v1#metadata": {
            "source": {"locations": locations, "infos": [{"filename": "Dockerfile"}]},
            "sysUsage": sys_usage}}})
    .to_string()
    .into_bytes()
}

/// A layout being written the way buildx's bundle writer does.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) layout: Layout,
    pub(crate) manifests: Vec<Value>,
}

impl Writer {
    pub(crate) fn blob(&mut self, media: &str, bytes: Vec<u8>, annotations: Value) -> Value {
        let size = bytes.len();
        let digest = self.layout.put_blob(bytes).unwrap();
        json!({"mediaType": media, "digest": digest, "size": size, "annotations": annotations})
    }

    /// One record's manifest: `layers` are (media type, bytes, platform of
    /// an attestation).
    pub(crate) fn record(&mut self, reference: &str, layers: Vec<(&str, Vec<u8>, Option<&str>)>, error: Option<&str>) {
        let mut descriptors = Vec::new();
        let mut results = serde_json::Map::new();
        for (media, bytes, platform) in layers {
            let d = self.blob(media, bytes, json!({}));
            if let Some(p) = platform {
                results.insert(p.to_owned(), json!({"Attestations": [{"media_type": media, "digest": d["digest"]}]}));
            }
            descriptors.push(d);
        }
        let mut record = json!({"Ref": reference, "FrontendAttrs": {"filename": "Dockerfile"},
            "CreatedAt": rfc3339(0.0), "CompletedAt": rfc3339(30.0), "Results": results,
            "numTotalSteps": 3, "numCompletedSteps": 3});
        if let Some(e) = error {
            record["error"] = json!({"code": 2, "message": e});
        }
        let config = self.blob(history::bundle::HISTORY_RECORD, record.to_string().into_bytes(), json!({}));
        let manifest = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": config, "layers": descriptors});
        let d = self.blob(
            "application/vnd.oci.image.manifest.v1+json",
            manifest.to_string().into_bytes(),
            json!({"vnd.buildkit.history.reference": reference}),
        );
        self.manifests.push(d);
    }

    /// `index.json` pointing at the one manifest, or at an index of several
    /// (`export --all`).
    pub(crate) fn finish(mut self) -> Vec<u8> {
        let top = if self.manifests.len() == 1 {
            self.manifests.clone()
        } else {
            let index = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                "manifests": self.manifests});
            vec![self.blob("application/vnd.oci.image.index.v1+json", index.to_string().into_bytes(), json!({}))]
        };
        let index =
            json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": top});
        self.layout.add("index.json", index.to_string().into_bytes()).unwrap();
        self.layout.add("oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#.to_vec()).unwrap();
        self.layout.to_archive()
    }
}

pub(crate) fn three_steps() -> Vec<V> {
    vec![
        v(1, "[linux/amd64 1/3] FROM docker.io/library/alpine", &[], 0.5, 2.0),
        v(2, "[linux/amd64 2/3] RUN make", &[1], 2.0, 20.0),
        V { cached: true, ..v(3, "[linux/amd64 3/3] RUN make install", &[2], 20.0, 20.0) },
    ]
}

/// Machine samples every 10 s; 10–20 s saturated (95 % busy).
pub(crate) fn machine() -> Value {
    json!([
        sys(0.0, 0.0, 0.0, 0),
        sys(10.0, 2.0, 18.0, 100_000),
        sys(20.0, 21.0, 19.0, 4_100_000),
        sys(30.0, 22.0, 38.0, 4_200_000)
    ])
}

/// The platforms of [`many_platforms`].
pub(crate) const PLATFORMS: [(&str, &str); 4] =
    [("linux", "amd64"), ("linux", "arm64"), ("linux", "s390x"), ("linux", "ppc64le")];

/// A build for each of [`PLATFORMS`] (`docker buildx build --platform a,b,c,d`):
/// the status stream has one `RUN make` vertex per platform, 1 s to 9 + i s,
/// and each platform's provenance (its result's attestation) gives its step
/// one sample of i + 1 CPU-seconds and a 1 MiB `memory.peak`.
pub(crate) fn many_platforms() -> Vec<u8> {
    let mut vs = Vec::new();
    let mut layers = Vec::new();
    let usage = |cpu: u64| {
        json!({"samples": [{"timestamp": rfc3339(9.0), "cpuStat": {"usageNanos": cpu}, "memoryStat": {"peak": 1_048_576},
            "pidsStat": {"current": 0}}]})
    };
    let names: Vec<String> = PLATFORMS.iter().map(|(os, arch)| format!("{os}/{arch}")).collect();
    for (i, (os, arch)) in PLATFORMS.iter().enumerate() {
        let n = 10 + i;
        vs.push(v(n, &format!("[{os}/{arch} 2/2] RUN make"), &[], 1.0, 9.0 + i as f64));
        let steps = [P { n, args: &["make"], line: 3, usage: Some(usage(1_000_000_000 * (i as u64 + 1))) }];
        layers.push((history::bundle::IN_TOTO, predicate((os, arch), &steps, &json!([])), Some(names[i].as_str())));
    }
    layers.insert(0, (history::bundle::STATUS, stream(&vs), None));
    let mut w = Writer::default();
    w.record("multi", layers, None);
    w.finish()
}

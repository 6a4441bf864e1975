//! The history record: `BuildHistoryRecord` of moby/buildkit
//! `api/services/control/control.proto` as Go's `encoding/json` writes the
//! generated struct (field names as in the .proto: `Ref`, `FrontendAttrs`,
//! `CreatedAt`, `numTotalSteps`, ...), plus what buildx's bundle writer adds
//! (`DefaultPlatform`, `localState`; `util/desktop/bundle/export.go`
//! `Record`, `localstate/localstate.go` `State`).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;

/// `controlapi.Descriptor` (`media_type`, `digest`, `size`, `annotations`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
pub struct RecordDescriptor {
    /// What the blob is.
    #[serde(default, alias = "mediaType")]
    pub media_type: String,
    /// `sha256:<hex>`.
    #[serde(default)]
    pub digest: String,
}

/// `BuildResultInfo`: a result's attestations.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
pub struct ResultInfo {
    /// The attestations (provenance, SBOM, ...).
    #[serde(default, rename = "Attestations", alias = "attestations")]
    pub attestations: Vec<RecordDescriptor>,
}

/// `google.rpc.Status`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
pub struct RpcStatus {
    /// gRPC code.
    #[serde(default)]
    pub code: i32,
    /// The error in words.
    #[serde(default)]
    pub message: String,
    /// Typed details (`google.protobuf.Any`: `type_url`, base64 `value`).
    #[serde(default)]
    pub details: Vec<AnyDetail>,
}

/// One `google.protobuf.Any` of an error's details.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
pub struct AnyDetail {
    /// `github.com/moby/buildkit/errdefs.Vertex+json`, ...
    #[serde(default)]
    pub type_url: String,
    /// The JSON, base64.
    #[serde(default)]
    pub value: String,
}

/// What BuildKit's typed error details say about the failure
/// (moby/buildkit `solver/errdefs`: `Vertex{digest}`, `Source{info, ranges}`;
/// `frontend/gateway` `ExitMessage{Code}`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Failure {
    /// The failing vertex.
    pub vertex: Option<String>,
    /// `Dockerfile:12`.
    pub location: Option<String>,
    /// The command's exit status.
    pub exit_code: Option<i32>,
}

impl RpcStatus {
    /// The failure its details describe; undecodable details are skipped
    /// (they are diagnostics, not the build's numbers).
    #[must_use]
    pub fn failure(&self) -> Failure {
        use base64::Engine as _;
        let mut out = Failure::default();
        for d in &self.details {
            let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(d.value.as_bytes()) else { continue };
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else { continue };
            if d.type_url.ends_with("errdefs.Vertex+json") {
                out.vertex = v.get("digest").and_then(serde_json::Value::as_str).map(str::to_owned);
            } else if d.type_url.ends_with("errdefs.Source+json") {
                let file = v.get("info").and_then(|i| i.get("filename")).and_then(serde_json::Value::as_str);
                let line = v
                    .get("ranges")
                    .and_then(|r| r.get(0))
                    .and_then(|r| r.get("start"))
                    .and_then(|s| s.get("line"))
                    .and_then(serde_json::Value::as_u64);
                if let (Some(file), Some(line)) = (file, line) {
                    let file = file.rsplit('/').next().unwrap_or(file);
                    out.location = Some(format!("{file}:{line}"));
                }
            } else if d.type_url.ends_with("ExitMessage+json") {
                out.exit_code = v.get("Code").and_then(serde_json::Value::as_i64).and_then(|c| i32::try_from(c).ok());
            }
        }
        out
    }
}

/// buildx's `localstate.State`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
pub struct LocalState {
    /// The bake/build target.
    #[serde(default, rename = "Target")]
    pub target: String,
    /// The Dockerfile's path on the client.
    #[serde(default, rename = "DockerfilePath")]
    pub dockerfile_path: String,
}

/// The parts of a history record the report reads.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[non_exhaustive]
pub struct HistoryRecord {
    /// The build's ref.
    #[serde(default, rename = "Ref")]
    pub reference: String,
    /// The frontend (`dockerfile.v0`, `gateway.v0`).
    #[serde(default, rename = "Frontend")]
    pub frontend: String,
    /// The frontend's options: `filename`, `target`, `platform`, ...
    #[serde(default, rename = "FrontendAttrs")]
    pub frontend_attrs: BTreeMap<String, String>,
    /// Why the build failed.
    #[serde(default)]
    pub error: Option<RpcStatus>,
    /// When the build was created.
    #[serde(default, rename = "CreatedAt")]
    pub created_at: Option<Timestamp>,
    /// When it completed.
    #[serde(default, rename = "CompletedAt")]
    pub completed_at: Option<Timestamp>,
    /// The status stream's descriptor.
    #[serde(default)]
    pub logs: Option<RecordDescriptor>,
    /// The trace's descriptor.
    #[serde(default)]
    pub trace: Option<RecordDescriptor>,
    /// The single-platform result.
    #[serde(default, rename = "Result")]
    pub result: Option<ResultInfo>,
    /// Per-platform results (`linux/amd64` → its attestations).
    #[serde(default, rename = "Results")]
    pub results: BTreeMap<String, ResultInfo>,
    /// Steps the build had.
    #[serde(default, rename = "numTotalSteps")]
    pub total_steps: Option<i64>,
    /// Steps that completed.
    #[serde(default, rename = "numCompletedSteps")]
    pub completed_steps: Option<i64>,
    /// Steps that came from the cache.
    #[serde(default, rename = "numCachedSteps")]
    pub cached_steps: Option<i64>,
    /// Warnings.
    #[serde(default, rename = "numWarnings")]
    pub warnings: Option<i64>,
    /// buildx's default platform.
    #[serde(default, rename = "DefaultPlatform")]
    pub default_platform: String,
    /// buildx's local state.
    #[serde(default, rename = "localState")]
    pub local_state: Option<LocalState>,
}

impl HistoryRecord {
    /// The platform whose result holds the attestation `digest`.
    #[must_use]
    pub fn platform_of(&self, digest: &str) -> Option<&str> {
        self.results
            .iter()
            .find(|(_, r)| r.attestations.iter().any(|a| a.digest == digest))
            .map(|(platform, _)| platform.as_str())
    }

    /// The Dockerfile's name for step locations.
    #[must_use]
    pub fn dockerfile(&self) -> String {
        let name = self.frontend_attrs.get("filename").map_or("Dockerfile", String::as_str);
        name.rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or("Dockerfile").to_owned()
    }
}

//! BuildKit's status stream: what `docker buildx history export` stores as
//! the `application/vnd.buildkit.status.v0` blob, and the solve-status JSON
//! (`application/vnd.buildkit.solvestatus.v0`, the `--progress=rawjson`
//! shape) some exports carry instead.
//!
//! The stream is a sequence of `StatusResponse` messages
//! (moby/buildkit `api/services/control/control.proto`), each behind a
//! 4-byte little-endian length — not protobuf's varint framing: BuildKit's
//! history recorder writes `binary.LittleEndian.PutUint32(len)` then the
//! marshalled message, and buildx reads it back the same way
//! (`commands/history/import.go` feeding `progressui`). Only the fields
//! the report reads are declared below; prost skips the rest (log bytes
//! included, which are decoded but not kept).

use jiff::Timestamp;
use serde::Deserialize;

/// The largest single message accepted: the recorder caps log chunks and a
/// message holds a few vertexes; a declared length beyond this is garbage
/// (or a 2 GiB lie), refused before anything is allocated.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// `google.protobuf.Timestamp`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PbTimestamp {
    /// Seconds since the Unix epoch.
    #[prost(int64, tag = "1")]
    pub seconds: i64,
    /// Nanoseconds within the second.
    #[prost(int32, tag = "2")]
    pub nanos: i32,
}

/// `moby.buildkit.v1.StatusResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusResponse {
    /// Vertex updates (a vertex is sent again each time it changes).
    #[prost(message, repeated, tag = "1")]
    pub vertexes: Vec<PbVertex>,
    /// Progress of a vertex's sub-tasks (layer pulls, transfers).
    #[prost(message, repeated, tag = "2")]
    pub statuses: Vec<PbVertexStatus>,
    /// Log chunks.
    #[prost(message, repeated, tag = "3")]
    pub logs: Vec<PbVertexLog>,
    /// Build warnings.
    #[prost(message, repeated, tag = "4")]
    pub warnings: Vec<PbVertexWarning>,
}

/// `moby.buildkit.v1.Vertex`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PbVertex {
    /// The LLB op digest.
    #[prost(string, tag = "1")]
    pub digest: String,
    /// Digests of the vertexes it depends on.
    #[prost(string, repeated, tag = "2")]
    pub inputs: Vec<String>,
    /// `[linux/amd64 2/3] RUN make`.
    #[prost(string, tag = "3")]
    pub name: String,
    /// Whether its result came from the cache.
    #[prost(bool, tag = "4")]
    pub cached: bool,
    /// When it started.
    #[prost(message, optional, tag = "5")]
    pub started: Option<PbTimestamp>,
    /// When it completed.
    #[prost(message, optional, tag = "6")]
    pub completed: Option<PbTimestamp>,
    /// Why it failed.
    #[prost(string, tag = "7")]
    pub error: String,
}

/// `moby.buildkit.v1.VertexStatus` (only its vertex is read).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PbVertexStatus {
    /// The status's id.
    #[prost(string, tag = "1")]
    pub id: String,
    /// The vertex it belongs to.
    #[prost(string, tag = "2")]
    pub vertex: String,
}

/// `moby.buildkit.v1.VertexLog` (the message bytes are skipped).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PbVertexLog {
    /// The vertex it belongs to.
    #[prost(string, tag = "1")]
    pub vertex: String,
    /// 1 stdout, 2 stderr.
    #[prost(int64, tag = "3")]
    pub stream: i64,
}

/// `moby.buildkit.v1.VertexWarning`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PbVertexWarning {
    /// The vertex it belongs to.
    #[prost(string, tag = "1")]
    pub vertex: String,
    /// The warning's one line.
    #[prost(bytes = "vec", tag = "3")]
    pub short: Vec<u8>,
}

/// One vertex of the build as its last update left it.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Vertex {
    /// The LLB op digest.
    pub digest: String,
    /// Digests of its inputs.
    pub inputs: Vec<String>,
    /// Its progress name (`[linux/amd64 2/3] RUN make`).
    pub name: String,
    /// Whether it came from the cache.
    pub cached: bool,
    /// When it started.
    pub started: Option<Timestamp>,
    /// When it completed.
    pub completed: Option<Timestamp>,
    /// Its error, when it failed.
    pub error: Option<String>,
}

/// Everything the stream said, merged by vertex.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Status {
    /// Vertexes in the order they first appeared.
    pub vertexes: Vec<Vertex>,
    /// Warnings (`vertex digest`, text).
    pub warnings: Vec<(String, String)>,
    /// Messages read.
    pub messages: usize,
}

/// Why a status stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatusError {
    /// The stream ends inside a length prefix or a message.
    #[error("status stream cut short at byte {offset}: {what}")]
    Truncated {
        /// Where the cut part starts.
        offset: usize,
        /// What was being read.
        what: &'static str,
    },
    /// A message declares more bytes than any real one.
    #[error("status stream message at byte {offset} declares {declared} bytes (at most {MAX_MESSAGE_BYTES} accepted)")]
    TooLarge {
        /// Where its length prefix is.
        offset: usize,
        /// The length it declares.
        declared: u64,
    },
    /// The bytes are not a `StatusResponse`.
    #[error("status stream message at byte {offset} is not a StatusResponse: {message}")]
    Protobuf {
        /// Where the message starts.
        offset: usize,
        /// prost's description.
        message: String,
    },
    /// The solve-status JSON is not JSON of that shape.
    #[error("solve status JSON: {0}")]
    Json(String),
}

fn timestamp(t: Option<&PbTimestamp>) -> Option<Timestamp> {
    let t = t?;
    // Go's zero time.Time marshals as seconds = -62135596800; BuildKit
    // leaves `started` nil instead, but a zero value means "not set" too.
    if t.seconds <= 0 && t.nanos <= 0 {
        return None;
    }
    Timestamp::new(t.seconds, t.nanos).ok()
}

impl Status {
    fn merge(&mut self, update: Vertex) {
        // BuildKit resends a vertex whenever it changes: the first update
        // has no `started`, a later one adds it, the last adds `completed`
        // (or `error`). Later values win; unset ones keep the earlier value.
        match self.vertexes.iter_mut().find(|v| v.digest == update.digest) {
            Some(v) => {
                if !update.name.is_empty() {
                    v.name = update.name;
                }
                if !update.inputs.is_empty() {
                    v.inputs = update.inputs;
                }
                v.cached |= update.cached;
                v.started = v.started.or(update.started);
                v.completed = update.completed.or(v.completed);
                v.error = update.error.or(v.error.take());
            }
            None => self.vertexes.push(update),
        }
    }

    fn add_response(&mut self, response: StatusResponse) {
        for v in response.vertexes {
            let error = Some(v.error).filter(|e| !e.is_empty());
            self.merge(Vertex {
                started: timestamp(v.started.as_ref()),
                completed: timestamp(v.completed.as_ref()),
                digest: v.digest,
                inputs: v.inputs,
                name: v.name,
                cached: v.cached,
                error,
            });
        }
        for w in response.warnings {
            self.warnings.push((w.vertex, String::from_utf8_lossy(&w.short).into_owned()));
        }
        self.messages = self.messages.saturating_add(1);
    }
}

/// Decodes a status stream: 4-byte little-endian length, then that many
/// bytes of `StatusResponse`, repeated to the end.
///
/// # Errors
/// [`StatusError`] naming the byte offset of the first bad frame.
pub fn decode(mut bytes: &[u8]) -> Result<Status, StatusError> {
    use prost::Message as _;
    let mut status = Status::default();
    let mut offset = 0usize;
    while !bytes.is_empty() {
        let Some((prefix, rest)) = bytes.split_first_chunk::<4>() else {
            return Err(StatusError::Truncated { offset, what: "a 4-byte length prefix" });
        };
        let declared = u32::from_le_bytes(*prefix);
        let len = usize::try_from(declared).unwrap_or(usize::MAX);
        if len > MAX_MESSAGE_BYTES {
            return Err(StatusError::TooLarge { offset, declared: u64::from(declared) });
        }
        let Some((message, rest)) = rest.split_at_checked(len) else {
            return Err(StatusError::Truncated { offset: offset.saturating_add(4), what: "a StatusResponse" });
        };
        let start = offset.saturating_add(4);
        let response = StatusResponse::decode(message)
            .map_err(|e| StatusError::Protobuf { offset: start, message: e.to_string() })?;
        status.add_response(response);
        offset = start.saturating_add(len);
        bytes = rest;
    }
    Ok(status)
}

/// `client.Vertex` as JSON (moby/buildkit `client/graph.go`).
#[derive(Deserialize)]
struct JsonVertex {
    #[serde(default)]
    digest: String,
    #[serde(default)]
    inputs: Option<Vec<String>>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    cached: bool,
    #[serde(default)]
    started: Option<Timestamp>,
    #[serde(default)]
    completed: Option<Timestamp>,
    #[serde(default)]
    error: Option<String>,
}

/// `client.VertexWarning` as JSON; `short` is base64 bytes, kept as given.
#[derive(Deserialize)]
struct JsonWarning {
    #[serde(default)]
    vertex: String,
    #[serde(default)]
    short: Option<String>,
}

/// `client.SolveStatus` as JSON.
#[derive(Deserialize)]
struct JsonSolveStatus {
    #[serde(default)]
    vertexes: Option<Vec<JsonVertex>>,
    #[serde(default)]
    warnings: Option<Vec<JsonWarning>>,
}

/// Decodes solve-status JSON: `client.SolveStatus` objects one after the
/// other (one per line, as `--progress=rawjson` prints them), or a JSON
/// array of them.
///
/// # Errors
/// [`StatusError::Json`] when the text is not that.
pub fn decode_json(bytes: &[u8]) -> Result<Status, StatusError> {
    let mut status = Status::default();
    let trimmed = bytes.trim_ascii_start();
    let updates: Vec<JsonSolveStatus> = if trimmed.first() == Some(&b'[') {
        serde_json::from_slice(trimmed).map_err(|e| StatusError::Json(e.to_string()))?
    } else {
        serde_json::Deserializer::from_slice(trimmed)
            .into_iter::<JsonSolveStatus>()
            .collect::<Result<_, _>>()
            .map_err(|e| StatusError::Json(e.to_string()))?
    };
    for update in updates {
        for v in update.vertexes.unwrap_or_default() {
            status.merge(Vertex {
                digest: v.digest,
                inputs: v.inputs.unwrap_or_default(),
                name: v.name,
                cached: v.cached,
                started: v.started,
                completed: v.completed,
                error: v.error.filter(|e| !e.is_empty()),
            });
        }
        for w in update.warnings.unwrap_or_default() {
            status.warnings.push((w.vertex, w.short.unwrap_or_default()));
        }
        status.messages = status.messages.saturating_add(1);
    }
    Ok(status)
}

/// Encodes `responses` as a status stream (for tests, benches and fuzz
/// seeds: the same framing BuildKit's recorder writes).
#[must_use]
pub fn encode(responses: &[StatusResponse]) -> Vec<u8> {
    use prost::Message as _;
    let mut out = Vec::new();
    for r in responses {
        let body = r.encode_to_vec();
        let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&body);
    }
    out
}

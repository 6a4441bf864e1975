//! Steps as OpenTelemetry: OTLP trace and metric requests, encoded as
//! protobuf or OTLP/JSON, for an OTLP/HTTP exporter to POST to
//! `/v1/traces` and `/v1/metrics` (<https://opentelemetry.io/docs/specs/otlp/>).
//!
//! * Traces ([`traces`]): one span per step, kind `INTERNAL`, named after
//!   the step, from its start to its end, with the CI/CD semantic
//!   conventions' task attributes, the usage and verdicts under
//!   `stepmon.` ([`attributes`]), status `ERROR` and `error.type` when it
//!   failed. The spans are children of the `TRACEPARENT` span when the
//!   caller gives one ([`TraceParent`]), so they appear under the CI
//!   pipeline's (or BuildKit's) trace; otherwise each request is a new
//!   trace. BuildKit steps hang under one `build` span covering them all.
//! * Metrics ([`metrics`]): each step's sample series — CPU time, IO bytes
//!   and PSI stall time as cumulative monotonic sums, memory and task
//!   counts as gauges — with the step's identity on every point.
//!
//! Every step is its own `ResourceSpans`/`ResourceMetrics`: the resource
//! is `service.name=stepmon`, the caller's attributes (`host.name`) and
//! the step's CI context. Ids come from the caller (this crate does no
//! I/O, so no randomness).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod attributes;
mod metrics;
pub mod proto;
mod spans;
/// The W3C trace context parsers, from `stepmon-otlp-env` (where a builder
/// that exports its own spans finds them without this crate).
pub use stepmon_otlp_env::trace_context as traceparent;

pub use metrics::metrics;
pub use spans::traces;
/// How a request body is encoded (`OTEL_EXPORTER_OTLP_PROTOCOL`).
pub use stepmon_otlp_env::Encoding;
pub use traceparent::{TraceContextError, TraceParent};

use proto::common::{InstrumentationScope, KeyValue, Resource};

/// `message` as a request body in `encoding`.
#[must_use]
pub fn encode<M: prost::Message + serde::Serialize>(encoding: Encoding, message: &M) -> Vec<u8> {
    match encoding {
        Encoding::Protobuf => message.encode_to_vec(),
        // Serialising plain structs with string keys cannot fail.
        Encoding::Json => serde_json::to_vec(message).unwrap_or_default(),
    }
}

/// What the caller knows beyond the steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// Resource attributes beyond `service.name` and the CI context, e.g.
    /// `host.name`.
    pub resource: Vec<(String, String)>,
    /// The span the steps belong under (`TRACEPARENT`), if any.
    pub parent: Option<TraceParent>,
    /// `TRACESTATE`, already checked (empty when none).
    pub trace_state: String,
    /// The trace's id when there is no parent: 16 random bytes.
    pub new_trace_id: [u8; 16],
}

/// `service.name` of every resource (semantic conventions, "Service").
pub const SERVICE_NAME: &str = "stepmon";

/// The instrumentation scope: this crate.
fn scope() -> InstrumentationScope {
    InstrumentationScope { name: "stepmon".to_owned(), version: env!("CARGO_PKG_VERSION").to_owned() }
}

/// The resource of `step`: stepmon, the caller's attributes, the step's
/// CI context.
fn resource(context: &Context, step: Option<&stepmon_report::Step>) -> Resource {
    let mut out = attributes::Attributes::default();
    out.text("service.name", SERVICE_NAME);
    out.text("service.version", env!("CARGO_PKG_VERSION"));
    for (key, value) in &context.resource {
        out.text(key, value.clone());
    }
    if let Some(ci) = step.and_then(|s| s.run.as_ref()).and_then(|r| r.ci.as_ref()) {
        attributes::ci(ci, &mut out);
    }
    Resource { attributes: out.0 }
}

/// Nanoseconds since the Unix epoch; `None` before it.
fn unix_nanos(t: jiff::Timestamp) -> Option<u64> {
    u64::try_from(t.as_nanosecond()).ok()
}

/// The attribute `key` of `attributes`, for tests and callers reading a
/// request back.
#[must_use]
pub fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a proto::common::Value> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.as_ref()).and_then(|v| v.value.as_ref())
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

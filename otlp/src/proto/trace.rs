//! `opentelemetry/proto/trace/v1/trace.proto` and
//! `opentelemetry/proto/collector/trace/v1/trace_service.proto`.

use serde::Serialize;

use super::common::{InstrumentationScope, KeyValue, Resource};

/// `ExportTraceServiceRequest`: the body of `POST /v1/traces`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportTraceServiceRequest {
    /// `repeated ResourceSpans resource_spans = 1`.
    #[prost(message, repeated, tag = "1")]
    pub resource_spans: Vec<ResourceSpans>,
}

/// `ResourceSpans`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpans {
    /// `Resource resource = 1`.
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    /// `repeated ScopeSpans scope_spans = 2`.
    #[prost(message, repeated, tag = "2")]
    pub scope_spans: Vec<ScopeSpans>,
}

/// `ScopeSpans`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct ScopeSpans {
    /// `InstrumentationScope scope = 1`.
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    /// `repeated Span spans = 2`.
    #[prost(message, repeated, tag = "2")]
    pub spans: Vec<Span>,
}

/// `Span.SpanKind.SPAN_KIND_INTERNAL`.
pub const SPAN_KIND_INTERNAL: i32 = 1;
/// `Status.StatusCode.STATUS_CODE_OK`.
pub const STATUS_CODE_OK: i32 = 1;
/// `Status.StatusCode.STATUS_CODE_ERROR`.
pub const STATUS_CODE_ERROR: i32 = 2;

/// `Span`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// `bytes trace_id = 1` (16 bytes).
    #[prost(bytes = "vec", tag = "1")]
    #[serde(serialize_with = "super::hex")]
    pub trace_id: Vec<u8>,
    /// `bytes span_id = 2` (8 bytes).
    #[prost(bytes = "vec", tag = "2")]
    #[serde(serialize_with = "super::hex")]
    pub span_id: Vec<u8>,
    /// `string trace_state = 3` (W3C `tracestate`).
    #[prost(string, tag = "3")]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub trace_state: String,
    /// `bytes parent_span_id = 4`, empty for a root span.
    #[prost(bytes = "vec", tag = "4")]
    #[serde(serialize_with = "super::hex", skip_serializing_if = "Vec::is_empty")]
    pub parent_span_id: Vec<u8>,
    /// `string name = 5`.
    #[prost(string, tag = "5")]
    pub name: String,
    /// `SpanKind kind = 6`.
    #[prost(int32, tag = "6")]
    pub kind: i32,
    /// `fixed64 start_time_unix_nano = 7`.
    #[prost(fixed64, tag = "7")]
    #[serde(serialize_with = "super::u64_string")]
    pub start_time_unix_nano: u64,
    /// `fixed64 end_time_unix_nano = 8`.
    #[prost(fixed64, tag = "8")]
    #[serde(serialize_with = "super::u64_string")]
    pub end_time_unix_nano: u64,
    /// `repeated KeyValue attributes = 9`.
    #[prost(message, repeated, tag = "9")]
    pub attributes: Vec<KeyValue>,
    /// `Status status = 15`.
    #[prost(message, optional, tag = "15")]
    pub status: Option<Status>,
}

/// `Status`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct Status {
    /// `string message = 2` (field 1 is reserved).
    #[prost(string, tag = "2")]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// `StatusCode code = 3`.
    #[prost(int32, tag = "3")]
    pub code: i32,
}

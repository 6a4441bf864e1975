//! The OTLP messages stepmon sends, written out by hand from the official
//! [opentelemetry-proto] `.proto` files (v1.x, package
//! `opentelemetry.proto.*.v1`) with prost's derive, so that no `protoc` or
//! build script is needed. Field numbers and types are the `.proto`
//! files'; messages and fields stepmon never sets are left out (a decoder
//! skips nothing it does not see). Enum fields are `int32` on the wire,
//! which is how protobuf encodes an enum; their values are constants here.
//!
//! The same structs serialise to OTLP/JSON with serde
//! (<https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding>):
//! lowerCamelCase field names, enums as integers, 64-bit integers as
//! decimal strings (the proto3 JSON mapping), and `traceId`, `spanId`,
//! `parentSpanId` as lowercase hex rather than the mapping's base64.
//!
//! [opentelemetry-proto]: https://github.com/open-telemetry/opentelemetry-proto

pub mod common;
pub mod metrics;
pub mod trace;

/// proto3 JSON writes 64-bit integers as decimal strings (JavaScript's
/// numbers cannot hold them exactly).
pub(crate) fn u64_string<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// As [`u64_string`], signed.
pub(crate) fn i64_string<S: serde::Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// OTLP/JSON's ids: lowercase hex, not base64 (OTLP specification, "JSON
/// Protobuf Encoding").
pub(crate) fn hex<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&Hex(bytes))
}

/// Bytes shown as lowercase hex.
pub(crate) struct Hex<'a>(pub &'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

//! The OpenTelemetry exporter's environment, without an exporter: what a
//! builder or CI tool that sends its own spans needs to honour the same
//! variables every OpenTelemetry SDK honours.
//!
//! * [`Config::from_env`]: the `OTEL_EXPORTER_OTLP_*` variables of the OTLP
//!   exporter specification
//!   (<https://opentelemetry.io/docs/specs/otel/protocol/exporter/>) for
//!   OTLP/HTTP: each signal's URL, headers, timeout, encoding, compression
//!   and CA file, a signal's own variable winning over the generic one.
//! * [`trace_context`]: the W3C Trace Context (<https://www.w3.org/TR/trace-context/>)
//!   a CI system or BuildKit hands down in `TRACEPARENT` and `TRACESTATE`
//!   ([`Inherited::from_env`]), parsed strictly.
//!
//! No I/O and no dependency but `thiserror`: the environment is read
//! through the caller's function, so tests and embedders pass their own.
//! Malformed input is a typed error, never a panic.
//!
//! ```
//! use stepmon_otlp_env::{Config, Encoding, Inherited};
//!
//! let env = |name: &str| match name {
//!     "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("https://collector:4318".to_owned()),
//!     "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL" => Some("http/json".to_owned()),
//!     "TRACEPARENT" => Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned()),
//!     _ => None,
//! };
//! let config = Config::from_env(env)?;
//! assert_eq!(config.traces.url, "https://collector:4318/v1/traces");
//! assert_eq!(config.metrics.encoding, Encoding::Json);
//! let (inherited, ignored) = Inherited::from_env(env);
//! assert!(ignored.is_empty());
//! assert_eq!(inherited.parent.unwrap().parent_id, [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
//! # Ok::<(), stepmon_otlp_env::ConfigError>(())
//! ```
#![deny(missing_docs)]

mod config;
mod headers;
pub mod trace_context;

pub use config::{Config, ConfigError, DEFAULT_ENDPOINT, DEFAULT_TIMEOUT_MS, Encoding, Signal};
pub use headers::HeaderError;
pub use trace_context::{Ignored, Inherited, TraceContextError, TraceParent};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

//! The `OTEL_EXPORTER_OTLP_*` variables of the OTLP exporter specification
//! (<https://opentelemetry.io/docs/specs/otel/protocol/exporter/>), for
//! OTLP/HTTP.

use std::time::Duration;

use crate::headers::{self, HeaderError};

/// The default endpoint of OTLP/HTTP (the specification's
/// `http://localhost:4318`).
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";
/// The default timeout of one export, ms (`OTEL_EXPORTER_OTLP_TIMEOUT`).
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// How a request body is encoded (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Binary protobuf (`http/protobuf`, the OTLP default).
    Protobuf,
    /// OTLP/JSON (`http/json`).
    Json,
}

impl Encoding {
    /// The request's `Content-Type`.
    #[must_use]
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }
}

/// Where and how one signal (traces or metrics) is exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    /// The full URL the request is POSTed to.
    pub url: String,
    /// Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`, then the
    /// signal's own, which replace a header of the same name).
    pub headers: Vec<(String, String)>,
    /// The whole export's timeout.
    pub timeout: Duration,
    /// The body's encoding.
    pub encoding: Encoding,
    /// A PEM file of trusted CAs (`OTEL_EXPORTER_OTLP_CERTIFICATE`) instead
    /// of the system's roots.
    pub certificate: Option<String>,
    /// Whether the body is gzip'd (`OTEL_EXPORTER_OTLP_COMPRESSION=gzip`).
    pub gzip: bool,
}

/// Both signals' settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `/v1/traces`.
    pub traces: Signal,
    /// `/v1/metrics`.
    pub metrics: Signal,
}

/// Why the variables cannot configure an OTLP/HTTP export. Each names the
/// variable it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// An endpoint that is not an `http://` or `https://` URL.
    #[error("OTLP endpoint {0:?}: expected an http:// or https:// URL")]
    Endpoint(String),
    /// A headers variable that is not `key=value,...`.
    #[error("{variable}: {error}")]
    Headers {
        /// `OTEL_EXPORTER_OTLP_HEADERS` or a signal's own.
        variable: String,
        /// What is wrong with it.
        error: HeaderError,
    },
    /// A timeout that is not whole milliseconds.
    #[error("{variable}={value:?}: expected milliseconds, a whole number")]
    Timeout {
        /// The variable.
        variable: String,
        /// Its value.
        value: String,
    },
    /// A protocol other than `http/protobuf` and `http/json` (`grpc`).
    #[error("{variable}={value:?}: only OTLP/HTTP is supported (http/protobuf or http/json), not gRPC")]
    Protocol {
        /// The variable.
        variable: String,
        /// Its value.
        value: String,
    },
    /// A compression other than `gzip` and `none`.
    #[error("{variable}={value:?}: expected gzip or none")]
    Compression {
        /// The variable.
        variable: String,
        /// Its value.
        value: String,
    },
}

impl Config {
    /// The settings from the environment, read through `var` (e.g.
    /// `|name| std::env::var(name).ok()`); empty values count as unset. A
    /// signal-specific variable (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
    /// wins over the generic one; a signal-specific endpoint is used as it
    /// is, the generic one gets `v1/traces` or `v1/metrics` appended.
    ///
    /// # Errors
    /// The first variable that cannot be used, as a [`ConfigError`].
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let signal = |name: &str, path: &str| -> Result<Signal, ConfigError> {
            let pick = |what: &str| {
                let specific = format!("OTEL_EXPORTER_OTLP_{name}_{what}");
                var(&specific).map(|v| (specific, v)).or_else(|| {
                    let generic = format!("OTEL_EXPORTER_OTLP_{what}");
                    var(&generic).map(|v| (generic, v))
                })
            };
            let url = match var(&format!("OTEL_EXPORTER_OTLP_{name}_ENDPOINT")) {
                Some(url) => url.trim().to_owned(),
                None => {
                    let base = var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
                    format!("{}/{path}", base.trim().trim_end_matches('/'))
                }
            };
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Endpoint(url));
            }
            let headers_of = |variable: &str, text: &str| {
                headers::parse(text).map_err(|error| ConfigError::Headers { variable: variable.to_owned(), error })
            };
            let mut headers = match var("OTEL_EXPORTER_OTLP_HEADERS") {
                Some(text) => headers_of("OTEL_EXPORTER_OTLP_HEADERS", &text)?,
                None => Vec::new(),
            };
            let specific = format!("OTEL_EXPORTER_OTLP_{name}_HEADERS");
            if let Some(text) = var(&specific) {
                for (key, value) in headers_of(&specific, &text)? {
                    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&key));
                    headers.push((key, value));
                }
            }
            let timeout = match pick("TIMEOUT") {
                Some((variable, value)) => {
                    value.trim().parse::<u64>().map_err(|_| ConfigError::Timeout { variable, value })?
                }
                None => DEFAULT_TIMEOUT_MS,
            };
            let encoding = match pick("PROTOCOL") {
                None => Encoding::Protobuf,
                Some((_, p)) if p.trim() == "http/protobuf" => Encoding::Protobuf,
                Some((_, p)) if p.trim() == "http/json" => Encoding::Json,
                Some((variable, value)) => return Err(ConfigError::Protocol { variable, value }),
            };
            // The specification's two values; "none" is the default.
            let gzip = match pick("COMPRESSION") {
                None => false,
                Some((_, c)) if c.trim() == "none" => false,
                Some((_, c)) if c.trim() == "gzip" => true,
                Some((variable, value)) => return Err(ConfigError::Compression { variable, value }),
            };
            Ok(Signal {
                url,
                headers,
                timeout: Duration::from_millis(timeout),
                encoding,
                certificate: pick("CERTIFICATE").map(|(_, path)| path),
                gzip,
            })
        };
        Ok(Config { traces: signal("TRACES", "v1/traces")?, metrics: signal("METRICS", "v1/metrics")? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn endpoints_per_the_exporter_spec() {
        let c = Config::from_env(env(&[])).unwrap();
        assert_eq!(c.traces.url, "http://localhost:4318/v1/traces");
        assert_eq!((c.traces.timeout, c.traces.encoding), (Duration::from_secs(10), Encoding::Protobuf));
        let c = Config::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318/otlp/"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:9/custom"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "250"),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/etc/ca.pem"),
        ]))
        .unwrap();
        assert_eq!(c.traces.url, "https://collector:4318/otlp/v1/traces");
        assert_eq!(c.metrics.url, "http://m:9/custom");
        assert_eq!((c.traces.encoding, c.metrics.encoding), (Encoding::Protobuf, Encoding::Json));
        assert_eq!(c.metrics.timeout, Duration::from_millis(250));
        assert_eq!(c.metrics.certificate.as_deref(), Some("/etc/ca.pem"));
        let err = |pairs: &[(&str, &str)]| Config::from_env(env(pairs)).unwrap_err();
        assert!(matches!(err(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]), ConfigError::Protocol { .. }));
        assert!(matches!(err(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "1s")]), ConfigError::Timeout { .. }));
        assert!(matches!(err(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")]), ConfigError::Endpoint(_)));
        let e = err(&[("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "novalue")]);
        assert_eq!(
            e,
            ConfigError::Headers {
                variable: "OTEL_EXPORTER_OTLP_METRICS_HEADERS".into(),
                error: HeaderError::NoEquals("novalue".into())
            }
        );
    }

    #[test]
    fn headers_are_percent_decoded_and_signal_ones_win() {
        let c = Config::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b, x-tenant=one"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-Tenant=two"),
        ]))
        .unwrap();
        assert_eq!(
            c.traces.headers,
            vec![("api-key".to_owned(), "a b".to_owned()), ("X-Tenant".to_owned(), "two".to_owned())]
        );
        assert_eq!(c.metrics.headers[1], ("x-tenant".to_owned(), "one".to_owned()));
    }

    #[test]
    fn compression_is_gzip_or_none_per_signal() {
        let c = Config::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
            ("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "none"),
        ]))
        .unwrap();
        assert!(c.traces.gzip && !c.metrics.gzip);
        assert!(!Config::from_env(env(&[])).unwrap().traces.gzip, "none by default");
        let e = Config::from_env(env(&[("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "zstd")])).unwrap_err();
        assert_eq!(e.to_string(), "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=\"zstd\": expected gzip or none");
    }
}

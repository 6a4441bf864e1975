//! `--otlp`: steps to an OpenTelemetry collector over OTLP/HTTP, configured
//! as every OpenTelemetry exporter is, by the `OTEL_EXPORTER_OTLP_*`
//! variables of the OTLP exporter specification
//! (<https://opentelemetry.io/docs/specs/otel/protocol/exporter/>). The
//! requests are built by `stepmon_report::export::otlp`; this module reads
//! the environment, makes the ids and POSTs. What fails here is a warning.

use std::time::Duration;

use stepmon_report::Step;
use stepmon_report::export::otlp::{self, Context, Encoding, TraceParent};

/// The default endpoint of OTLP/HTTP (the specification's
/// `http://localhost:4318`).
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";
/// The default timeout of one export, ms (`OTEL_EXPORTER_OTLP_TIMEOUT`).
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Attempts of one export when the answer says to retry (429, 502, 503,
/// 504: the specification's retryable codes) or the connection is
/// refused (a collector restarting); the waits double from
/// [`FIRST_WAIT`], within the timeout.
#[cfg(feature = "otlp")]
pub const ATTEMPTS: u32 = 3;
/// The wait before the second attempt.
#[cfg(feature = "otlp")]
pub const FIRST_WAIT: Duration = Duration::from_millis(250);

/// Where and how one signal (traces or metrics) is exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    /// The full URL the request is POSTed to.
    pub url: String,
    /// Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`).
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

/// `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas,
/// values percent-decoded (the W3C Baggage format the specification
/// names).
fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').ok_or_else(|| format!("header {pair:?} has no '='"))?;
            let key = key.trim();
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b)) {
                return Err(format!("header name {key:?} is not an HTTP token"));
            }
            Ok((key.to_owned(), percent_decode(value.trim())?))
        })
        .collect()
}

/// `%XX` escapes decoded; the result must be UTF-8.
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or_else(|| format!("{text:?}: a '%' is not followed by two hex digits"))?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{text:?} is not UTF-8 once decoded"))
}

impl Config {
    /// The settings from the environment, read through `var`. A
    /// signal-specific variable (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
    /// wins over the generic one; a signal-specific endpoint is used as
    /// it is, the generic one gets `v1/traces` or `v1/metrics` appended.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let signal = |name: &str, path: &str| -> Result<Signal, String> {
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
                return Err(format!("OTLP endpoint {url:?}: expected an http:// or https:// URL"));
            }
            let mut headers = match var("OTEL_EXPORTER_OTLP_HEADERS") {
                Some(text) => parse_headers(&text).map_err(|e| format!("OTEL_EXPORTER_OTLP_HEADERS: {e}"))?,
                None => Vec::new(),
            };
            let specific = format!("OTEL_EXPORTER_OTLP_{name}_HEADERS");
            if let Some(text) = var(&specific) {
                for (key, value) in parse_headers(&text).map_err(|e| format!("{specific}: {e}"))? {
                    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&key));
                    headers.push((key, value));
                }
            }
            let timeout = match pick("TIMEOUT") {
                Some((name, text)) => text
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| format!("{name}={text:?}: expected milliseconds, a whole number"))?,
                None => DEFAULT_TIMEOUT_MS,
            };
            let encoding = match pick("PROTOCOL") {
                None => Encoding::Protobuf,
                Some((_, p)) if p == "http/protobuf" => Encoding::Protobuf,
                Some((_, p)) if p == "http/json" => Encoding::Json,
                Some((name, p)) => {
                    return Err(format!(
                        "{name}={p:?}: stepmon exports over OTLP/HTTP only (http/protobuf or http/json), not gRPC"
                    ));
                }
            };
            // The specification's two values; "none" is the default.
            let gzip = match pick("COMPRESSION") {
                None => false,
                Some((_, c)) if c.trim() == "none" => false,
                Some((_, c)) if c.trim() == "gzip" => true,
                Some((name, c)) => return Err(format!("{name}={c:?}: expected gzip or none")),
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

/// `n` random bytes from the kernel (`/dev/urandom`, random(4)).
fn random<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(bytes)
}

/// Random bytes, never all zero (W3C Trace Context: an all-zero id is
/// invalid).
fn id<const N: usize>() -> std::io::Result<[u8; N]> {
    loop {
        let bytes = random::<N>()?;
        if bytes != [0; N] {
            return Ok(bytes);
        }
    }
}

/// The parent from `TRACEPARENT` and `TRACESTATE`; what was wrong with
/// them, as warnings (the steps then start a new trace).
fn parent(var: &dyn Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> (Option<TraceParent>, String) {
    let Some(text) = var("TRACEPARENT").filter(|t| !t.is_empty()) else { return (None, String::new()) };
    match text.parse::<TraceParent>() {
        Ok(parent) => {
            let state = match var("TRACESTATE").filter(|t| !t.is_empty()) {
                Some(state) => match otlp::traceparent::check_trace_state(&state) {
                    Ok(state) => state.to_owned(),
                    Err(e) => {
                        warnings.push(format!("OTLP: TRACESTATE ignored: {e}"));
                        String::new()
                    }
                },
                None => String::new(),
            };
            (Some(parent), state)
        }
        Err(e) => {
            warnings.push(format!("OTLP: TRACEPARENT ignored, the steps start a new trace: {e}"));
            (None, String::new())
        }
    }
}

/// Exports `steps` as traces and metrics; the warnings (empty when both
/// were accepted). `var` reads the environment (`TRACEPARENT`).
pub fn export(config: &Config, steps: &[Step], var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut warnings = Vec::new();
    let (parent, trace_state) = parent(var, &mut warnings);
    let new_trace_id = match id::<16>() {
        Ok(id) => id,
        Err(e) => return vec![format!("OTLP: nothing exported: cannot read /dev/urandom for the trace id: {e}")],
    };
    let mut resource = Vec::new();
    if let Ok(host) = crate::fleet::hostname() {
        resource.push(("host.name".to_owned(), host));
    }
    let context = Context { resource, parent, trace_state, new_trace_id };
    let mut id_error = None;
    let mut next_span_id = || {
        id::<8>().unwrap_or_else(|e| {
            id_error = Some(e.to_string());
            [0; 8]
        })
    };
    let (traces, untimed) = otlp::traces(steps, &context, &mut next_span_id);
    if let Some(e) = id_error {
        return vec![format!("OTLP: nothing exported: cannot read /dev/urandom for the span ids: {e}")];
    }
    for name in untimed {
        warnings.push(format!("OTLP: step {name:?} has no start and no sample: no span"));
    }
    let metrics = otlp::metrics(steps, &context);
    if !traces.resource_spans.is_empty() {
        warnings.extend(send(&config.traces, "traces", &config.traces.encoding.encode(&traces)).err());
    }
    if !metrics.resource_metrics.is_empty() {
        warnings.extend(send(&config.metrics, "metrics", &config.metrics.encoding.encode(&metrics)).err());
    }
    warnings
}

/// Refuses, before a step runs, an export that cannot work at all.
pub fn check(var: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
    if cfg!(not(feature = "otlp")) {
        return Err("--otlp: this stepmon was built without the `otlp` feature".to_owned());
    }
    Config::from_env(var)
}

/// What to look at when the handshake fails.
#[cfg(feature = "otlp")]
const TLS_HINT: &str = "is the collector's certificate signed by a CA in the system's roots, \
     SSL_CERT_FILE or OTEL_EXPORTER_OTLP_CERTIFICATE, for the endpoint's host name?";

/// POSTs one request; the warning when it was not accepted.
#[cfg(feature = "otlp")]
fn send(signal: &Signal, what: &str, body: &[u8]) -> Result<(), String> {
    let fail = |why: String| format!("OTLP {what} export to {} failed: {why}", signal.url);
    let roots = match &signal.certificate {
        None => ureq::tls::RootCerts::PlatformVerifier,
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| fail(format!("cannot read OTEL_EXPORTER_OTLP_CERTIFICATE {path}: {e}")))?;
            let certs: Vec<_> = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
                    _ => None,
                })
                .collect();
            if certs.is_empty() {
                return Err(fail(format!("no certificate in OTEL_EXPORTER_OTLP_CERTIFICATE {path}")));
            }
            ureq::tls::RootCerts::new_with_certs(&certs)
        }
    };
    let gzipped;
    let body = if signal.gzip {
        gzipped = gzip(body).map_err(|e| fail(format!("cannot gzip the body: {e}")))?;
        &gzipped[..]
    } else {
        body
    };
    let deadline = std::time::Instant::now() + signal.timeout;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(signal.timeout))
        .http_status_as_error(false)
        .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build())
        .build()
        .into();
    let mut wait = FIRST_WAIT;
    let mut last = String::new();
    for attempt in 1..=ATTEMPTS {
        if attempt > 1 {
            if std::time::Instant::now() + wait >= deadline {
                break;
            }
            std::thread::sleep(wait);
            wait *= 2;
        }
        let mut request = agent.post(&signal.url).header("Content-Type", signal.encoding.content_type());
        if signal.gzip {
            request = request.header("Content-Encoding", "gzip");
        }
        for (key, value) in &signal.headers {
            request = request.header(key, value);
        }
        match request.send(body) {
            Ok(answer) if answer.status().is_success() => return Ok(()),
            Ok(mut answer) => {
                let status = answer.status();
                let text = answer.body_mut().with_config().limit(4096).read_to_string().unwrap_or_default();
                last = format!("HTTP {status}: {}", text.trim());
                if ![429, 502, 503, 504].contains(&status.as_u16()) {
                    break;
                }
            }
            Err(ureq::Error::Timeout(_)) => {
                last = format!("no answer within {} ms (OTEL_EXPORTER_OTLP_TIMEOUT)", signal.timeout.as_millis());
                break;
            }
            Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                "connection refused: is the collector running?".clone_into(&mut last);
            }
            // rustls' stream reports a failed handshake as InvalidData.
            Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                last = format!("TLS: {e} ({TLS_HINT})");
                break;
            }
            Err(e @ ureq::Error::Rustls(_)) => {
                last = format!("TLS: {e} ({TLS_HINT})");
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(fail(last))
}

/// `body` gzip'd (RFC 1952), as `Content-Encoding: gzip` says.
#[cfg(feature = "otlp")]
fn gzip(body: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 4), flate2::Compression::fast());
    encoder.write_all(body)?;
    encoder.finish()
}

/// Without the `otlp` feature [`check`] refuses `--otlp` first.
#[cfg(not(feature = "otlp"))]
fn send(signal: &Signal, what: &str, _body: &[u8]) -> Result<(), String> {
    Err(format!("OTLP {what} export to {}: built without the `otlp` feature", signal.url))
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
        ]))
        .unwrap();
        assert_eq!(c.traces.url, "https://collector:4318/otlp/v1/traces");
        assert_eq!(c.metrics.url, "http://m:9/custom");
        assert_eq!((c.traces.encoding, c.metrics.encoding), (Encoding::Protobuf, Encoding::Json));
        assert_eq!(c.metrics.timeout, Duration::from_millis(250));
        for bad in [
            [("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            [("OTEL_EXPORTER_OTLP_TIMEOUT", "1s")],
            [("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")],
            [("OTEL_EXPORTER_OTLP_HEADERS", "novalue")],
        ] {
            assert!(Config::from_env(env(&bad)).is_err(), "{bad:?}");
        }
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
        assert!(percent_decode("%zz").is_err() && percent_decode("%4").is_err());
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
        assert!(e.contains("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION") && e.contains("gzip or none"), "{e}");
    }

    #[cfg(feature = "otlp")]
    #[test]
    fn a_gzipped_body_inflates_to_itself() {
        let body = b"{\"resourceSpans\":[]}".repeat(100);
        let packed = gzip(&body).unwrap();
        assert!(packed.len() < body.len() / 4);
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&packed[..]), &mut out).unwrap();
        assert_eq!(out, body);
    }
}

//! `--otlp`: steps to an OpenTelemetry collector over OTLP/HTTP, configured
//! as every OpenTelemetry exporter is, by the `OTEL_EXPORTER_OTLP_*`
//! variables and `TRACEPARENT` (read by `stepmon_otlp_env`). The requests
//! are built by `stepmon_otlp`; this module makes the ids
//! and POSTs through [`crate::http`]. What fails here is a warning.

use std::time::Duration;

use stepmon_otlp::{self as otlp, Context};
use stepmon_otlp_env::{Config, Inherited, Signal};
use stepmon_report::Step;

use crate::http::{self, Method, Request, Roots};

/// Attempts of one export when the answer says to retry (429, 502, 503,
/// 504: the specification's retryable codes) or the connection is
/// refused (a collector restarting); the waits double from
/// [`FIRST_WAIT`], within the timeout.
pub const ATTEMPTS: u32 = 3;
/// The wait before the second attempt.
pub const FIRST_WAIT: Duration = Duration::from_millis(250);

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

/// Exports `steps` as traces and metrics; the warnings (empty when both
/// were accepted). `var` reads the environment (`TRACEPARENT`); `host` is
/// the resource's `host.name`, when known.
pub fn export(
    config: &Config,
    steps: &[Step],
    var: &dyn Fn(&str) -> Option<String>,
    host: Option<String>,
) -> Vec<String> {
    let (Inherited { parent, trace_state }, ignored) = Inherited::from_env(var);
    let mut warnings: Vec<String> = ignored.iter().map(|why| format!("OTLP: {why}")).collect();
    let new_trace_id = match id::<16>() {
        Ok(id) => id,
        Err(e) => return vec![format!("OTLP: nothing exported: cannot read /dev/urandom for the trace id: {e}")],
    };
    let resource = host.map(|host| ("host.name".to_owned(), host)).into_iter().collect();
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
        warnings.extend(send(&config.traces, "traces", &otlp::encode(config.traces.encoding, &traces)).err());
    }
    if !metrics.resource_metrics.is_empty() {
        warnings.extend(send(&config.metrics, "metrics", &otlp::encode(config.metrics.encoding, &metrics)).err());
    }
    warnings
}

/// Refuses, before a step runs, an export that cannot work at all.
pub fn check(var: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
    let config = Config::from_env(var).map_err(|e| e.to_string())?;
    for signal in [&config.traces, &config.metrics] {
        http::check_scheme(&signal.url).map_err(|e| format!("OTLP endpoint {e}"))?;
    }
    Ok(config)
}

/// The specification's retryable answers.
fn retryable(status: u16) -> bool {
    [429, 502, 503, 504].contains(&status)
}

/// POSTs one request; the warning when it was not accepted.
fn send(signal: &Signal, what: &str, body: &[u8]) -> Result<(), String> {
    let fail = |why: String| format!("OTLP {what} export to {} failed: {why}", signal.url);
    let gzipped;
    let body = if signal.gzip {
        gzipped = gzip(body).map_err(|e| fail(format!("cannot gzip the body: {e}")))?;
        &gzipped[..]
    } else {
        body
    };
    let mut headers = vec![("Content-Type", signal.encoding.content_type())];
    if signal.gzip {
        headers.push(("Content-Encoding", "gzip"));
    }
    headers.extend(signal.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let roots = match &signal.certificate {
        None => Roots::System,
        Some(path) => Roots::File { path, variable: "OTEL_EXPORTER_OTLP_CERTIFICATE" },
    };
    http::send(&Request {
        method: Method::Post,
        url: &signal.url,
        headers,
        body,
        attempt_timeout: signal.timeout,
        timeout_variable: "OTEL_EXPORTER_OTLP_TIMEOUT",
        total: signal.timeout,
        attempts: ATTEMPTS,
        first_wait: FIRST_WAIT,
        retry_status: retryable,
        roots,
    })
    .map_err(fail)
}

/// `body` gzip'd (RFC 1952), as `Content-Encoding: gzip` says.
fn gzip(body: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 4), flate2::Compression::fast());
    encoder.write_all(body)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gzipped_body_inflates_to_itself() {
        let body = b"{\"resourceSpans\":[]}".repeat(100);
        let packed = gzip(&body).unwrap();
        assert!(packed.len() < body.len() / 4);
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&packed[..]), &mut out).unwrap();
        assert_eq!(out, body);
    }

    #[test]
    fn https_needs_the_tls_feature() {
        let env = |name: &str| (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "https://c:4318".to_owned());
        assert_eq!(check(env).is_ok(), cfg!(feature = "tls"));
    }
}

//! The CLI's one HTTP client, for the Pushgateway push ([`crate::push`])
//! and the OTLP export ([`crate::otlp`]): ureq, blocking, one request with
//! a timeout and a few retries. Built on the first push or export, never
//! on a run that asks for neither. `HTTP(S)_PROXY`, `ALL_PROXY` and
//! `NO_PROXY` are honoured as ureq reads them. https needs the `tls`
//! feature (rustls with the ring provider, the system's roots through the
//! platform verifier); without it an https URL is refused up front.

use std::time::{Duration, Instant};

/// The request method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Pushgateway's replace-the-group.
    Put,
    /// OTLP/HTTP's export.
    Post,
}

/// Whose CAs an https server's certificate is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roots<'a> {
    /// The system's (`SSL_CERT_FILE`, `SSL_CERT_DIR`, the distribution's bundle).
    System,
    /// The certificates of this PEM file, named by `variable`.
    File {
        /// The file.
        path: &'a str,
        /// Where the user gave it (`OTEL_EXPORTER_OTLP_CERTIFICATE`).
        variable: &'a str,
    },
}

/// One request and how hard to try.
#[derive(Debug)]
pub struct Request<'a> {
    /// PUT or POST.
    pub method: Method,
    /// `http://…` or `https://…`.
    pub url: &'a str,
    /// Headers beyond the client's own.
    pub headers: Vec<(&'a str, &'a str)>,
    /// The body.
    pub body: &'a [u8],
    /// How long one attempt may take, whole (connect, send, answer).
    pub attempt_timeout: Duration,
    /// Where the user set `attempt_timeout`, for the message of a timeout
    /// (`OTEL_EXPORTER_OTLP_TIMEOUT`); empty when it is fixed.
    pub timeout_variable: &'a str,
    /// How long all attempts and the waits between them may take.
    pub total: Duration,
    /// Attempts at most; the waits between them double from `first_wait`.
    pub attempts: u32,
    /// The wait before the second attempt.
    pub first_wait: Duration,
    /// Which answers are worth another attempt (connection errors and
    /// timeouts always are, within `total`).
    pub retry_status: fn(u16) -> bool,
    /// The CAs of https.
    pub roots: Roots<'a>,
}

/// Whether `url` can be requested by this build.
pub fn check_scheme(url: &str) -> Result<(), String> {
    if url.starts_with("http://") && url.len() > "http://".len() {
        Ok(())
    } else if url.starts_with("https://") && url.len() > "https://".len() {
        if cfg!(feature = "tls") {
            Ok(())
        } else {
            Err(format!("{url}: this stepmon was built without the `tls` feature: use http:// or a local proxy"))
        }
    } else {
        Err(format!("{url}: expected an http:// or https:// URL"))
    }
}

/// What to look at when the handshake fails.
#[cfg(feature = "tls")]
const TLS_HINT: &str = "is the server's certificate signed by a CA in the system's roots, \
     SSL_CERT_FILE or OTEL_EXPORTER_OTLP_CERTIFICATE, for the URL's host name?";

/// `Ok` on a 2xx answer; else why the last attempt failed.
pub fn send(request: &Request<'_>) -> Result<(), String> {
    check_scheme(request.url)?;
    let agent = agent(request)?;
    let deadline = Instant::now() + request.total;
    let mut wait = request.first_wait;
    let mut last = String::new();
    for attempt in 1..=request.attempts {
        if attempt > 1 {
            if Instant::now() + wait >= deadline {
                break;
            }
            std::thread::sleep(wait);
            wait *= 2;
        }
        let answer = match request.method {
            Method::Put => with_headers(agent.put(request.url), request).send(request.body),
            Method::Post => with_headers(agent.post(request.url), request).send(request.body),
        };
        match answer {
            Ok(answer) if answer.status().is_success() => return Ok(()),
            Ok(mut answer) => {
                let status = answer.status();
                let text = answer.body_mut().with_config().limit(4096).read_to_string().unwrap_or_default();
                last = format!("HTTP {status}: {}", text.trim());
                if !(request.retry_status)(status.as_u16()) {
                    break;
                }
            }
            Err(ureq::Error::Timeout(_)) => {
                last = format!("no answer within {} ms", request.attempt_timeout.as_millis());
                if !request.timeout_variable.is_empty() {
                    last = format!("{last} ({})", request.timeout_variable);
                }
            }
            Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                "connection refused: is the server running?".clone_into(&mut last);
            }
            // rustls' stream reports a failed handshake as InvalidData.
            #[cfg(feature = "tls")]
            Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                last = format!("TLS: {e} ({TLS_HINT})");
                break;
            }
            #[cfg(feature = "tls")]
            Err(e @ ureq::Error::Rustls(_)) => {
                last = format!("TLS: {e} ({TLS_HINT})");
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

fn with_headers<B>(mut builder: ureq::RequestBuilder<B>, request: &Request<'_>) -> ureq::RequestBuilder<B> {
    for (key, value) in &request.headers {
        builder = builder.header(*key, *value);
    }
    builder
}

/// The agent of `request`: its timeout, answers as values (not errors),
/// and with `tls` its roots.
fn agent(request: &Request<'_>) -> Result<ureq::Agent, String> {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(request.attempt_timeout.min(request.total)))
        .http_status_as_error(false);
    #[cfg(feature = "tls")]
    let config = config.tls_config(ureq::tls::TlsConfig::builder().root_certs(roots(request.roots)?).build());
    #[cfg(not(feature = "tls"))]
    let Roots::System = request.roots else {
        return Err("a CA file is given, but this stepmon was built without the `tls` feature".to_owned());
    };
    Ok(config.build().into())
}

/// The roots ureq checks with.
#[cfg(feature = "tls")]
fn roots(roots: Roots<'_>) -> Result<ureq::tls::RootCerts, String> {
    let Roots::File { path, variable } = roots else { return Ok(ureq::tls::RootCerts::PlatformVerifier) };
    let pem = std::fs::read(path).map_err(|e| format!("cannot read {variable} {path}: {e}"))?;
    let certs: Vec<_> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err(format!("no certificate in {variable} {path}"));
    }
    Ok(ureq::tls::RootCerts::new_with_certs(&certs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert!(check_scheme("http://127.0.0.1:9091").is_ok());
        assert_eq!(check_scheme("https://pg").is_ok(), cfg!(feature = "tls"));
        assert!(check_scheme("pg:9091").is_err() && check_scheme("http://").is_err());
    }
}

//! A Pushgateway push: the grouping key as a URL path, one HTTP PUT with a
//! timeout, a few retries.
//!
//! The API (<https://github.com/prometheus/pushgateway#api>): `PUT
//! /metrics/job/<JOB>{/<LABEL_NAME>/<LABEL_VALUE>}` replaces every metric
//! of that group with the body (text format 0.0.4). A value that is not a
//! plain path segment is sent as `<LABEL_NAME>@base64/<base64url of the
//! value>` (RFC 4648 §5; the empty value is `=`), which Pushgateway decodes.

use std::time::Duration;

/// How long one attempt may take, whole (connect, send, answer), s.
pub const TIMEOUT_SECONDS: u64 = 5;
/// Attempts per push; the waits between them double from [`FIRST_WAIT`].
pub const ATTEMPTS: u32 = 3;
/// The wait before the second attempt.
pub const FIRST_WAIT: Duration = Duration::from_millis(250);

/// The grouping key of one step's push.
#[derive(Debug, Clone)]
pub struct Grouping {
    /// `job`.
    pub job: String,
    /// `instance` (the host name by default).
    pub instance: String,
    /// `step`: the step's name.
    pub step: String,
}

/// RFC 4648 §5 base64url with padding.
fn base64url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE.encode(bytes)
}

/// `/<name>/<value>`, or `/<name>@base64/<base64url>` when the value is not
/// made of URL-unreserved characters only (RFC 3986 §2.3) or is a dot
/// segment, so that no `/`, `%`, space or byte beyond ASCII reaches the path.
fn segment(name: &str, value: &str) -> String {
    let plain = !value.is_empty()
        && value != "."
        && value != ".."
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    if plain {
        format!("/{name}/{value}")
    } else if value.is_empty() {
        // Pushgateway's spelling of the empty value: a lone padding sign.
        format!("/{name}@base64/=")
    } else {
        format!("/{name}@base64/{}", base64url(value.as_bytes()))
    }
}

/// The group's URL under the Pushgateway at `base` (`http://host:9091`,
/// with or without a trailing `/` or a path prefix).
#[must_use]
pub fn url(base: &str, group: &Grouping) -> String {
    let mut url = base.trim_end_matches('/').to_owned();
    url.push_str("/metrics");
    url.push_str(&segment("job", &group.job));
    url.push_str(&segment("instance", &group.instance));
    url.push_str(&segment("step", &group.step));
    url
}

/// Refuses what the client cannot push to, before anything runs.
pub fn check_base(base: &str) -> Result<(), String> {
    if !base.starts_with("http://") && !base.starts_with("https://") {
        return Err(format!("{base}: expected a Pushgateway URL such as http://pushgateway:9091"));
    }
    crate::http::check_scheme(base)
}

/// Answers worth another attempt: all but 2xx and 4xx (the same body
/// would be refused again).
fn retryable(status: u16) -> bool {
    !(400..500).contains(&status)
}

/// PUTs `body` (text format 0.0.4) as the group's metrics: `Ok` on a 2xx
/// answer; a 4xx is not retried (the same body would be refused again),
/// a 5xx or a connection error is, [`ATTEMPTS`] times in all.
pub fn put(base: &str, group: &Grouping, body: &str) -> Result<(), String> {
    use crate::http::{Method, Request, Roots};
    let url = url(base, group);
    crate::http::send(&Request {
        method: Method::Put,
        url: &url,
        headers: vec![("Content-Type", stepmon_export::prometheus::CONTENT_TYPE)],
        body: body.as_bytes(),
        attempt_timeout: Duration::from_secs(TIMEOUT_SECONDS),
        timeout_variable: "",
        // Every attempt its whole timeout, and the waits between them.
        total: Duration::from_secs(TIMEOUT_SECONDS * u64::from(ATTEMPTS)) + FIRST_WAIT * (1 << ATTEMPTS),
        attempts: ATTEMPTS,
        first_wait: FIRST_WAIT,
        retry_status: retryable,
        roots: Roots::System,
    })
    .map_err(|last| format!("push to {url} failed: {last}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_rfc4648() {
        // RFC 4648 §10 test vectors (the url alphabet only differs in 62, 63).
        for (plain, encoded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE=")]
        {
            assert_eq!(base64url(plain.as_bytes()), encoded);
        }
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8=");
    }

    #[test]
    fn grouping_key_paths() {
        let group = |step: &str| Grouping { job: "stepmon".into(), instance: "ci-7.example".into(), step: step.into() };
        assert_eq!(
            url("http://pg:9091/", &group("build")),
            "http://pg:9091/metrics/job/stepmon/instance/ci-7.example/step/build"
        );
        // Pushgateway's own README example: "/var/tmp" is L3Zhci90bXA=.
        assert_eq!(segment("path", "/var/tmp"), "/path@base64/L3Zhci90bXA=");
        assert_eq!(segment("step", ""), "/step@base64/=");
        assert_eq!(segment("step", "unit tests"), "/step@base64/dW5pdCB0ZXN0cw==");
        assert_eq!(segment("step", ".."), "/step@base64/Li4=");
        assert_eq!(segment("step", "ü"), "/step@base64/w7w=");
    }

    #[test]
    fn bases() {
        assert!(check_base("http://127.0.0.1:9091").is_ok());
        assert_eq!(check_base("https://pg").is_ok(), cfg!(feature = "tls"));
        assert!(retryable(503) && !retryable(404));
        assert!(check_base("pg:9091").is_err() && check_base("http://").is_err());
    }
}

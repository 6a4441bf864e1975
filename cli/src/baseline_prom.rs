//! The runs of a Prometheus history (`prometheus+http://HOST:9090` as the
//! DB of `stepmon baseline check|show`): stepmon_history::prometheus says
//! what to ask and reads the answers; this file only does the HTTP GETs,
//! with ureq (the CLI's one HTTP client, crate::http's; https needs the
//! `tls` feature).

use std::time::Duration;

use stepmon_history::prometheus::{Runs, Source};
use stepmon_history::{RunKey, RunRecord};

use crate::error::CliError;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The runs of `step` (every step's when `None`) with `labels` in
/// `source`'s range, each once; as records of `key` when given.
pub(crate) fn runs(
    source: &Source,
    step: Option<&str>,
    labels: &[(String, String)],
    key: Option<&RunKey>,
) -> Result<Vec<RunRecord>, CliError> {
    {
        let agent: ureq::Agent =
            ureq::Agent::config_builder().timeout_global(Some(TIMEOUT)).http_status_as_error(false).build().into();
        let mut runs = Runs::default();
        let selector = Source::selector(step, labels);
        for url in source.requests(&selector, jiff::Timestamp::now()) {
            let fail = |what: String| {
                CliError::new(format!("Prometheus at {}: {what}", source.base))
                    .hint("is it running, and does it speak the Prometheus HTTP API (GET /api/v1/query_range)?")
            };
            let mut answer = match agent.get(&url).call() {
                Ok(answer) => answer,
                Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(fail("connection refused".into()));
                }
                Err(e) => return Err(fail(e.to_string())),
            };
            let status = answer.status();
            let body = answer
                .body_mut()
                .with_config()
                .limit(256 << 20)
                .read_to_vec()
                .map_err(|e| fail(format!("reading the answer: {e}")))?;
            // The API answers errors with 400, 422 or 503 and a JSON body
            // that says why: read it before judging the status.
            if let Err(e) = runs.add_response(&body) {
                return Err(fail(if status.is_success() { e.to_string() } else { format!("HTTP {status}: {e}") }));
            }
        }
        Ok(runs.records(key))
    }
}

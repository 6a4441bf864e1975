//! `docker buildx history export` bundles (`.dockerbuild`): every build in
//! one, with its real timeline, per-step usage where BuildKit recorded it,
//! and the machine while each step ran.
//!
//! What is read, and from where (docker/buildx `util/desktop/bundle`,
//! moby/buildkit `api/services/control/control.proto`):
//!
//! | Blob (media type) | What it gives |
//! |---|---|
//! | `application/vnd.buildkit.historyrecord.v0` (the manifest's config) | ref, frontend attributes (Dockerfile name, target, platforms), created/completed, step counts, the error |
//! | `application/vnd.buildkit.status.v0` | the vertexes: digest, name, inputs, cached, started, completed, error ([`status::decode`]) |
//! | `application/vnd.buildkit.solvestatus.v0` | the same as solve-status JSON ([`status::decode_json`]) |
//! | `application/vnd.in-toto+json` | a provenance predicate per platform: per-step `resourceUsage`, `op.platform`, `source.locations`, `sysUsage` |
//! | `application/vnd.buildkit.otlp.json.v0` | the OTLP trace: noted, not read (the status stream has the same timeline) |
//!
//! A bundle of `docker buildx history export --all` holds several records;
//! each is one [`Build`]. No I/O here: [`read`] takes the bundle's bytes,
//! [`read_layout`] an unpacked layout the caller collected; [`render_as`]
//! draws the builds in every `--format`, each with its summary
//! ([`summary`]: counts by state, critical path, per-platform totals), and
//! [`diff_entries`] gives a build's steps to `stepmon diff`.

pub mod build;
pub mod bundle;
mod entries;
mod metrics;
pub mod provenance;
pub mod record;
mod render;
pub mod status;
pub mod summary;
mod views;

pub use build::{Build, BuildStep, Counts, MachineWindow, StepState};
pub use bundle::Layout;
pub use entries::{diff_entries, entries};
pub use render::{render, to_json};
pub use summary::{PlatformTotals, critical_path_seconds, platform_totals};
pub use views::render as render_as;

/// Why a bundle could not be read (always one line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The archive or the OCI layout is broken.
    #[error("build history bundle: {0}")]
    Bundle(String),
    /// The history record is not what BuildKit writes.
    #[error("history record: {0}")]
    Record(String),
    /// The status stream is broken.
    #[error(transparent)]
    Status(#[from] status::StatusError),
    /// A provenance attestation is broken.
    #[error("provenance attestation: {0}")]
    Provenance(String),
}

/// What a bare predicate's exec step says of its usage: BuildKit records
/// `resourceUsage` per step only where it can (a cgroup v2 host, a worker
/// that gives each step a cgroup of its own, capture-usage on); Docker
/// Engine's built-in BuildKit records none.
pub const NO_STEP_USAGE: &str = "no per-step usage: the builder did not record it";

/// A build-level report of one bare provenance predicate (or in-toto
/// statement) that has a build definition but no step with
/// `resourceUsage` — what Docker Engine's built-in BuildKit writes: every
/// exec step with its platform and Dockerfile line, state
/// [`StepState::Unrecorded`] (a predicate has no step timing and does not
/// say which steps were cached), and the machine's samples (`sysUsage`)
/// over the build, from the predicate's start and finish times.
/// `None` when `bytes` are not such a predicate (the per-step importer,
/// [`crate::read`], reads the others, or says why it cannot).
///
/// # Errors
/// [`HistoryError::Provenance`] when it is a predicate with malformed steps.
pub fn of_predicate(bytes: &[u8]) -> Result<Option<Build>, HistoryError> {
    let Some(p) = provenance::read(bytes, "Dockerfile")? else { return Ok(None) };
    if !p.has_build_config || !p.usage.is_empty() {
        return Ok(None);
    }
    let mut status = status::Status::default();
    for step in p.steps.iter().filter(|s| s.command.is_some()) {
        status.vertexes.push(status::Vertex {
            digest: step.digest.clone().unwrap_or_else(|| step.id.clone()),
            name: format!("RUN {}", step.command.as_deref().unwrap_or_default()),
            ..status::Vertex::default()
        });
    }
    let mut record = record::HistoryRecord {
        reference: p.kind.to_owned(),
        created_at: p.started.or_else(|| p.sys_usage.first().map(|s| s.timestamp)),
        completed_at: p.finished.or_else(|| p.sys_usage.last().map(|s| s.timestamp)),
        ..record::HistoryRecord::default()
    };
    if let Some(platform) = &p.platform {
        record.frontend_attrs.insert("platform".to_owned(), platform.clone());
    }
    let sources = vec![format!(
        "{} provenance predicate: {} steps, {} exec, none with resourceUsage, {} machine samples",
        p.kind,
        p.steps.len(),
        status.vertexes.len(),
        p.sys_usage.len()
    )];
    let mut build = build::assemble(&record, Some(("provenance (no step timing)", status)), &[p], sources);
    for step in &mut build.steps {
        step.state = StepState::Unrecorded;
    }
    build.counts.incomplete = 0;
    build.counts.unrecorded = build.steps.len();
    build.critical_path.clear();
    Ok(Some(build))
}

/// Whether `bytes` look like a bundle (gzip or tar magic), not JSON.
#[must_use]
pub fn looks_like_bundle(bytes: &[u8]) -> bool {
    bundle::is_gzip(bytes) || bundle::is_tar(bytes)
}

/// Reads every build of a `.dockerbuild` bundle (gzip'd tar, or plain tar).
///
/// # Errors
/// [`HistoryError`], one line, for every malformed input.
pub fn read(bytes: &[u8]) -> Result<Vec<Build>, HistoryError> {
    read_layout(&Layout::from_archive(bytes)?)
}

/// Reads every build of an OCI layout.
///
/// # Errors
/// As [`read`].
pub fn read_layout(layout: &Layout) -> Result<Vec<Build>, HistoryError> {
    layout.records()?.iter().map(build_of).collect()
}

fn build_of(blobs: &bundle::RecordBlobs<'_>) -> Result<Build, HistoryError> {
    let record: record::HistoryRecord =
        serde_json::from_slice(blobs.record).map_err(|e| HistoryError::Record(bundle::one_line(&e.to_string())))?;
    let dockerfile = record.dockerfile();
    let mut sources = vec![format!("history record {}", record.reference)];
    let mut status = None;
    let mut provenance = Vec::new();
    for (descriptor, bytes) in &blobs.layers {
        match descriptor.media_type.as_str() {
            bundle::STATUS => {
                let s = status::decode(bytes)?;
                sources.push(format!("status stream: {} messages, {} vertexes", s.messages, s.vertexes.len()));
                status = Some(("status stream", s));
            }
            bundle::SOLVE_STATUS if status.is_none() => {
                let s = status::decode_json(bytes)?;
                sources.push(format!("solve status JSON: {} updates, {} vertexes", s.messages, s.vertexes.len()));
                status = Some(("solve status JSON", s));
            }
            bundle::OTLP_TRACE => sources.push("OTLP trace (not read: the status stream has the timeline)".to_owned()),
            bundle::IN_TOTO => {
                if let Some(mut p) = provenance::read(bytes, &dockerfile)? {
                    if let Some(platform) = record.platform_of(&descriptor.digest) {
                        platform.clone_into(p.platform.get_or_insert_with(String::new));
                    }
                    let with_usage = p.usage.len();
                    let label = p.platform.as_deref().map_or_else(String::new, |l| format!(" for {l}"));
                    sources.push(format!(
                        "{} provenance{label}: {} steps, {with_usage} with resourceUsage, {} machine samples",
                        p.kind,
                        p.steps.len(),
                        p.sys_usage.len()
                    ));
                    provenance.push(p);
                }
            }
            _ => {}
        }
    }
    if status.is_none() {
        sources.push("no status stream: steps come from the provenance alone".to_owned());
    }
    Ok(build::assemble(&record, status, &provenance, sources))
}

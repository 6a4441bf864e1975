//! Reading recorded steps from the JSON people have: a `stepmon run`
//! document, or BuildKit's provenance attestation in any of the wrappers it
//! reaches people in.
//!
//! [`read`] detects the shape by its keys (never by file name):
//!
//! | Input | How it is recognised | Where the steps are |
//! |---|---|---|
//! | `stepmon run --output` | top-level `resourceUsage` (+ `stepmon`) | the document itself: one step |
//! | BuildKit's two keys alone | top-level `resourceUsage` without `stepmon` | one step, counters from zero |
//! | in-toto Statement (`docker buildx history inspect attachment`, `cosign download attestation`, an OCI attestation layer) | `predicate` next to `predicateType` / `_type` | `predicate`, read as below |
//! | SLSA v1 predicate | `buildDefinition` / `runDetails` | `buildDefinition.internalParameters.buildConfig.llbDefinition[i].resourceUsage`, machine samples in `runDetails.metadata.buildkit_metadata.sysUsage` |
//! | SLSA v0.2 predicate | `buildConfig` / `buildType` / `invocation` | `buildConfig.llbDefinition[i].resourceUsage`, machine samples in `metadata["https://mobyproject.org/buildkit@v1#metadata"].sysUsage` |
//! | `docker buildx build --metadata-file` with `BUILDX_METADATA_PROVENANCE=max` | keys `buildx.build.provenance` or `buildx.build.provenance/<platform>` | each key's value: a v0.2 predicate as a JSON object |
//! | `docker buildx imagetools inspect --format '{{json .Provenance}}'` | `SLSA` key | its value; several platforms come as `{"linux/amd64": {"SLSA": ...}, ...}` |
//! | `docker buildx bake --metadata-file` | one object per target | each target's metadata, as above |
//! | an array of any of these | — | each element |
//!
//! Key spellings come from moby/buildkit
//! `solver/llbsolver/provenance/types/types.go` (`BuildConfig`,
//! `BuildStep`, `ProvenancePredicateSLSA1`/`SLSA02`, `BuildKitMetadata`),
//! `solver/pb/json.go` (an op's JSON is `{"Op": {"exec": {"meta": {"args":
//! [...]}}}, ...}`), and docker/buildx `build/provenance.go` (metadata-file
//! keys) and `commands/build.go` `decodeExporterResponse` (which turns the
//! base64 value into a JSON object); `tests/data/provenance/README.md` has
//! the details.
//!
//! Which BuildKit steps become [`Step`]s:
//!
//! * every step with a non-empty `resourceUsage.samples`, named by its RUN
//!   command (`op.Op.exec.meta.args`, quoted with
//!   [`stepmon_report::step::quote_command`]) or else by its id;
//! * exec steps without `resourceUsage` are listed in [`Import::skipped`]:
//!   BuildKit records nothing for cached steps and for steps that failed;
//! * steps whose `resourceUsage` has no samples (`{}`: the container never
//!   started) are listed in [`Import::skipped`] too — a step without a
//!   single sample has no number to report, and showing it with every
//!   value "unknown" would read as if it had been measured;
//! * other ops (image pulls, file ops, the final vertex) run inside the
//!   daemon and are ignored;
//! * frontend source definitions (`buildkit_metadata.source.infos[].llbDefinition`)
//!   are ignored: they describe how the Dockerfile was fetched.
//!
//! Each step gets the build's machine samples (`sysUsage`) that fall inside
//! its time window — from its first sample minus
//! [`BUILDKIT_FIRST_SAMPLE_SECONDS`](stepmon_report::step::BUILDKIT_FIRST_SAMPLE_SECONDS)
//! (BuildKit takes no sample at the start) to its last sample — plus the
//! one machine sample just before and the one just after. BuildKit thins
//! `sysUsage` to at most 20 + 1 samples over the build, so their interval
//! varies; the bracketing pair is "± one interval" whatever it is, and makes
//! counter deltas (machine CPU pressure) cover the whole step.
//!
//! BuildKit's `netStat` comes from the host end of the step's veth pair, so
//! its `rx`/`tx` are the host's view (`rxBytes` is what the step sent,
//! `docs/data-model.md`, "netStat"; moby/buildkit
//! `util/network/cniprovider/cni.go`); the values are kept as recorded.
//!
//! [`input::detect`] tells any input file apart (a build history bundle, a
//! job record, a run document, provenance); [`history`] reads `docker
//! buildx history export` bundles.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod buildkit;
mod detect;
pub mod history;
pub mod input;

use serde::Serialize;

use stepmon_model::document::RunDocument;
use stepmon_report::step::Step;

/// Why a text could not be read as recorded steps.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but nothing in it holds resource usage.
    #[error("no resourceUsage found ({found}): {hint}")]
    NoUsage {
        /// What the document turned out to be.
        found: String,
        /// What the user can do about it.
        hint: &'static str,
    },
    /// Every step that has a `resourceUsage` has no samples in it.
    #[error(
        "no samples: the resourceUsage of all {empty} step(s) is empty — BuildKit records none when a step's container never started"
    )]
    NoSamples {
        /// Steps with an empty `resourceUsage`.
        empty: usize,
    },
    /// A value has the wrong JSON type.
    #[error("{path}: expected {expected}, found {found}")]
    Shape {
        /// JSON path of the value (`$.predicate.buildConfig.llbDefinition[2]`).
        path: String,
        /// What it should be.
        expected: &'static str,
        /// What it is (`null`, `a string`, ...).
        found: &'static str,
    },
    /// A value has the right type but not the right content (a sample
    /// without a timestamp, a timestamp that is not RFC 3339, ...).
    #[error("{path}: {message}")]
    Invalid {
        /// JSON path of the value.
        path: String,
        /// What is wrong, from the reader.
        message: String,
    },
}

/// The hint of [`ImportError::NoUsage`] for provenance without usage.
pub const CAPTURE_USAGE_HINT: &str = "was the build run with --attest type=provenance,mode=max,capture-usage=true?";

/// A step that is in the input but not among the imported steps, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Skipped {
    /// The step's id in the provenance (`step3`).
    pub step_id: String,
    /// Its RUN command (or id), as an imported step would be named.
    pub name: String,
    /// Why it was skipped, in words.
    pub reason: String,
}

/// Everything [`read`] found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Import {
    /// The steps with resource usage, in the input's order.
    pub steps: Vec<Step>,
    /// Exec steps that had no usage to import.
    pub skipped: Vec<Skipped>,
    /// What was read, one line per document found
    /// (`SLSA v1 provenance at $.predicate`).
    pub sources: Vec<String>,
}

/// The steps in `text`; [`read`] also says what was skipped and why.
///
/// # Errors
/// As [`read`].
pub fn steps(text: &str) -> Result<Vec<Step>, ImportError> {
    Ok(read(text)?.steps)
}

/// Reads `text`: a `stepmon run` document or BuildKit provenance in any of
/// the shapes listed in the [module docs](self).
///
/// ```
/// let json = r#"{"_type": "https://in-toto.io/Statement/v0.1",
///   "predicateType": "https://slsa.dev/provenance/v0.2",
///   "subject": [],
///   "predicate": {"buildType": "https://mobyproject.org/buildkit@v1",
///     "buildConfig": {"llbDefinition": [
///       {"id": "step0", "op": {"Op": {"exec": {"meta": {"args": ["/bin/sh", "-c", "make -j2"]}}}},
///        "resourceUsage": {"samples": [
///          {"timestamp": "2026-11-30T10:00:02+01:00", "cpuStat": {"usageNanos": 3000000000}, "pidsStat": {}},
///          {"timestamp": "2026-11-30T10:00:04+01:00", "cpuStat": {"usageNanos": 6000000000}, "pidsStat": {}}]}},
///       {"id": "step1", "op": {"Op": {"exec": {"meta": {"args": ["make", "install"]}}}}}]}}}"#;
/// let import = stepmon_import::read(json)?;
/// assert_eq!(import.steps.len(), 1);
/// let step = &import.steps[0];
/// assert_eq!(step.name, "/bin/sh -c 'make -j2'");
/// // BuildKit's counters start at zero: CPU time is the last reading.
/// assert_eq!(step.summary.cpu.usage_seconds, Some(6.0));
/// // Its first sample comes about 2 s into the step: wall ≈ 2 + 2 s.
/// assert_eq!(step.wall_seconds, Some(4.0));
/// assert_eq!(import.skipped[0].step_id, "step1");
/// # Ok::<(), stepmon_import::ImportError>(())
/// ```
///
/// # Errors
/// [`ImportError::Json`] when `text` is not JSON, [`ImportError::NoUsage`]
/// when it holds no resource usage, [`ImportError::NoSamples`] when every
/// step's usage is empty, [`ImportError::Shape`] / [`ImportError::Invalid`]
/// (with the JSON path) when a value is malformed.
pub fn read(text: &str) -> Result<Import, ImportError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    read_value(&value)
}

/// [`read`] for an already parsed JSON value.
///
/// # Errors
/// As [`read`], except [`ImportError::Json`].
pub fn read_value(value: &serde_json::Value) -> Result<Import, ImportError> {
    let found = detect::find(value)?;
    let mut import = Import { steps: Vec::new(), skipped: Vec::new(), sources: Vec::new() };
    if found.is_empty() {
        return Err(ImportError::NoUsage { found: detect::describe(value), hint: detect::NOTHING_HINT });
    }
    let labelled = found.len() > 1;
    let mut empty = 0;
    let mut provenance_without_usage = Vec::new();
    for document in &found {
        import.sources.push(document.describe());
        match document.kind {
            detect::Kind::Run => import.steps.push(run_step(document)?),
            detect::Kind::Slsa1 | detect::Kind::Slsa02 => {
                let label = labelled.then_some(document.label.as_str()).filter(|l| !l.is_empty());
                let read = buildkit::steps(document, label)?;
                if read.steps.is_empty() && read.empty == 0 {
                    provenance_without_usage.push(read.no_usage);
                }
                empty += read.empty;
                import.steps.extend(read.steps);
                import.skipped.extend(read.skipped);
            }
        }
    }
    if import.steps.is_empty() {
        if empty > 0 {
            return Err(ImportError::NoSamples { empty });
        }
        let found = provenance_without_usage.join("; ");
        return Err(ImportError::NoUsage { found, hint: CAPTURE_USAGE_HINT });
    }
    Ok(import)
}

/// The step of a `stepmon run` document, or of BuildKit's two keys alone
/// (no `stepmon` object: BuildKit's semantics, counters from zero).
fn run_step(found: &detect::Found<'_>) -> Result<Step, ImportError> {
    let document: RunDocument = serde_json::from_value(found.value.clone())
        .map_err(|e| ImportError::Invalid { path: found.path.clone(), message: e.to_string() })?;
    if document.stepmon.is_some() {
        return Ok(Step::from_run(&document));
    }
    if document.resource_usage.samples.is_empty() {
        return Err(ImportError::NoSamples { empty: 1 });
    }
    Ok(Step::from_buildkit("resourceUsage".to_owned(), "resourceUsage".to_owned(), None, document.usage()))
}

/// `null`, `a string`, ... for error messages.
pub(crate) fn type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// `$.a.b` + `c` → `$.a.b.c`; keys that are not plain words are quoted
/// (`$.metadata["https://mobyproject.org/buildkit@v1#metadata"]`).
pub(crate) fn join_key(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain { format!("{path}.{key}") } else { format!("{path}[{key:?}]") }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

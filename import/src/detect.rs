//! Finding the documents inside a JSON value: unwrapping in-toto
//! Statements, buildx metadata files, `imagetools inspect` output and
//! arrays/maps of them, down to `stepmon run` documents and SLSA predicates.

use serde_json::{Map, Value};

use super::{ImportError, join_key, type_name};

/// How deep containers (arrays, per-platform and per-target maps) may nest
/// before the search stops: a bake metadata file is target → key →
/// predicate, `imagetools` output platform → `SLSA` → predicate.
const MAX_CONTAINER_DEPTH: usize = 4;

/// The hint when nothing at all was recognised.
pub(super) const NOTHING_HINT: &str = "expected a `stepmon run --output` document or BuildKit provenance (an in-toto statement, an SLSA v1 or v0.2 predicate, or a `buildx --metadata-file` written with BUILDX_METADATA_PROVENANCE=max); for provenance, run the build with --attest type=provenance,mode=max,capture-usage=true";

/// `predicateType` of SLSA v1 (in-toto attestation predicates).
const SLSA1: &str = "https://slsa.dev/provenance/v1";
/// `predicateType` of SLSA v0.2.
const SLSA02: &str = "https://slsa.dev/provenance/v0.2";
/// The metadata-file key prefix (docker/buildx `build/provenance.go`).
const BUILDX_PROVENANCE: &str = "buildx.build.provenance";

/// What a found document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A `stepmon run` document or BuildKit's `resourceUsage`/`sysUsage` pair.
    Run,
    /// An SLSA v1 predicate.
    Slsa1,
    /// An SLSA v0.2 predicate.
    Slsa02,
}

/// One document found.
#[derive(Debug)]
pub(super) struct Found<'a> {
    /// What it is.
    pub(super) kind: Kind,
    /// The document (for predicates: the predicate object).
    pub(super) value: &'a Value,
    /// Its JSON path.
    pub(super) path: String,
    /// The platform / target it belongs to, from the container keys.
    pub(super) label: String,
    /// The wrapper it came in, for people (`in-toto statement`).
    pub(super) wrapper: &'static str,
}

impl Found<'_> {
    /// `SLSA v1 provenance (in-toto statement) at $.predicate`.
    pub(super) fn describe(&self) -> String {
        let what = match self.kind {
            Kind::Run if self.value.get("stepmon").is_some() => "stepmon run document",
            Kind::Run => "BuildKit resourceUsage",
            Kind::Slsa1 => "SLSA v1 provenance",
            Kind::Slsa02 => "SLSA v0.2 provenance",
        };
        let wrapper = if self.wrapper.is_empty() { String::new() } else { format!(" ({})", self.wrapper) };
        let label = if self.label.is_empty() { String::new() } else { format!(" for {}", self.label) };
        format!("{what}{wrapper}{label} at {}", self.path)
    }
}

/// Every document in `value`, in order.
pub(super) fn find(value: &Value) -> Result<Vec<Found<'_>>, ImportError> {
    let mut out = Vec::new();
    walk(value, "$".to_owned(), String::new(), "", 0, &mut out)?;
    Ok(out)
}

/// For [`ImportError::NoUsage`] when nothing was found.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Object(map) if is_statement(map) => {
            let t = map.get("predicateType").and_then(Value::as_str).unwrap_or("no predicateType");
            format!("an in-toto statement with predicate type {t}")
        }
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().take(8).map(String::as_str).collect();
            format!("an object with keys {}", keys.join(", "))
        }
        other => format!("JSON {}", type_name(other)),
    }
}

fn is_statement(map: &Map<String, Value>) -> bool {
    map.contains_key("predicate") && (map.contains_key("predicateType") || map.contains_key("_type"))
}

fn slsa_kind(map: &Map<String, Value>) -> Option<Kind> {
    if map.contains_key("buildDefinition") || map.contains_key("runDetails") {
        Some(Kind::Slsa1)
    } else if map.contains_key("buildConfig") || map.contains_key("buildType") || map.contains_key("invocation") {
        Some(Kind::Slsa02)
    } else {
        None
    }
}

fn label_with(label: &str, more: &str) -> String {
    if label.is_empty() { more.to_owned() } else { format!("{label} {more}") }
}

fn walk<'a>(
    value: &'a Value,
    path: String,
    label: String,
    wrapper: &'static str,
    depth: usize,
    out: &mut Vec<Found<'a>>,
) -> Result<(), ImportError> {
    match value {
        Value::Array(items) => {
            if depth >= MAX_CONTAINER_DEPTH {
                return Ok(());
            }
            for (i, item) in items.iter().enumerate() {
                walk(item, format!("{path}[{i}]"), label.clone(), wrapper, depth.saturating_add(1), out)?;
            }
            Ok(())
        }
        Value::Object(map) => walk_object(value, map, path, label, wrapper, depth, out),
        _ => Ok(()),
    }
}

fn walk_object<'a>(
    value: &'a Value,
    map: &'a Map<String, Value>,
    path: String,
    label: String,
    wrapper: &'static str,
    depth: usize,
    out: &mut Vec<Found<'a>>,
) -> Result<(), ImportError> {
    if is_statement(map) {
        let predicate_path = join_key(&path, "predicate");
        let predicate = map.get("predicate").unwrap_or(&Value::Null);
        let kind = match map.get("predicateType").and_then(Value::as_str) {
            Some(SLSA1) => Kind::Slsa1,
            Some(SLSA02) => Kind::Slsa02,
            // Other attestations (SBOMs, ...) next to the provenance.
            Some(_) => return Ok(()),
            None => match predicate.as_object().and_then(slsa_kind) {
                Some(kind) => kind,
                None => return Ok(()),
            },
        };
        if !predicate.is_object() {
            return Err(shape(predicate_path, "an object (the provenance predicate)", predicate));
        }
        out.push(Found { kind, value: predicate, path: predicate_path, label, wrapper: "in-toto statement" });
        return Ok(());
    }
    if let Some(kind) = slsa_kind(map) {
        out.push(Found { kind, value, path, label, wrapper });
        return Ok(());
    }
    if map.contains_key("resourceUsage") {
        out.push(Found { kind: Kind::Run, value, path, label, wrapper });
        return Ok(());
    }
    if depth >= MAX_CONTAINER_DEPTH {
        return Ok(());
    }
    let next = depth.saturating_add(1);
    let metadata: Vec<(&String, &Value)> = map.iter().filter(|(k, _)| k.starts_with(BUILDX_PROVENANCE)).collect();
    if !metadata.is_empty() {
        for (key, v) in metadata {
            let key_path = join_key(&path, key);
            let platform = key.strip_prefix(BUILDX_PROVENANCE).unwrap_or_default().trim_start_matches('/');
            if !v.is_object() {
                // buildx writes the provenance as a JSON object when its
                // base64 decodes to one (`decodeExporterResponse`); anything
                // else is not a provenance.
                return Err(shape(key_path, "an object (the provenance buildx decoded)", v));
            }
            let label = if platform.is_empty() { label.clone() } else { label_with(&label, platform) };
            walk(v, key_path, label, "buildx metadata file", next, out)?;
        }
        return Ok(());
    }
    if let Some(slsa) = map.get("SLSA") {
        return walk(slsa, join_key(&path, "SLSA"), label, "imagetools inspect", next, out);
    }
    // A map of platforms or bake targets.
    for (key, v) in map {
        if v.is_object() || v.is_array() {
            walk(v, join_key(&path, key), label_with(&label, key), wrapper, next, out)?;
        }
    }
    Ok(())
}

pub(super) fn shape(path: String, expected: &'static str, found: &Value) -> ImportError {
    ImportError::Shape { path, expected, found: type_name(found) }
}

//! What a bundle's provenance attestation says about each step beyond its
//! usage: the LLB digest (`buildConfig.digestMapping`), the RUN command,
//! the op's platform (`op.platform`, moby/buildkit `solver/pb/ops.proto`
//! `Platform{Architecture, OS, Variant}`), the Dockerfile location
//! (`BuildKitMetadata.source.locations[stepN].locations[].ranges[].start.line`
//! with `sourceIndex` into `source.infos[]`, moby/buildkit
//! `solver/llbsolver/provenance/types/types.go` `Source`), and the build's
//! machine samples (`sysUsage`). The per-step usage itself is read by the
//! provenance importer ([`crate::read_value`]).

use serde_json::Value;
use stepmon_model::system::SysSample;

use super::HistoryError;
use crate::{ImportError, read_value};
use stepmon_report::step::{Step, quote_command};

/// One LLB step of a predicate.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProvenanceStep {
    /// `stepN`.
    pub id: String,
    /// Its LLB digest, when `digestMapping` has it.
    pub digest: Option<String>,
    /// Its RUN command, for exec ops.
    pub command: Option<String>,
    /// `linux/arm64/v8`, from `op.platform`.
    pub platform: Option<String>,
    /// The Dockerfile file and line (`Dockerfile:12`).
    pub location: Option<String>,
}

/// One predicate of the bundle.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Provenance {
    /// The platform it is for (the record's `Results` key, else the steps' `op.platform`).
    pub platform: Option<String>,
    /// `SLSA v0.2` / `SLSA v1`.
    pub kind: &'static str,
    /// Its LLB steps.
    pub steps: Vec<ProvenanceStep>,
    /// Steps with `resourceUsage`, as the provenance importer reads them.
    pub usage: Vec<Step>,
    /// Whether the predicate has a `buildConfig` at all (`mode=max`).
    pub has_build_config: bool,
    /// The build's machine samples.
    pub sys_usage: Vec<SysSample>,
    /// When the build started (v0.2 `metadata.buildStartedOn`, v1
    /// `runDetails.metadata.startedOn`).
    pub started: Option<jiff::Timestamp>,
    /// When it finished (`buildFinishedOn`, `finishedOn`).
    pub finished: Option<jiff::Timestamp>,
}

fn get<'a>(value: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().try_fold(value, |v, k| v.get(k))
}

fn platform(op: &Value) -> Option<String> {
    let p = op.get("platform")?;
    let os = p.get("OS").or_else(|| p.get("os"))?.as_str()?;
    let arch = p.get("Architecture").or_else(|| p.get("architecture"))?.as_str()?;
    let variant = p.get("Variant").or_else(|| p.get("variant")).and_then(Value::as_str).filter(|v| !v.is_empty());
    Some(match variant {
        Some(v) => format!("{os}/{arch}/{v}"),
        None => format!("{os}/{arch}"),
    })
}

fn command(op: &Value) -> Option<String> {
    let exec = op.get("Op").and_then(|o| o.get("exec")).or_else(|| op.get("exec"))?;
    let args: Vec<String> = exec
        .get("meta")?
        .get("args")?
        .as_array()?
        .iter()
        .map(|a| a.as_str().map(str::to_owned))
        .collect::<Option<_>>()?;
    (!args.is_empty()).then(|| quote_command(&args))
}

fn location(source: Option<&Value>, id: &str, dockerfile: &str) -> Option<String> {
    let source = source?;
    let first = source.get("locations")?.get(id)?.get("locations")?.as_array()?.first()?;
    let line = first.get("ranges")?.as_array()?.first()?.get("start")?.get("line")?.as_u64()?;
    let index = first.get("sourceIndex").and_then(Value::as_u64).unwrap_or(0);
    let file = usize::try_from(index)
        .ok()
        .and_then(|i| source.get("infos")?.as_array()?.get(i)?.get("filename")?.as_str())
        .and_then(|f| f.rsplit('/').next())
        .filter(|f| !f.is_empty())
        .unwrap_or(dockerfile);
    Some(format!("{file}:{line}"))
}

/// Reads one in-toto layer (a Statement or a bare predicate).
///
/// # Errors
/// [`HistoryError::Provenance`] when it is not JSON or its steps are
/// malformed.
pub fn read(bytes: &[u8], dockerfile: &str) -> Result<Option<Provenance>, HistoryError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| HistoryError::Provenance(format!("not JSON: {e}")))?;
    let predicate = value.get("predicate").unwrap_or(&value);
    let (kind, config, metadata) = if predicate.get("buildDefinition").is_some()
        || predicate.get("runDetails").is_some()
    {
        let config = get(predicate, &["buildDefinition", "internalParameters", "buildConfig"])
            .or_else(|| get(predicate, &["buildDefinition", "externalParameters", "buildConfig"]));
        let metadata = get(predicate, &["runDetails", "metadata", "buildkit_metadata"])
            .or_else(|| get(predicate, &["runDetails", "metadata", "https://mobyproject.org/buildkit@v1#metadata"]));
        ("SLSA v1", config, metadata)
    } else if predicate.get("buildConfig").is_some() || predicate.get("buildType").is_some() {
        let metadata = get(predicate, &["metadata", "https://mobyproject.org/buildkit@v1#metadata"]);
        ("SLSA v0.2", predicate.get("buildConfig"), metadata)
    } else {
        // An SBOM or another attestation: not a provenance.
        return Ok(None);
    };
    let mut out = Provenance { kind, has_build_config: config.is_some(), ..Provenance::default() };
    // SLSA v0.2 `metadata.buildStartedOn`; v1 `runDetails.metadata.startedOn`.
    let (meta, start, finish) = if kind == "SLSA v1" {
        (get(predicate, &["runDetails", "metadata"]), "startedOn", "finishedOn")
    } else {
        (predicate.get("metadata"), "buildStartedOn", "buildFinishedOn")
    };
    let time = |key: &str| meta.and_then(|m| m.get(key)).and_then(Value::as_str).and_then(|t| t.parse().ok());
    (out.started, out.finished) = (time(start), time(finish));
    let source = metadata.and_then(|m| m.get("source"));
    if let Some(sys) = metadata.and_then(|m| m.get("sysUsage")).filter(|s| !s.is_null()) {
        let mut samples: Vec<SysSample> =
            serde_json::from_value(sys.clone()).map_err(|e| HistoryError::Provenance(format!("sysUsage: {e}")))?;
        samples.sort_by_key(|s| s.timestamp);
        out.sys_usage = samples;
    }
    let mapping: Vec<(String, String)> = config
        .and_then(|c| c.get("digestMapping"))
        .and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(d, id)| Some((id.as_str()?.to_owned(), d.clone()))).collect())
        .unwrap_or_default();
    let definition = config.and_then(|c| c.get("llbDefinition")).and_then(Value::as_array);
    for (i, step) in definition.into_iter().flatten().enumerate() {
        let id = step.get("id").and_then(Value::as_str).map_or_else(|| format!("step{i}"), str::to_owned);
        let op = step.get("op").unwrap_or(&Value::Null);
        out.steps.push(ProvenanceStep {
            digest: mapping.iter().find(|(s, _)| *s == id).map(|(_, d)| d.clone()),
            command: command(op),
            platform: platform(op),
            location: location(source, &id, dockerfile),
            id,
        });
    }
    out.platform = out.steps.iter().find_map(|s| s.platform.clone());
    out.usage = match read_value(&value) {
        Ok(import) => import.steps,
        Err(ImportError::NoUsage { .. } | ImportError::NoSamples { .. }) => Vec::new(),
        Err(e) => return Err(HistoryError::Provenance(super::bundle::one_line(&e.to_string()))),
    };
    Ok(Some(out))
}

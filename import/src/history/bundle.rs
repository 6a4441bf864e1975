//! The `.dockerbuild` bundle: an OCI image layout, gzip'd tar, as
//! `docker buildx history export` writes it (docker/buildx
//! `util/desktop/bundle/export.go`: containerd's `archive.Export` of a
//! manifest whose config is the history record and whose layers are the
//! trace, the status stream, the result's attestations and results; with
//! several records, `index.json` points at an image index of such
//! manifests, each annotated `vnd.buildkit.history.reference`).
//!
//! Everything is read from memory; nothing is extracted. Sizes are bounded
//! before anything is allocated for them, and each blob must hash to the
//! digest it is stored under.

use std::collections::BTreeMap;
use std::io::Read as _;

use serde::Deserialize;
use sha2::Digest as _;

use super::HistoryError;

/// The most bytes one blob may have (a history record, a status stream, a
/// provenance). Real ones are kilobytes to a few megabytes.
pub const MAX_BLOB_BYTES: u64 = 256 << 20;
/// The most bytes the whole layout may unpack to.
pub const MAX_LAYOUT_BYTES: u64 = 512 << 20;
/// The most files the layout may hold.
pub const MAX_FILES: usize = 100_000;
/// How deep image indexes may nest (`index.json` → the `--all` index →
/// manifests is two).
const MAX_INDEX_DEPTH: usize = 4;

/// `application/vnd.buildkit.historyrecord.v0` (buildx `HistoryRecordMediaTypeV0`).
pub const HISTORY_RECORD: &str = "application/vnd.buildkit.historyrecord.v0";
/// The protobuf status stream (BuildKit `api/services/control` history).
pub const STATUS: &str = "application/vnd.buildkit.status.v0";
/// Solve-status JSON.
pub const SOLVE_STATUS: &str = "application/vnd.buildkit.solvestatus.v0";
/// The OTLP JSON trace (buildx `util/desktop/bundle/trace.go`).
pub const OTLP_TRACE: &str = "application/vnd.buildkit.otlp.json.v0";
/// In-toto attestations (provenance among them).
pub const IN_TOTO: &str = "application/vnd.in-toto+json";
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const DOCKER_MANIFEST_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

/// The files of an OCI layout, by path (`index.json`, `blobs/sha256/…`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    files: BTreeMap<String, Vec<u8>>,
    total: u64,
}

/// An OCI descriptor (`mediaType`, `digest`, `size`, `annotations`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// What the blob is.
    #[serde(default)]
    pub media_type: String,
    /// `sha256:<hex>`.
    #[serde(default)]
    pub digest: String,
    /// Its size, bytes.
    #[serde(default)]
    pub size: i64,
    /// Annotations (`in-toto.io/predicate-type`, ...).
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// The platform of a manifest in an index.
    #[serde(default)]
    pub platform: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IndexOrManifest {
    #[serde(default)]
    media_type: String,
    #[serde(default)]
    manifests: Vec<Descriptor>,
    #[serde(default)]
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

/// One history record's blobs.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordBlobs<'a> {
    /// The manifest's `vnd.buildkit.history.reference` annotation, when the
    /// bundle holds several records.
    pub reference: Option<String>,
    /// The history record's JSON.
    pub record: &'a [u8],
    /// The manifest's layers with their bytes, in order.
    pub layers: Vec<(Descriptor, &'a [u8])>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    sha2::Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn bad(what: impl Into<String>) -> HistoryError {
    HistoryError::Bundle(one_line(&what.into()))
}

/// `text` with control characters escaped: the tar reader's messages quote
/// names and fields of the archive, which may hold newlines.
pub(super) fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// Whether `bytes` start like a gzip stream (RFC 1952 magic).
#[must_use]
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Whether `bytes` start like a POSIX tar archive (`ustar` at offset 257).
#[must_use]
pub fn is_tar(bytes: &[u8]) -> bool {
    bytes.get(257..262) == Some(b"ustar")
}

/// `./blobs/x` and `blobs/x` are the same file.
fn normal(path: &str) -> String {
    path.trim_start_matches("./").trim_start_matches('/').to_owned()
}

impl Layout {
    /// Adds one file (for an unpacked directory the caller walked).
    ///
    /// # Errors
    /// [`HistoryError::Bundle`] when the file or the layout gets too large.
    pub fn add(&mut self, path: &str, bytes: Vec<u8>) -> Result<(), HistoryError> {
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        self.check_room(path, size)?;
        self.total = self.total.saturating_add(size);
        self.files.insert(normal(path), bytes);
        Ok(())
    }

    fn check_room(&self, path: &str, size: u64) -> Result<(), HistoryError> {
        if size > MAX_BLOB_BYTES {
            return Err(bad(format!("{path} declares {size} bytes (at most {MAX_BLOB_BYTES} per file)")));
        }
        if self.total.saturating_add(size) > MAX_LAYOUT_BYTES {
            return Err(bad(format!("the layout unpacks to more than {MAX_LAYOUT_BYTES} bytes")));
        }
        if self.files.len() >= MAX_FILES {
            return Err(bad(format!("the layout has more than {MAX_FILES} files")));
        }
        Ok(())
    }

    /// The layout in a tar archive, gzip'd or not.
    ///
    /// # Errors
    /// [`HistoryError::Bundle`] for a truncated or corrupt gzip stream or tar
    /// archive and for sizes beyond the bounds.
    pub fn from_archive(bytes: &[u8]) -> Result<Layout, HistoryError> {
        if is_gzip(bytes) {
            Layout::from_tar(flate2::read::GzDecoder::new(bytes), "gzip'd tar")
        } else {
            Layout::from_tar(bytes, "tar")
        }
    }

    fn from_tar<R: std::io::Read>(reader: R, what: &str) -> Result<Layout, HistoryError> {
        let mut layout = Layout::default();
        let mut archive = tar::Archive::new(reader);
        let entries = archive.entries().map_err(|e| bad(format!("not a {what}: {e}")))?;
        for entry in entries {
            let entry = entry.map_err(|e| bad(format!("corrupt {what}: {e}")))?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let path = entry.path().map_err(|e| bad(format!("corrupt {what}: {e}")))?.to_string_lossy().into_owned();
            let declared = entry.header().size().map_err(|e| bad(format!("corrupt {what}: {path}: {e}")))?;
            layout.check_room(&path, declared)?;
            // `take` bounds the read by what the header declared (checked
            // above), whatever the stream really holds.
            let mut data = Vec::with_capacity(usize::try_from(declared.min(1 << 20)).unwrap_or(0));
            entry.take(declared).read_to_end(&mut data).map_err(|e| bad(format!("corrupt {what}: {path}: {e}")))?;
            layout.add(&path, data)?;
        }
        // Read to the end: a gzip stream is only whole with its trailer
        // (RFC 1952 CRC32 and size), which comes after the tar's end marker.
        let mut rest = archive.into_inner().take(MAX_LAYOUT_BYTES);
        std::io::copy(&mut rest, &mut std::io::sink()).map_err(|e| bad(format!("corrupt {what}: {e}")))?;
        if layout.files.is_empty() {
            return Err(bad(format!("an empty {what}")));
        }
        Ok(layout)
    }

    /// Adds `bytes` as a blob; returns its digest (`sha256:<hex>`). For
    /// writing bundles (tests, benches, fuzz seeds) the way buildx does.
    ///
    /// # Errors
    /// As [`Layout::add`].
    pub fn put_blob(&mut self, bytes: Vec<u8>) -> Result<String, HistoryError> {
        let hex = sha256_hex(&bytes);
        self.add(&format!("blobs/sha256/{hex}"), bytes)?;
        Ok(format!("sha256:{hex}"))
    }

    /// The layout as a gzip'd tar, as `docker buildx history export` writes it.
    #[must_use]
    pub fn to_archive(&self) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        for (path, bytes) in &self.files {
            let mut header = tar::Header::new_ustar();
            header.set_size(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
            header.set_mode(0o444);
            header.set_cksum();
            // Writing to memory cannot fail.
            let _ = tar.append_data(&mut header, path, bytes.as_slice());
        }
        tar.into_inner().and_then(flate2::write::GzEncoder::finish).unwrap_or_default()
    }

    /// The file at `path`.
    #[must_use]
    pub fn file(&self, path: &str) -> Option<&[u8]> {
        self.files.get(&normal(path)).map(Vec::as_slice)
    }

    /// The blob `descriptor` names, checked against its digest and size.
    ///
    /// # Errors
    /// [`HistoryError::Bundle`] when it is missing, of another size, or
    /// hashes to another digest.
    pub fn blob(&self, descriptor: &Descriptor) -> Result<&[u8], HistoryError> {
        let Some(hex) = descriptor.digest.strip_prefix("sha256:") else {
            return Err(bad(format!("digest {:?} is not sha256:<hex>", descriptor.digest)));
        };
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(format!("digest {:?} is not sha256:<64 hex digits>", descriptor.digest)));
        }
        let path = format!("blobs/sha256/{hex}");
        let bytes =
            self.file(&path).ok_or_else(|| bad(format!("{path} ({}) is not in the bundle", descriptor.media_type)))?;
        let actual = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if i64::try_from(actual).ok() != Some(descriptor.size) {
            return Err(bad(format!("{path} has {actual} bytes, its descriptor says {}", descriptor.size)));
        }
        let sum = sha256_hex(bytes);
        if !sum.eq_ignore_ascii_case(hex) {
            return Err(bad(format!("{path} does not match its digest (its sha256 is {sum})")));
        }
        Ok(bytes)
    }

    /// Every history record in the layout, in `index.json`'s order.
    ///
    /// # Errors
    /// [`HistoryError::Bundle`] without `index.json`, with unreadable
    /// manifests or blobs, or without any history record.
    pub fn records(&self) -> Result<Vec<RecordBlobs<'_>>, HistoryError> {
        let index = self.file("index.json").ok_or_else(|| {
            bad("no index.json: not an OCI layout (expected what `docker buildx history export` writes)")
        })?;
        let index: IndexOrManifest =
            serde_json::from_slice(index).map_err(|e| bad(format!("index.json is not an OCI index: {e}")))?;
        let mut out = Vec::new();
        for descriptor in &index.manifests {
            self.walk(descriptor, None, 0, &mut out)?;
        }
        if out.is_empty() {
            return Err(bad(format!("no manifest in the bundle has a {HISTORY_RECORD} config")));
        }
        Ok(out)
    }

    fn walk<'a>(
        &'a self,
        descriptor: &Descriptor,
        reference: Option<String>,
        depth: usize,
        out: &mut Vec<RecordBlobs<'a>>,
    ) -> Result<(), HistoryError> {
        if depth > MAX_INDEX_DEPTH {
            return Err(bad(format!("image indexes nest deeper than {MAX_INDEX_DEPTH}")));
        }
        let reference = descriptor.annotations.get("vnd.buildkit.history.reference").cloned().or(reference);
        let bytes = self.blob(descriptor)?;
        let parsed: IndexOrManifest = serde_json::from_slice(bytes)
            .map_err(|e| bad(format!("{} is not an OCI index or manifest: {e}", descriptor.digest)))?;
        let is_index = matches!(descriptor.media_type.as_str(), OCI_INDEX | DOCKER_MANIFEST_LIST)
            || matches!(parsed.media_type.as_str(), OCI_INDEX | DOCKER_MANIFEST_LIST)
            || (parsed.config.is_none() && !parsed.manifests.is_empty());
        if is_index {
            for d in &parsed.manifests {
                self.walk(d, reference.clone(), depth.saturating_add(1), out)?;
            }
            return Ok(());
        }
        let Some(config) = parsed.config.filter(|c| c.media_type == HISTORY_RECORD) else {
            // An image manifest of the build's result, not a record.
            return Ok(());
        };
        if parsed.media_type != OCI_MANIFEST && !parsed.media_type.is_empty() {
            return Err(bad(format!("{}: unexpected media type {}", descriptor.digest, parsed.media_type)));
        }
        let record = self.blob(&config)?;
        let mut layers = Vec::with_capacity(parsed.layers.len());
        for layer in parsed.layers {
            let bytes = self.blob(&layer)?;
            layers.push((layer, bytes));
        }
        out.push(RecordBlobs { reference, record, layers });
        Ok(())
    }
}

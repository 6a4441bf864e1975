//! The W3C Trace Context headers a CI system or BuildKit hands down in
//! `TRACEPARENT` and `TRACESTATE`
//! (<https://www.w3.org/TR/trace-context/>, Level 1; the environment
//! variable names are the OpenTelemetry "Environment Variables as Context
//! Propagation Carriers" spec's). Parsed strictly: anything the
//! recommendation says to ignore is a typed error, and the caller starts a
//! new trace instead (with a warning): [`Inherited::from_env`].

/// A parsed `traceparent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    /// `trace-id`: 16 bytes, not all zero.
    pub trace_id: [u8; 16],
    /// `parent-id`: the caller's span, 8 bytes, not all zero.
    pub parent_id: [u8; 8],
    /// `trace-flags` (bit 0: sampled).
    pub flags: u8,
}

/// Why a `traceparent` or `tracestate` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceContextError {
    /// Not `version-traceid-parentid-flags` with the lengths of §3.2.2.
    #[error("traceparent {0:?} is not 00-<32 hex>-<16 hex>-<2 hex>")]
    Shape(String),
    /// A field that must be lowercase hex is not (§3.2.2.2: `HEXDIGLC`).
    #[error("traceparent {0:?}: {1} is not lowercase hex")]
    NotHex(String, &'static str),
    /// Version `ff` is forbidden (§3.2.2.3).
    #[error("traceparent {0:?}: version ff is invalid")]
    Version(String),
    /// An all-zero trace-id or parent-id (§3.2.2.4, §3.2.2.5).
    #[error("traceparent {0:?}: the {1} is all zeros")]
    Zero(String, &'static str),
    /// A `tracestate` that is not a list of at most 32 `key=value` members
    /// (§3.3.1).
    #[error("tracestate {0:?}: {1}")]
    TraceState(String, &'static str),
}

/// `n` lowercase hex digits as bytes.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let bytes = text.as_bytes();
    if bytes.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let [hi, lo] = pair else { return None };
        *o = (digit(*hi)? << 4) | digit(*lo)?;
    }
    Some(out)
}

impl std::str::FromStr for TraceParent {
    type Err = TraceContextError;

    /// §3.2: `00-{trace-id}-{parent-id}-{trace-flags}`. A later version may
    /// append fields after a `-` (§3.2.4: parse the first 55 characters as
    /// version 00); version 00 itself has exactly 55.
    fn from_str(text: &str) -> Result<TraceParent, TraceContextError> {
        let shape = || TraceContextError::Shape(text.to_owned());
        let head = text.get(..55).ok_or_else(shape)?;
        let rest = &text[head.len()..];
        let fields: Vec<&str> = head.split('-').collect();
        let [version, trace, parent, flags] = fields[..] else { return Err(shape()) };
        if version.len() != 2 || trace.len() != 32 || parent.len() != 16 || flags.len() != 2 {
            return Err(shape());
        }
        let [version] = hex::<1>(version).ok_or_else(|| TraceContextError::NotHex(text.to_owned(), "the version"))?;
        if version == 0xff {
            return Err(TraceContextError::Version(text.to_owned()));
        }
        if (version == 0 && !rest.is_empty()) || (version > 0 && !rest.is_empty() && !rest.starts_with('-')) {
            return Err(shape());
        }
        let not_hex = |field| TraceContextError::NotHex(text.to_owned(), field);
        let trace_id = hex::<16>(trace).ok_or_else(|| not_hex("the trace-id"))?;
        let parent_id = hex::<8>(parent).ok_or_else(|| not_hex("the parent-id"))?;
        let [flags] = hex::<1>(flags).ok_or_else(|| not_hex("trace-flags"))?;
        if trace_id == [0; 16] {
            return Err(TraceContextError::Zero(text.to_owned(), "trace-id"));
        }
        if parent_id == [0; 8] {
            return Err(TraceContextError::Zero(text.to_owned(), "parent-id"));
        }
        Ok(TraceParent { trace_id, parent_id, flags })
    }
}

/// Checks a `tracestate` (§3.3.1): comma-separated list-members, empty ones
/// allowed, at most 32; each `key=value` with a key of lowercase letters,
/// digits and `_-*/` (optionally `tenant@system`) starting with a letter
/// or digit, at most 256 characters, and a value of 1–256 printable ASCII
/// characters but `,` and `=`, not ending in a space. Returns the header
/// as given, trimmed.
pub fn check_trace_state(text: &str) -> Result<&str, TraceContextError> {
    let bad = |why| TraceContextError::TraceState(text.to_owned(), why);
    let members: Vec<&str> = text.split(',').map(|m| m.trim_matches([' ', '\t'])).filter(|m| !m.is_empty()).collect();
    if members.len() > 32 {
        return Err(bad("more than 32 list-members"));
    }
    let mut keys = std::collections::BTreeSet::new();
    for member in members {
        let (key, value) = member.split_once('=').ok_or_else(|| bad("a list-member has no '='"))?;
        let key_ok = !key.is_empty()
            && key.len() <= 256
            && key.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && key.bytes().filter(|b| *b == b'@').count() <= 1
            && key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-*/@".contains(&b));
        if !key_ok {
            return Err(bad("a key is not lowercase letters, digits and _-*/@"));
        }
        let value_ok = !value.is_empty()
            && value.len() <= 256
            && !value.ends_with(' ')
            && value.bytes().all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=');
        if !value_ok {
            return Err(bad("a value is empty, too long or not printable ASCII without ',' and '='"));
        }
        if !keys.insert(key) {
            return Err(bad("a key appears twice"));
        }
    }
    Ok(text.trim())
}

/// The trace context handed down through the environment: the span new
/// spans belong under and the vendors' state to pass on with them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inherited {
    /// `TRACEPARENT`, when set and valid: new spans are its children.
    pub parent: Option<TraceParent>,
    /// `TRACESTATE`, checked and trimmed; empty when unset, invalid, or
    /// without a valid parent (§3.3: a `tracestate` only goes with its
    /// `traceparent`).
    pub trace_state: String,
}

/// A variable [`Inherited::from_env`] did not use, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Ignored {
    /// `TRACEPARENT` was refused: new spans start a new trace.
    #[error("TRACEPARENT ignored, the steps start a new trace: {0}")]
    TraceParent(TraceContextError),
    /// `TRACESTATE` was refused: the parent is kept without it.
    #[error("TRACESTATE ignored: {0}")]
    TraceState(TraceContextError),
}

impl Inherited {
    /// `TRACEPARENT` and `TRACESTATE` read through `var` (empty counts as
    /// unset), and what was refused of them.
    ///
    /// ```
    /// use stepmon_otlp_env::{Ignored, Inherited};
    ///
    /// let (inherited, ignored) = Inherited::from_env(|name| match name {
    ///     "TRACEPARENT" => Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
    ///     "TRACESTATE" => Some("Upper=case".into()),
    ///     _ => None,
    /// });
    /// assert_eq!(inherited.parent.unwrap().flags, 1);
    /// assert!(matches!(ignored[..], [Ignored::TraceState(_)]));
    /// ```
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> (Inherited, Vec<Ignored>) {
        let mut ignored = Vec::new();
        let Some(text) = var("TRACEPARENT").filter(|t| !t.is_empty()) else {
            return (Inherited::default(), ignored);
        };
        let parent = match text.parse::<TraceParent>() {
            Ok(parent) => parent,
            Err(e) => {
                ignored.push(Ignored::TraceParent(e));
                return (Inherited::default(), ignored);
            }
        };
        let trace_state = match var("TRACESTATE").filter(|t| !t.is_empty()) {
            Some(state) => match check_trace_state(&state) {
                Ok(state) => state.to_owned(),
                Err(e) => {
                    ignored.push(Ignored::TraceState(e));
                    String::new()
                }
            },
            None => String::new(),
        };
        (Inherited { parent: Some(parent), trace_state }, ignored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_parent_drops_the_state_too() {
        let (inherited, ignored) = Inherited::from_env(|name| match name {
            "TRACEPARENT" => Some("00-00000000000000000000000000000000-00f067aa0ba902b7-01".into()),
            "TRACESTATE" => Some("a=b".into()),
            _ => None,
        });
        assert_eq!(inherited, Inherited::default());
        assert!(matches!(ignored[..], [Ignored::TraceParent(TraceContextError::Zero(..))]));
        assert_eq!(Inherited::from_env(|_| Some(String::new())), (Inherited::default(), Vec::new()));
    }
}

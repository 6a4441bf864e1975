//! `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas,
//! values percent-decoded (the W3C Baggage format the exporter
//! specification names, <https://www.w3.org/TR/baggage/#header-content>).

/// Why a headers variable was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// A pair without `=`.
    #[error("header {0:?} has no '='")]
    NoEquals(String),
    /// A name that is not an HTTP token (RFC 9110 §5.6.2).
    #[error("header name {0:?} is not an HTTP token")]
    Name(String),
    /// A `%` not followed by two hex digits.
    #[error("{0:?}: a '%' is not followed by two hex digits")]
    Escape(String),
    /// A value that is not UTF-8 once decoded.
    #[error("{0:?} is not UTF-8 once decoded")]
    NotUtf8(String),
}

/// The pairs of `text`, in order; empty pairs are skipped.
pub(crate) fn parse(text: &str) -> Result<Vec<(String, String)>, HeaderError> {
    text.split(',')
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').ok_or_else(|| HeaderError::NoEquals(pair.to_owned()))?;
            let key = key.trim();
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b)) {
                return Err(HeaderError::Name(key.to_owned()));
            }
            Ok((key.to_owned(), percent_decode(value.trim())?))
        })
        .collect()
}

/// `%XX` escapes decoded; the result must be UTF-8.
fn percent_decode(text: &str) -> Result<String, HeaderError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or_else(|| HeaderError::Escape(text.to_owned()))?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| HeaderError::NotUtf8(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_names() {
        assert_eq!(parse("a=b%2Cc , ,x=%C3%BC").unwrap(), [("a".into(), "b,c".into()), ("x".into(), "ü".into())]);
        assert!(matches!(percent_decode("%zz"), Err(HeaderError::Escape(_))));
        assert!(matches!(percent_decode("%4"), Err(HeaderError::Escape(_))));
        assert!(matches!(percent_decode("%ff"), Err(HeaderError::NotUtf8(_))));
        assert!(matches!(parse("a b=c"), Err(HeaderError::Name(_))));
        assert!(matches!(parse("novalue"), Err(HeaderError::NoEquals(_))));
    }
}

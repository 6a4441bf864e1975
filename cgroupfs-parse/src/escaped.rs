//! Octal-escaped strings of `/proc/self/mountinfo` (`\040` for space, etc.).

/// A field of `/proc/self/mountinfo` as the kernel printed it: space, tab,
/// newline and backslash appear as `\040`, `\011`, `\012`, `\134`. Borrowed;
/// unescape lazily with [`Escaped::bytes`], [`Escaped::unescape_into`] or
/// (with `std`) [`Escaped::to_path_buf`].
///
/// ```
/// use stepmon_cgroupfs_parse::mountinfo::Escaped;
/// let e = Escaped::new(b"/mnt/my\\040disk");
/// assert!(e.eq_unescaped(b"/mnt/my disk"));
/// let mut buf = [0u8; 32];
/// assert_eq!(e.unescape_into(&mut buf), Some(&b"/mnt/my disk"[..]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Escaped<'a> {
    raw: &'a [u8],
}

impl<'a> Escaped<'a> {
    /// Wraps raw (escaped) bytes.
    #[must_use]
    pub fn new(raw: &'a [u8]) -> Self {
        Escaped { raw }
    }

    /// The bytes as printed, escapes included.
    #[must_use]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The unescaped bytes. A backslash not followed by three octal digits
    /// (the kernel never prints one) is kept literally.
    #[must_use]
    pub fn bytes(&self) -> Unescape<'a> {
        Unescape { rest: self.raw }
    }

    /// Whether the unescaped value equals `other`.
    #[must_use]
    pub fn eq_unescaped(&self, other: &[u8]) -> bool {
        self.bytes().eq(other.iter().copied())
    }

    /// Whether the unescaped value starts with `prefix`.
    #[must_use]
    pub fn starts_with_unescaped(&self, prefix: &[u8]) -> bool {
        let mut bytes = self.bytes();
        prefix.iter().all(|&p| bytes.next() == Some(p))
    }

    /// Number of unescaped bytes.
    #[must_use]
    pub fn unescaped_len(&self) -> usize {
        self.bytes().count()
    }

    /// Unescapes into `buf`, returning the filled part, or `None` if `buf`
    /// is too small.
    pub fn unescape_into<'b>(&self, buf: &'b mut [u8]) -> Option<&'b [u8]> {
        let mut len = 0usize;
        for b in self.bytes() {
            *buf.get_mut(len)? = b;
            len = len.saturating_add(1);
        }
        buf.get(..len)
    }

    /// The unescaped value as a path.
    ///
    /// Off Unix a path is not arbitrary bytes: invalid UTF-8 becomes U+FFFD
    /// there (mountinfo only exists on Linux anyway).
    #[cfg(feature = "std")]
    #[must_use]
    pub fn to_path_buf(&self) -> std::path::PathBuf {
        let bytes: std::vec::Vec<u8> = self.bytes().collect();
        #[cfg(unix)]
        let path = {
            use std::os::unix::ffi::OsStringExt;
            std::ffi::OsString::from_vec(bytes)
        };
        #[cfg(not(unix))]
        let path = std::string::String::from_utf8_lossy(&bytes).into_owned();
        std::path::PathBuf::from(path)
    }
}

/// Iterator over unescaped bytes; see [`Escaped::bytes`].
#[derive(Debug, Clone)]
pub struct Unescape<'a> {
    rest: &'a [u8],
}

fn octal(b: u8) -> Option<u8> {
    let d = b.wrapping_sub(b'0');
    (d < 8).then_some(d)
}

impl Iterator for Unescape<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        let (&first, rest) = self.rest.split_first()?;
        if first == b'\\'
            && let [a, b, c, tail @ ..] = rest
            && let (Some(a), Some(b), Some(c)) = (octal(*a), octal(*b), octal(*c))
            // At most 0o777 = 511 (wrapping ops cannot wrap); above 255 is not
            // kernel output and is kept literally.
            && let Ok(value) = u8::try_from(u16::from(a).wrapping_mul(64).wrapping_add(u16::from(b).wrapping_mul(8)).wrapping_add(u16::from(c)))
        {
            self.rest = tail;
            return Some(value);
        }
        self.rest = rest;
        Some(first)
    }
}

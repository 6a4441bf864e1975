//! Support for testing a fast path against its general parser, used by the
//! unit tests of this crate and of `stepmon-sysusage`.

/// Calls `check` with every prefix of `input` (each place a read can be
/// cut short), then with `input` with each byte replaced, in turn, by each
/// of `substitutes`. The replacements are made in `input` itself and undone,
/// so nothing is allocated (and the helper works without std).
///
/// ```
/// let mut seen = Vec::new();
/// stepmon_cgroupfs_parse::testing::for_each_damaged(&mut *b"ab".to_vec(), b"x", |v| seen.push(v.to_vec()));
/// assert_eq!(seen, [&b""[..], b"a", b"ab", b"xb", b"ax"]);
/// ```
pub fn for_each_damaged(input: &mut [u8], substitutes: &[u8], check: impl FnMut(&[u8])) {
    for_each_damaged_after(input, 0, substitutes, check);
}

/// [`for_each_damaged`] that keeps the first `keep` bytes whole (e.g. the
/// header lines of `/proc/net/dev`): cuts from `keep` on, substitutions
/// after it.
///
/// ```
/// let mut seen = Vec::new();
/// stepmon_cgroupfs_parse::testing::for_each_damaged_after(&mut *b"hab".to_vec(), 1, b"x", |v| seen.push(v.to_vec()));
/// assert_eq!(seen, [&b"h"[..], b"ha", b"hab", b"hxb", b"hax"]);
/// ```
pub fn for_each_damaged_after(input: &mut [u8], keep: usize, substitutes: &[u8], mut check: impl FnMut(&[u8])) {
    for cut in keep..=input.len() {
        check(input.get(..cut).unwrap_or_default());
    }
    for at in keep..input.len() {
        let Some(&original) = input.get(at) else { break };
        for &substitute in substitutes {
            if let Some(byte) = input.get_mut(at) {
                *byte = substitute;
            }
            check(input);
        }
        if let Some(byte) = input.get_mut(at) {
            *byte = original;
        }
    }
}

/// Calls `check` with every substring `text[start..end]` (each place a
/// number or token can be cut on both sides), for checking a scanner
/// against its reference on every cut.
///
/// ```
/// let mut seen = Vec::new();
/// stepmon_cgroupfs_parse::testing::for_each_substring(b"ab", |v| seen.push(v.to_vec()));
/// assert_eq!(seen, [&b""[..], b"a", b"ab", b"", b"b"]);
/// ```
pub fn for_each_substring(text: &[u8], mut check: impl FnMut(&[u8])) {
    for start in 0..text.len() {
        for end in start..=text.len() {
            check(text.get(start..end).unwrap_or_default());
        }
    }
}

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
pub fn for_each_damaged(input: &mut [u8], substitutes: &[u8], mut check: impl FnMut(&[u8])) {
    for cut in 0..=input.len() {
        check(input.get(..cut).unwrap_or_default());
    }
    for at in 0..input.len() {
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

//! Interface-name validation, mirroring the kernel's `dev_valid_name()`
//! (`net/core/dev.c`), so we accept exactly the names a kernel can print.

use stepmon_cgroupfs_parse::ErrorKind;

/// `IFNAMSIZ - 1`: longest interface name (the C buffer holds a NUL too).
pub const MAX_NAME_LEN: usize = 15;

/// The kernel's `isspace()` (`lib/ctype.c`): `\t\n\v\f\r`, space, and
/// Latin-1 NBSP (0xA0), which its ctype table also marks as space.
fn kernel_isspace(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0xa0)
}

/// Checks an interface name the way `dev_valid_name()` does: 1 to 15 bytes,
/// not `.` or `..`, no `/`, `:`, NUL or kernel whitespace. Any other byte
/// (including non-ASCII) is allowed, because the kernel allows it.
///
/// On failure returns [`ErrorKind::InvalidKey`] and the index of the offending
/// byte (0 for an empty, too long or dot name).
///
/// ```
/// use stepmon_netns_stats::parse::validate_name;
/// assert!(validate_name(b"enp0s31f6").is_ok());
/// assert!(validate_name(b"fifteen-chars15").is_ok());
/// assert!(validate_name(b"sixteen-chars-16").is_err());
/// assert_eq!(validate_name(b"a/b").unwrap_err().1, 1);
/// ```
pub fn validate_name(name: &[u8]) -> core::result::Result<(), (ErrorKind, usize)> {
    if name.is_empty() || name.len() > MAX_NAME_LEN || name == b"." || name == b".." {
        return Err((ErrorKind::InvalidKey, 0));
    }
    match name.iter().position(|&b| b == b'/' || b == b':' || b == 0 || kernel_isspace(b)) {
        Some(at) => Err((ErrorKind::InvalidKey, at)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_rules() {
        for ok in [&b"lo"[..], b"eth0", b"veth1a2b3c4", b"br-0123456789ab", b"wg\xc3\xbc", b"a.b", b"..."] {
            assert!(validate_name(ok).is_ok(), "{ok:?}");
        }
        for (bad, at) in [
            (&b""[..], 0),
            (b".", 0),
            (b"..", 0),
            (b"0123456789abcdef", 0),
            (b"a b", 1),
            (b"a\tb", 1),
            (b"ab:", 2),
            (b"a/b", 1),
            (b"\xa0x", 0),
            (b"x\0", 1),
        ] {
            assert_eq!(validate_name(bad), Err((ErrorKind::InvalidKey, at)), "{bad:?}");
        }
    }
}

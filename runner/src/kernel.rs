//! The running kernel's version, for features that a kernel release
//! decides (the proc connector's event filter, `cgroup.kill`).

/// (major, minor) of a release such as `6.18.44-fc-v657`.
pub(crate) fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(kernel_version("6.18.44-fc-v657"), Some((6, 18)));
        assert_eq!(kernel_version("5.4.0-150-generic"), Some((5, 4)));
        assert_eq!(kernel_version("garbage"), None);
        assert!(kernel_version("5.14.0").is_some_and(|v| v >= (5, 14)));
    }
}

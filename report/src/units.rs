//! Human units for the terminal (JSON keeps raw numbers), and the parsers of
//! the quantities people type on the command line (`--memory-max 512M`).
//!
//! The formatters round first and pick the unit after: a value that rounds
//! up to the next unit's base is shown in that unit (`1_048_575` bytes is
//! `1.0 MiB`, not `1024.0 KiB`; `59.999` s is `1m0.0s`, not `60.00 s`).

/// `format!("{value:.decimals$}")` unless that text reaches `base` (the
/// next unit's base), which it can by rounding alone; `None` then.
fn mantissa(value: f64, decimals: u32, base: f64) -> Option<String> {
    let text = crate::fixed::string(value, decimals);
    // The text is a plain decimal number, so it parses; what it reads as is
    // what a person sees.
    (text.parse::<f64>().is_ok_and(|shown| shown < base)).then_some(text)
}

/// `1536` → `1.5 KiB` (binary units, one decimal; bytes below 1 KiB exact).
#[allow(clippy::cast_precision_loss)]
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    for unit in &UNITS[1..UNITS.len() - 1] {
        if let Some(text) = mantissa(value, 1, 1024.0) {
            return format!("{text} {unit}");
        }
        value /= 1024.0;
    }
    format!("{value:.1} {}", UNITS[UNITS.len() - 1])
}

/// `0.0123` → `12.3 ms`, `2.5` → `2.50 s`, `75.2` → `1m15.2s`.
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        return format!("{s} s");
    }
    if s < 1.0
        && let Some(ms) = mantissa(s * 1000.0, 1, 1000.0)
    {
        return format!("{ms} ms");
    }
    if s < 60.0
        && let Some(text) = mantissa(s, 2, 60.0)
    {
        return format!("{text} s");
    }
    // Whole tenths first, so that the seconds field never reads 60.0.
    let tenths = (s * 10.0).round();
    let minutes = (tenths / 600.0).floor();
    let rest = (tenths - minutes * 600.0) / 10.0;
    format!("{minutes:.0}m{rest:.1}s")
}

/// `0.123` → `12.3%`.
pub fn percent(share: f64) -> String {
    crate::fixed::string(share * 100.0, 1) + "%"
}

/// What [`parse_bytes`] accepts, for its error messages.
const BYTE_FORMS: &str = "N, NK, NKB or NKiB with K, M, G or T (any case; all binary: K = 1024, KB = KiB = 1024)";

/// A size in bytes as people write it for `--memory-max`: `N`, `N[KMGT]`,
/// `N[KMGT]B` or `N[KMGT]iB`, `N` a whole number of ASCII digits and the
/// unit letter in either case (`512M`, `2g`, `16MiB`, `1KB`).
///
/// Every unit is binary, 1024-based, as `--memory-max` has always been and as
/// the kernel's own `memory.max` notation (`512M`) is: `K`, `KB` and `KiB`
/// all mean 1024 bytes; there are no SI (1000-based) units. `i` and `B` are
/// taken only as written (`Kb` would read as kilobits).
///
/// # Errors
///
/// Anything else (`2iB`, `5BB`, `1.5G`, `-1`, ` 5`, an empty string), with
/// a message listing the accepted forms; and a size above `u64::MAX` bytes.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    let invalid = || format!("not a size: {text:?}; expected {BYTE_FORMS}");
    if digits.is_empty() {
        return Err(invalid());
    }
    let mut letters = unit.chars();
    let shift = match letters.next().map(|c| c.to_ascii_uppercase()) {
        None => 0,
        Some('K') => 10,
        Some('M') => 20,
        Some('G') => 30,
        Some('T') => 40,
        Some(_) => return Err(invalid()),
    };
    if !matches!(letters.as_str(), "" | "B" | "iB") {
        return Err(invalid());
    }
    let too_large = || format!("too large: {text:?} is more than {} bytes", u64::MAX);
    // Only digits, so the one way to fail is overflow.
    let value: u64 = digits.parse().map_err(|_| too_large())?;
    value.checked_mul(1u64 << shift).ok_or_else(too_large)
}

/// A number of CPU cores for `--cpus`: a positive decimal number of ASCII
/// digits with at most one `.` (`2`, `1.5`, `0.25`, `.5`).
///
/// # Errors
///
/// Zero, signs, exponents, `inf`, `nan`, blanks and anything else that is
/// not such a number.
pub fn parse_cores(text: &str) -> Result<f64, String> {
    let plain = text.chars().any(|c| c.is_ascii_digit())
        && text.chars().all(|c| c.is_ascii_digit() || c == '.')
        && text.matches('.').count() <= 1;
    let invalid = || format!("not a number of cores: {text:?}; expected a positive decimal number such as 2 or 1.5");
    if !plain {
        return Err(invalid());
    }
    let cores: f64 = text.parse().map_err(|_| invalid())?;
    if cores > 0.0 && cores.is_finite() {
        Ok(cores)
    } else {
        Err(format!("not a number of cores: {text:?}; it must be above 0"))
    }
}

/// A number of tasks for `--pids-max`: a whole number of ASCII digits, at
/// least 1 (the step's own process is a task of its cgroup, so `pids.max`
/// 0 would keep the step from starting).
///
/// # Errors
///
/// `0`, signs, blanks, units, anything not all digits, and numbers above
/// `u64::MAX`.
pub fn parse_count(text: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("not a count: {text:?}; expected a whole number such as 512"));
    }
    match text.parse::<u64>() {
        Ok(0) => Err(format!("not a count: {text:?}; it must be at least 1 (the step itself is a task)")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("too large: {text:?} is more than {}", u64::MAX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(64 << 20), "64.0 MiB");
        assert_eq!(seconds(0.0123), "12.3 ms");
        assert_eq!(seconds(2.5), "2.50 s");
        assert_eq!(seconds(75.2), "1m15.2s");
        assert_eq!(percent(0.123), "12.3%");
    }

    #[test]
    fn rounding_up_moves_to_the_next_unit() {
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1_048_575), "1.0 MiB");
        assert_eq!(bytes(1_048_524), "1023.9 KiB");
        assert_eq!(bytes(u64::MAX), "16384.0 PiB");
        assert_eq!(seconds(0.99996), "1.00 s");
        assert_eq!(seconds(0.99994), "999.9 ms");
        assert_eq!(seconds(59.999), "1m0.0s");
        assert_eq!(seconds(59.994), "59.99 s");
        assert_eq!(seconds(119.97), "2m0.0s");
        assert_eq!(seconds(119.94), "1m59.9s");
        assert_eq!(seconds(f64::NAN), "NaN s");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("0"), Ok(0));
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("16m"), Ok(16 << 20));
        assert_eq!(parse_bytes("1K"), Ok(1024));
        assert_eq!(parse_bytes("1kB"), Ok(1024), "KB is binary too");
        assert_eq!(parse_bytes("1KiB"), Ok(1024));
        assert_eq!(parse_bytes("2GiB"), Ok(2 << 30));
        assert_eq!(parse_bytes("3t"), Ok(3 << 40));
        assert_eq!(parse_bytes("16777215T"), Ok(16_777_215 << 40));
    }

    #[test]
    fn junk_sizes_are_rejected() {
        for junk in [
            "", "M", "iB", "B", "5B", "2iB", "5BB", "5KBB", "5KiBB", "5KIB", "5Kib", "5Kb", "5Ki", "12X", "1.5G", "-1",
            "+1", " 5", "5 ", "5 M", "0x10", "1e3", "５", "5\u{0}",
        ] {
            let error = parse_bytes(junk).expect_err(junk);
            assert!(error.contains("NKiB") && error.contains("1024"), "{junk:?}: {error}");
        }
    }

    #[test]
    fn oversized_sizes_are_rejected() {
        assert_eq!(parse_bytes("18446744073709551615"), Ok(u64::MAX));
        for big in ["18446744073709551616", "16777216T", "17179869184G", "99999999999999999999999K"] {
            assert!(parse_bytes(big).expect_err(big).starts_with("too large"), "{big}");
        }
    }

    #[test]
    fn cores() {
        assert_eq!(parse_cores("2"), Ok(2.0));
        assert_eq!(parse_cores("1.5"), Ok(1.5));
        assert_eq!(parse_cores("0.25"), Ok(0.25));
        assert_eq!(parse_cores(".5"), Ok(0.5));
        assert_eq!(parse_cores("3."), Ok(3.0));
        for junk in [
            "", "0", "0.0", ".", "-1", "-0.5", "+1", "inf", "infinity", "nan", "NaN", "1e3", "1.5.2", " 1", "1 ",
            "1,5", "two", "1.5x",
        ] {
            assert!(parse_cores(junk).is_err(), "{junk:?}");
        }
        // 400 digits are beyond f64's range: infinite, rejected.
        assert!(parse_cores(&"9".repeat(400)).is_err());
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("1"), Ok(1));
        assert_eq!(parse_count("512"), Ok(512));
        assert_eq!(parse_count("18446744073709551615"), Ok(u64::MAX));
        for junk in ["", "0", "-1", "+1", "1.0", "1k", " 1", "1 ", "max", "0x10"] {
            assert!(parse_count(junk).is_err(), "{junk:?}");
        }
        assert!(parse_count("18446744073709551616").unwrap_err().starts_with("too large"));
    }
}

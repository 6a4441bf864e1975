//! Human units for the terminal (JSON keeps raw numbers).

/// `1536` → `1.5 KiB`.
#[allow(clippy::cast_precision_loss)]
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{n} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

/// `0.0123` → `12.3 ms`, `75.2` → `1m15.2s`.
pub fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{:.1} ms", s * 1000.0)
    } else if s < 60.0 {
        format!("{s:.2} s")
    } else {
        let minutes = (s / 60.0).floor();
        format!("{minutes:.0}m{:.1}s", s - minutes * 60.0)
    }
}

/// `0.123` → `12.3%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
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
}

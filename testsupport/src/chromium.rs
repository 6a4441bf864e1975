//! Headless Chromium (Debian's `chromium`) for the HTML tests of the report
//! and the history: runs under `timeout -k 5 60` (which kills its whole
//! process group) with a throwaway `--user-data-dir`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Window size for the renders (the page is at most 780 px wide).
pub const WINDOW: (u32, u32) = (900, 4000);

/// `STEPMON_CHROMIUM`, or the first `chromium` on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("STEPMON_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join("chromium")).find(|p| p.is_file())
}

/// Chromium's path; without one, `None` after [`crate::skip::skip`] said why.
pub fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = find_chromium();
    if found.is_none() {
        crate::skip::skip(test, "chromium not found on PATH (Debian package `chromium`; or set STEPMON_CHROMIUM)");
    }
    found
}

/// A Chromium binary and the throwaway profile it runs with.
#[derive(Debug)]
pub struct Chromium {
    binary: PathBuf,
    profile: PathBuf,
}

impl Chromium {
    /// Chromium at `binary` with a throwaway profile at `profile`.
    pub fn new(binary: PathBuf, profile: PathBuf) -> Chromium {
        Chromium { binary, profile }
    }

    /// Runs Chromium on `page` with `args`, returns stdout.
    pub fn run(&self, page: &Path, args: &[String]) -> String {
        let started = Instant::now();
        let output = Command::new("timeout")
            .args(["-k", "5", "60"])
            .arg(&self.binary)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check"])
            .args(["--disable-extensions", "--disable-background-networking", "--hide-scrollbars"])
            .arg(format!("--user-data-dir={}", self.profile.display()))
            .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
            .args(args)
            .arg(format!("file://{}", page.display()))
            .output()
            .expect("run timeout/chromium");
        eprintln!("chromium {args:?} on {}: {:.2} s", page.display(), started.elapsed().as_secs_f64());
        assert!(
            output.status.success(),
            "chromium failed ({}; 124 = timed out): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("UTF-8 DOM")
    }

    /// The DOM of `page` after its scripts ran (`--dump-dom`).
    pub fn dump_dom(&self, page: &Path) -> String {
        self.run(page, &["--dump-dom".to_owned()])
    }

    /// A PNG screenshot of `page`, written to `png` and read back.
    pub fn screenshot(&self, page: &Path, png: &Path) -> Vec<u8> {
        self.run(page, &[format!("--screenshot={}", png.display())]);
        std::fs::read(png).expect("screenshot written")
    }
}

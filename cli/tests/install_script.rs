//! scripts/install.sh against a local directory standing in for a release:
//! the assets as scripts/dist names them, a SHA256SUMS, and a `uname` on
//! PATH that names the machine. The binaries are stand-in scripts that
//! answer `--version` (install.sh runs what it installs once), each
//! marked with its architecture; one test installs the real `stepmon`
//! under test. Each run gets a clean environment (no GITHUB_PATH or
//! STEPMON_* of the caller).
//!
//! The script runs under dash (Debian's /bin/sh, no bash extensions) and
//! busybox sh (its applets, uname among them, are built in, so it runs
//! only where a stand-in `uname` is not needed).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use common::release::{asset_for as asset, sha256};
use common::{scratch, write_executable};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn install_script() -> PathBuf {
    repo_file("scripts/install.sh")
}

/// This host's architecture as install.sh and scripts/dist name it.
fn host_arch() -> &'static str {
    std::env::consts::ARCH
}

/// A stand-in binary: a script that answers `--version` as stepmon does,
/// with a mark saying which one it is.
fn stand_in(mark: &str) -> Vec<u8> {
    format!("#!/bin/sh\necho \"stepmon {VERSION} ({mark})\"\n").into_bytes()
}

/// A file of a release directory.
struct Asset {
    name: String,
    bytes: Vec<u8>,
    /// What SHA256SUMS takes its sum of: `bytes` where `None`.
    listed: Option<Vec<u8>>,
}

fn file(name: &str, bytes: Vec<u8>) -> Asset {
    Asset { name: name.to_owned(), bytes, listed: None }
}

/// A release directory: each asset written, SHA256SUMS listing each.
fn release(dir: &Path, assets: &[Asset]) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let mut sums = String::new();
    for Asset { name, bytes, listed } in assets {
        let path = dir.join(name);
        write_executable(&path, listed.as_deref().unwrap_or(bytes));
        sums.push_str(&format!("{}  {name}\n", sha256(&path)));
        fs::write(&path, bytes).unwrap();
    }
    fs::write(dir.join("SHA256SUMS"), sums).unwrap();
    dir.to_owned()
}

/// The usual release: a stand-in binary for each architecture, install.sh.
fn usual_release(dir: &Path) -> PathBuf {
    release(
        dir,
        &[
            file(&asset("x86_64"), stand_in("x86_64")),
            file(&asset("aarch64"), stand_in("aarch64")),
            file("install.sh", fs::read(install_script()).unwrap()),
        ],
    )
}

/// A directory holding a `uname` that says Linux and `machine`.
fn fake_uname(dir: &Path, os: &str, machine: &str) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    write_executable(
        &dir.join("uname"),
        format!("#!/bin/sh\ncase \"$1\" in -m) echo {machine} ;; *) echo {os} ;; esac\n").as_bytes(),
    );
    dir.to_owned()
}

/// install.sh under `shell` with only `env` (and HOME) set.
fn run_install(shell: &str, home: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(shell);
    command.arg(install_script()).env_clear().env("HOME", home);
    if !env.iter().any(|(k, _)| *k == "PATH") {
        command.env("PATH", "/usr/bin:/bin");
    }
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn has(shell: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {shell}")]).output().is_ok_and(|o| o.status.success())
}

fn str_of(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn installs_the_binary_of_each_machine_name() {
    if !has("dash") {
        return common::skip::skip("installs_the_binary_of_each_machine_name", "no dash (Debian's /bin/sh)");
    }
    let dir = scratch("installs_the_binary_of_each_machine_name");
    let rel = usual_release(&dir.join("release"));
    // Both names uname -m gives each architecture (Linux's, and the BSDs'
    // and macOS's that some containers report), the release given as a
    // path, as file:// and with a trailing slash.
    let bases = [str_of(&rel).to_owned(), format!("file://{}", rel.display()), format!("{}/", rel.display())];
    let cases = [("x86_64", "x86_64"), ("amd64", "x86_64"), ("aarch64", "aarch64"), ("arm64", "aarch64")];
    for (i, (machine, arch)) in cases.iter().enumerate() {
        let bin = fake_uname(&dir.join(format!("uname-{machine}")), "Linux", machine);
        let target = dir.join(format!("installed-{machine}"));
        let out = run_install(
            "dash",
            &dir,
            &[
                ("PATH", &format!("{}:/usr/bin:/bin", bin.display())),
                ("STEPMON_INSTALL_BASE", &bases[i % bases.len()]),
                ("STEPMON_INSTALL_DIR", str_of(&target)),
            ],
        );
        assert!(out.status.success(), "uname -m {machine}: {}", stderr(&out));
        let installed = target.join("stepmon");
        assert_eq!(fs::read(&installed).unwrap(), stand_in(arch), "uname -m {machine}: not the {arch} binary");
        assert_eq!(fs::metadata(&installed).unwrap().permissions().mode() & 0o777, 0o755);
        let said = stderr(&out);
        assert!(
            said.contains(&format!(
                "installed stepmon {VERSION} ({arch}) ({}) to {}",
                asset(arch),
                installed.display()
            )),
            "uname -m {machine}: {said}"
        );
        // Nothing but the binary is left in the directory.
        assert_eq!(fs::read_dir(&target).unwrap().count(), 1);
    }
}

/// The real binary of this host's architecture, with the real `uname`,
/// under dash and busybox sh. The release holds it as a symbolic link (the
/// debug binary is large; install.sh copies through the link).
#[test]
fn installs_the_real_binary_under_dash_and_busybox_sh() {
    let name = "installs_the_real_binary_under_dash_and_busybox_sh";
    let dir = scratch(name);
    let rel = dir.join("release");
    fs::create_dir_all(&rel).unwrap();
    let real = Path::new(env!("CARGO_BIN_EXE_stepmon"));
    std::os::unix::fs::symlink(real, rel.join(asset(host_arch()))).unwrap();
    fs::write(rel.join("SHA256SUMS"), format!("{}  {}\n", sha256(real), asset(host_arch()))).unwrap();
    let version = Command::new(real).arg("--version").output().unwrap();
    let version = String::from_utf8(version.stdout).unwrap();
    for shell in ["dash", "busybox"] {
        if !has(shell) {
            return common::skip::skip(name, format_args!("no {shell} (scripts/setup installs busybox-static)"));
        }
        let target = dir.join(format!("installed-{shell}"));
        let mut command = Command::new(shell);
        if shell == "busybox" {
            command.arg("sh");
        }
        let out = command
            .arg(install_script())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &*dir)
            .env("STEPMON_INSTALL_BASE", &rel)
            .env("STEPMON_INSTALL_DIR", &target)
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let installed = target.join("stepmon");
        assert!(fs::read(&installed).unwrap() == fs::read(real).unwrap(), "{shell}: not the binary");
        assert!(!fs::symlink_metadata(&installed).unwrap().file_type().is_symlink());
        assert!(stderr(&out).contains(&format!("installed {} ", version.trim())), "{shell}: {}", stderr(&out));
    }
}

#[test]
fn refuses_a_binary_whose_sum_differs() {
    let dir = scratch("refuses_a_binary_whose_sum_differs");
    let good = stand_in("good");
    let mut corrupted = good.clone();
    corrupted[12] ^= 1;
    // SHA256SUMS lists the good file's sum; the file served is the other.
    let rel = release(&dir.join("release"), &[Asset { listed: Some(good), ..file(&asset("aarch64"), corrupted) }]);
    let bin = fake_uname(&dir.join("bin"), "Linux", "aarch64");
    let target = dir.join("installed");
    fs::create_dir_all(&target).unwrap();
    write_executable(&target.join("stepmon"), b"an earlier install");
    let out = run_install(
        "sh",
        &dir,
        &[
            ("PATH", &format!("{}:/usr/bin:/bin", bin.display())),
            ("STEPMON_INSTALL_BASE", str_of(&rel)),
            ("STEPMON_INSTALL_DIR", str_of(&target)),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("SHA-256 mismatch") && said.contains("nothing installed"), "{said}");
    // The earlier install is untouched, and no temporary file is left.
    assert_eq!(fs::read(target.join("stepmon")).unwrap(), b"an earlier install");
    assert_eq!(fs::read_dir(&target).unwrap().count(), 1);
}

/// A binary that does not run here (another machine's, or a directory
/// mounted noexec) is refused before it replaces anything.
#[test]
fn refuses_a_binary_that_does_not_run() {
    let dir = scratch("refuses_a_binary_that_does_not_run");
    let broken = b"#!/bin/sh\necho 'cannot execute: Exec format error' >&2\nexit 126\n".to_vec();
    let rel = release(&dir.join("release"), &[file(&asset("aarch64"), broken)]);
    let bin = fake_uname(&dir.join("bin"), "Linux", "aarch64");
    let target = dir.join("installed");
    fs::create_dir_all(&target).unwrap();
    write_executable(&target.join("stepmon"), b"an earlier install");
    let out = run_install(
        "sh",
        &dir,
        &[
            ("PATH", &format!("{}:/usr/bin:/bin", bin.display())),
            ("STEPMON_INSTALL_BASE", str_of(&rel)),
            ("STEPMON_INSTALL_DIR", str_of(&target)),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(said.contains("binary does not run here (aarch64") && said.contains("nothing installed"), "{said}");
    assert_eq!(fs::read(target.join("stepmon")).unwrap(), b"an earlier install");
    assert_eq!(fs::read_dir(&target).unwrap().count(), 1);
}

#[test]
fn takes_the_pinned_version_and_refuses_to_guess() {
    let dir = scratch("takes_the_pinned_version_and_refuses_to_guess");
    let rel = release(
        &dir.join("release"),
        &[
            file("stepmon-0.0.1-aarch64-unknown-linux-musl", stand_in("old")),
            file(&asset("aarch64"), stand_in("current")),
        ],
    );
    let bin = fake_uname(&dir.join("bin"), "Linux", "aarch64");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let target = dir.join("installed");
    let run = |version: Option<&str>| {
        let mut env = vec![
            ("PATH", path.as_str()),
            ("STEPMON_INSTALL_BASE", str_of(&rel)),
            ("STEPMON_INSTALL_DIR", str_of(&target)),
        ];
        if let Some(v) = version {
            env.push(("STEPMON_VERSION", v));
        }
        run_install("sh", &dir, &env)
    };
    let out = run(None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("more than one binary for aarch64-unknown-linux-musl"), "{}", stderr(&out));
    let out = run(Some("9.9.9"));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("lists no version 9.9.9 binary"), "{}", stderr(&out));
    assert!(!target.exists());
    for pinned in ["0.0.1", &format!("v{VERSION}")] {
        let out = run(Some(pinned));
        assert!(out.status.success(), "{pinned}: {}", stderr(&out));
    }
    // The second pinned install replaced the first.
    assert_eq!(fs::read(target.join("stepmon")).unwrap(), stand_in("current"));
}

#[test]
fn refuses_other_systems_and_machines() {
    let dir = scratch("refuses_other_systems_and_machines");
    let rel = usual_release(&dir.join("release"));
    for (os, machine, says) in [
        ("Linux", "riscv64", "no stepmon binary for riscv64"),
        ("Linux", "armv7l", "no stepmon binary for armv7l"),
        ("Darwin", "arm64", "binaries are for Linux; this is Darwin"),
    ] {
        let bin = fake_uname(&dir.join(format!("bin-{os}-{machine}")), os, machine);
        let target = dir.join("installed");
        let out = run_install(
            "sh",
            &dir,
            &[
                ("PATH", &format!("{}:/usr/bin:/bin", bin.display())),
                ("STEPMON_INSTALL_BASE", str_of(&rel)),
                ("STEPMON_INSTALL_DIR", str_of(&target)),
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{os} {machine}");
        assert!(stderr(&out).contains(says), "{os} {machine}: {}", stderr(&out));
        assert!(!target.exists());
    }
}

/// The tools install.sh uses besides the shell, a downloader and a SHA-256
/// tool.
const POSIX_TOOLS: [&str; 9] = ["id", "mktemp", "rm", "cp", "mv", "mkdir", "chmod", "sed", "tr"];

/// A directory to be the whole PATH: a stand-in `uname` for this machine
/// and links to `tools` (Debian's, from /usr/bin or /bin).
fn only_tools(dir: &Path, tools: &[&str]) -> PathBuf {
    let bin = fake_uname(dir, "Linux", host_arch());
    for tool in tools {
        let found = ["/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(tool)).find(|p| p.exists());
        std::os::unix::fs::symlink(found.unwrap_or_else(|| panic!("no {tool}")), bin.join(tool)).unwrap();
    }
    bin
}

/// A PATH of exactly the tools install.sh may use (no curl or wget: the
/// release is a directory), with `shasum` (Perl's) or no SHA-256 tool at
/// all in place of sha256sum.
#[test]
fn needs_only_posix_tools_and_shasum_or_sha256sum() {
    let name = "needs_only_posix_tools_and_shasum_or_sha256sum";
    if !Path::new("/usr/bin/shasum").exists() {
        return common::skip::skip(name, "no /usr/bin/shasum (Debian's perl package)");
    }
    let dir = scratch(name);
    let rel = usual_release(&dir.join("release"));
    for with_shasum in [true, false] {
        let mut tools = POSIX_TOOLS.to_vec();
        if with_shasum {
            tools.push("shasum");
        }
        let bin = only_tools(&dir.join(format!("bin-{with_shasum}")), &tools);
        let target = dir.join(format!("installed-{with_shasum}"));
        let out = run_install(
            "/bin/sh",
            &dir,
            &[("PATH", str_of(&bin)), ("STEPMON_INSTALL_BASE", str_of(&rel)), ("STEPMON_INSTALL_DIR", str_of(&target))],
        );
        if with_shasum {
            assert!(out.status.success(), "{}", stderr(&out));
            assert!(target.join("stepmon").exists());
        } else {
            assert_eq!(out.status.code(), Some(1));
            assert!(stderr(&out).contains("neither sha256sum nor shasum"), "{}", stderr(&out));
            assert!(!target.exists());
        }
    }
}

/// What a [`FileServer`] was asked: each request's path and User-Agent.
type Requests = Arc<Mutex<Vec<(String, String)>>>;

/// A loopback HTTP server of one directory's files (404 for anything
/// else), recording each request's path and User-Agent; stopped on drop.
struct FileServer {
    base: String,
    requests: Requests,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FileServer {
    fn start(root: &Path) -> FileServer {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Requests::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (root, log, stopping) = (root.to_owned(), Arc::clone(&requests), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                let agent = head
                    .lines()
                    .find_map(|l| l.strip_prefix("User-Agent: ").or_else(|| l.strip_prefix("user-agent: ")))
                    .unwrap_or("")
                    .to_owned();
                log.lock().unwrap().push((path.clone(), agent));
                let name = path.trim_start_matches('/');
                let body = (!name.contains('/') && !name.is_empty()).then(|| fs::read(root.join(name)).ok()).flatten();
                let response = match &body {
                    Some(body) => {
                        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
                    }
                    None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                };
                let _ = stream.write_all(response.as_bytes());
                let _ = stream.write_all(body.as_deref().unwrap_or_default());
            }
        });
        FileServer { base, requests, stop, thread: Some(thread) }
    }

    fn requests(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.requests.lock().unwrap())
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees the flag.
        let _ = std::net::TcpStream::connect(self.base.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Over HTTP (a server on loopback standing in for the release): with
/// curl, with wget where there is no curl, a base with nothing there, and
/// no downloader at all.
#[test]
fn downloads_with_curl_or_wget() {
    let name = "downloads_with_curl_or_wget";
    for tool in ["curl", "wget"] {
        if !has(tool) {
            return common::skip::skip(name, format_args!("no {tool}"));
        }
    }
    let dir = scratch(name);
    let rel = usual_release(&dir.join("release"));
    let server = FileServer::start(&rel);
    let wanted = asset(host_arch());
    for (downloader, agent) in [("curl", "curl/"), ("wget", "Wget/")] {
        let mut tools = POSIX_TOOLS.to_vec();
        tools.extend(["sha256sum", downloader]);
        let bin = only_tools(&dir.join(format!("bin-{downloader}")), &tools);
        let target = dir.join(format!("installed-{downloader}"));
        let env =
            [("PATH", str_of(&bin)), ("STEPMON_INSTALL_BASE", &server.base), ("STEPMON_INSTALL_DIR", str_of(&target))];
        let out = run_install("/bin/sh", &dir, &env);
        assert!(out.status.success(), "{downloader}: {}", stderr(&out));
        assert_eq!(fs::read(target.join("stepmon")).unwrap(), stand_in(host_arch()));
        let requests = server.requests();
        let paths: Vec<_> = requests.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["/SHA256SUMS".to_owned(), format!("/{wanted}")], "{downloader}");
        assert!(requests.iter().all(|(_, a)| a.starts_with(agent)), "{downloader}: {requests:?}");

        let missing = format!("{}/missing", server.base);
        let out = run_install("/bin/sh", &dir, &[env[0], ("STEPMON_INSTALL_BASE", &missing), env[2]]);
        assert_eq!(out.status.code(), Some(1), "{downloader}");
        assert!(stderr(&out).contains(&format!("cannot fetch {missing}/SHA256SUMS")), "{}", stderr(&out));
        server.requests();
    }
    let mut tools = POSIX_TOOLS.to_vec();
    tools.push("sha256sum");
    let bin = only_tools(&dir.join("bin-none"), &tools);
    let target = dir.join("installed-none");
    let out = run_install(
        "/bin/sh",
        &dir,
        &[("PATH", str_of(&bin)), ("STEPMON_INSTALL_BASE", &server.base), ("STEPMON_INSTALL_DIR", str_of(&target))],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("neither curl nor wget"), "{}", stderr(&out));
    assert!(!target.exists());
    assert!(server.requests().is_empty());
}

#[test]
fn defaults_to_home_and_extends_github_path() {
    let dir = scratch("defaults_to_home_and_extends_github_path");
    let rel = usual_release(&dir.join("release"));
    // A stand-in `id` says uid 1000: the default is then $HOME/.local/bin
    // (as root it would be /usr/local/bin, not touched by a test).
    let bin = fake_uname(&dir.join("bin"), "Linux", host_arch());
    write_executable(&bin.join("id"), b"#!/bin/sh\necho 1000\n");
    let github_path = dir.join("github_path");
    fs::write(&github_path, "/earlier/entry\n").unwrap();
    let home = dir.join("home");
    let out = run_install(
        "sh",
        &home,
        &[
            ("PATH", &format!("{}:/usr/bin:/bin", bin.display())),
            ("STEPMON_INSTALL_BASE", str_of(&rel)),
            ("GITHUB_PATH", str_of(&github_path)),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let installed_dir = home.join(".local/bin");
    assert!(installed_dir.join("stepmon").exists());
    assert_eq!(fs::read_to_string(&github_path).unwrap(), format!("/earlier/entry\n{}\n", installed_dir.display()));

    // Already on PATH: GITHUB_PATH is left alone; without GITHUB_PATH the
    // script says how to reach the binary.
    let out = run_install(
        "sh",
        &home,
        &[
            ("PATH", &format!("{}:{}:/usr/bin:/bin", bin.display(), installed_dir.display())),
            ("STEPMON_INSTALL_BASE", str_of(&rel)),
            ("GITHUB_PATH", str_of(&github_path)),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&github_path).unwrap().lines().count(), 2);
    let out = run_install(
        "sh",
        &home,
        &[("PATH", &format!("{}:/usr/bin:/bin", bin.display())), ("STEPMON_INSTALL_BASE", str_of(&rel))],
    );
    assert!(stderr(&out).contains("is not on PATH: add it"), "{}", stderr(&out));
}

/// `KEY = "VALUE"` of a TOML file's line, the first one.
fn toml_value(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key} = \""))?.strip_suffix('"').map(str::to_owned))
        .unwrap_or_else(|| panic!("no {key} in the file"))
}

/// The release's address and asset names are written in four places:
/// cli/Cargo.toml (`repository`, cargo binstall's `pkg-url`s),
/// install.sh, scripts/dist and the docs' install line. They agree.
#[test]
fn release_address_and_asset_names_agree() {
    let manifest = fs::read_to_string(repo_file("cli/Cargo.toml")).unwrap();
    let repository = toml_value(&manifest, "repository");
    let script = fs::read_to_string(install_script()).unwrap();
    assert!(script.lines().any(|l| l == format!("repository={repository}")), "install.sh names another repository");
    let install_line = format!("curl -fsSL {repository}/releases/latest/download/install.sh | sh");
    for doc in ["README.md", "docs/ci.md"] {
        let text = fs::read_to_string(repo_file(doc)).unwrap();
        assert!(text.contains(&install_line), "{doc} lacks `{install_line}`");
    }

    // cargo binstall's templates, rendered as it does for each Linux target
    // (`{ name }`, `{ version }`, `{ target }`, `{ repo }`), name the asset
    // scripts/dist writes and install.sh picks.
    let render = |template: &str, target: &str| {
        template
            .replace("{ repo }", &repository)
            .replace("{ version }", VERSION)
            .replace("{ name }", "stepmon")
            .replace("{ target }", target)
    };
    let binstall = &manifest[manifest.find("[package.metadata.binstall]").unwrap()..];
    let mut pkg_urls = binstall.lines().filter_map(|l| l.strip_prefix("pkg-url = \"")?.strip_suffix('"'));
    let default = pkg_urls.next().unwrap();
    assert_eq!(toml_value(binstall, "pkg-fmt"), "bin");
    let overrides: Vec<_> = pkg_urls.collect();
    for arch in ["x86_64", "aarch64"] {
        let want = format!("{repository}/releases/download/v{VERSION}/{}", asset(arch));
        assert_eq!(render(default, &format!("{arch}-unknown-linux-musl")), want);
        let gnu = format!("[package.metadata.binstall.overrides.{arch}-unknown-linux-gnu]\npkg-url = \"");
        let start = binstall.find(&gnu).unwrap_or_else(|| panic!("no binstall override for {arch} glibc"));
        let line = binstall[start + gnu.len()..].split('"').next().unwrap();
        assert!(overrides.contains(&line));
        assert_eq!(render(line, &format!("{arch}-unknown-linux-gnu")), want);
        let dist = fs::read_to_string(repo_file("scripts/dist")).unwrap();
        assert!(dist.contains(&format!("\"$out/stepmon-$version-{arch}-unknown-linux-musl\"")), "scripts/dist");
    }
}

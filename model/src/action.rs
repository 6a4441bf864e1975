//! What one action of a build builds: the crate rustc compiles (its name,
//! kind and package), the object a C or C++ compile makes, the file a link
//! writes, a compiler asked about itself (a probe), or else the program.
//!
//! A launcher (`stepmon wrap`, `RUSTC_WRAPPER=stepmon`) names each action it
//! runs from its command line and cargo's environment
//! (`stepmon_job::action::identify`) and keeps the name typed in the job
//! record's start line ([`crate::job::StepStart::action`]); the views turn
//! it into words ([`Action`]'s `Display`) only when they show it.
//!
//! ```
//! use stepmon_model::action::{Action, CrateBuild, CrateKind};
//!
//! let mut serde = CrateBuild::new("serde".into(), CrateKind::Lib, "rustc".into());
//! serde.version = Some("1.0.219".into());
//! assert_eq!(Action::Crate(serde.clone()).to_string(), "serde 1.0.219 (lib)");
//! let json = serde_json::to_string(&Action::Crate(serde))?;
//! assert!(json.starts_with(r#"{"action":"crate","crate":"serde","kind":"lib""#), "{json}");
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

/// What one action of a build builds, tagged by `action` in the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Action {
    /// rustc (or a driver standing in for it, like clippy-driver)
    /// compiling one crate.
    Crate(CrateBuild),
    /// A compiler asked about itself or its target, building nothing the
    /// build keeps: cargo's `rustc -vV` and its `--print` queries (crate
    /// name `___`), a build script's trial compile of a feature
    /// (proc-macro2's, autocfg's), a C compiler's `--version` or
    /// `-dumpmachine`.
    Probe(Probe),
    /// A C or C++ compile (`-c`, or `-S`, `-E`, `-M`): one source file in,
    /// one object (or assembly, or preprocessed source) out.
    Compile(Compile),
    /// A compiler driver linking objects (and maybe compiling sources on
    /// the way) into one output.
    Link(Link),
    /// Any other program: the step is its command.
    Program(Program),
    /// A CI script run by `stepmon shell` (a workflow's `run:` step): the
    /// script's own words, where its command is only the shell and a
    /// temporary file.
    Script(Script),
    /// An action of a kind this version does not know (a newer record's).
    #[serde(other)]
    Unknown,
}

/// rustc compiling one crate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CrateBuild {
    /// The crate's name (`--crate-name`; `build_script_build` for a build
    /// script, whose package names it in words).
    #[serde(rename = "crate")]
    pub crate_name: String,
    /// What it is (its first `--crate-type`, or a build script, or a test).
    pub kind: CrateKind,
    /// Its further `--crate-type`s, when it has several
    /// (`crate-type = ["rlib", "cdylib"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_kinds: Vec<CrateKind>,
    /// Its package's name (cargo's `CARGO_PKG_NAME`), when cargo ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Its package's version (cargo's `CARGO_PKG_VERSION`), when cargo ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The compiler's base name (`rustc`, `clippy-driver`).
    pub compiler: String,
}

impl CrateBuild {
    /// The crate `crate_name` of `kind` built by `compiler`, of no known
    /// package.
    #[must_use]
    pub fn new(crate_name: String, kind: CrateKind, compiler: String) -> CrateBuild {
        CrateBuild { crate_name, kind, more_kinds: Vec::new(), package: None, version: None, compiler }
    }
}

/// What rustc builds of a crate: a `--crate-type`
/// (<https://doc.rust-lang.org/reference/linkage.html>), a build script or
/// a test harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CrateKind {
    /// `--crate-type lib`.
    Lib,
    /// `--crate-type rlib`.
    Rlib,
    /// `--crate-type dylib`.
    Dylib,
    /// `--crate-type cdylib`.
    Cdylib,
    /// `--crate-type staticlib`.
    Staticlib,
    /// `--crate-type bin` (also rustc's default, without a crate type).
    Bin,
    /// `--crate-type proc-macro`.
    ProcMacro,
    /// A package's build script (cargo's crate `build_script_build`).
    BuildScript,
    /// A test harness (`--test`): a package's unit tests, an integration
    /// test or a bench.
    Test,
    /// A crate type this version does not know (a newer rustc's, or a
    /// newer record's kind).
    #[serde(other)]
    Other,
}

impl CrateKind {
    /// Its words: `lib`, `proc-macro`, `build script`, ...
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            CrateKind::Lib => "lib",
            CrateKind::Rlib => "rlib",
            CrateKind::Dylib => "dylib",
            CrateKind::Cdylib => "cdylib",
            CrateKind::Staticlib => "staticlib",
            CrateKind::Bin => "bin",
            CrateKind::ProcMacro => "proc-macro",
            CrateKind::BuildScript => "build script",
            CrateKind::Test => "test",
            CrateKind::Other => "other",
        }
    }
}

/// A compiler asked about itself or its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Probe {
    /// The compiler's base name (`rustc`, `cc`).
    pub compiler: String,
    /// What it was asked: rustc's `--print` requests (`cfg`, `sysroot`)
    /// or `version` (`-vV`, `--version`), the file a build script tries
    /// (`probe.rs`); a C compiler's options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asks: Vec<String>,
    /// The package whose build script asked, when one did (cargo's
    /// `CARGO_PKG_NAME` in the build script's environment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// That package's version (`CARGO_PKG_VERSION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl Probe {
    /// `compiler` asked `asks`, by no build script.
    #[must_use]
    pub fn new(compiler: String, asks: Vec<String>) -> Probe {
        Probe { compiler, asks, package: None, version: None }
    }
}

/// A C or C++ compile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Compile {
    /// The compiler's base name (`cc`, `g++`, `clang`).
    pub compiler: String,
    /// Its output (`-o`), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Its source file, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Compile {
    /// A compile by `compiler` of `source` into `output`.
    #[must_use]
    pub fn new(compiler: String, output: Option<String>, source: Option<String>) -> Compile {
        Compile { compiler, output, source }
    }
}

/// A link by a compiler driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Link {
    /// The driver's base name (`cc`, `g++`).
    pub linker: String,
    /// Its output (`-o`, else the driver's default `a.out`), as given.
    pub output: String,
}

impl Link {
    /// A link by `linker` into `output`.
    #[must_use]
    pub fn new(linker: String, output: String) -> Link {
        Link { linker, output }
    }
}

/// Any other program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Program {
    /// The program's base name.
    pub program: String,
}

impl Program {
    /// The program `program`.
    #[must_use]
    pub fn new(program: String) -> Program {
        Program { program }
    }
}

/// A CI script run by `stepmon shell`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Script {
    /// The shell that ran it (`bash`, `sh`, `pwsh`).
    pub shell: String,
    /// Its first command line (comments and blank lines skipped, cut
    /// short), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}

impl Script {
    /// A script run by `shell`, its first command line `line`.
    #[must_use]
    pub fn new(shell: String, line: Option<String>) -> Script {
        Script { shell, line }
    }
}

impl Action {
    /// Whether it names what the action builds (a crate, a compile's
    /// output, a link's output, a probe), rather than only its program: a
    /// view shows the words of such an action in place of the step's
    /// command.
    #[must_use]
    pub fn names_what_it_builds(&self) -> bool {
        !matches!(self, Action::Program(_) | Action::Script(_) | Action::Unknown)
    }

    /// Whether it is an action of a build (a compiler's run, a probe, a
    /// program through the launcher), not a CI job's script.
    #[must_use]
    pub fn is_build_action(&self) -> bool {
        !matches!(self, Action::Script(_))
    }

    /// Whether it is a probe: a compiler asked about itself, not an action
    /// of the build proper.
    #[must_use]
    pub fn is_probe(&self) -> bool {
        matches!(self, Action::Probe(_))
    }
}

/// The action in words, as people read it in a list of a build's actions:
/// `serde 1.0.219 (lib)`, `serde 1.0.219 (build script)`,
/// `rustc (probe: version)`, `proc-macro2 1.0.107 (build script probe:
/// probe.rs)`, `main.o (cc)`, `app (cc link)`, `protoc`.
impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Crate(c) => {
                // A build script's crate is `build_script_build` in every
                // package: its package says which it is. A package's own
                // crate goes by the package's name (`regex-syntax`, whose
                // crate is `regex_syntax`); another crate of it (a second
                // binary, a test) by its own.
                let name = match (c.kind, &c.package) {
                    (CrateKind::BuildScript, Some(package)) => package,
                    (_, Some(package)) if package.replace('-', "_") == c.crate_name => package,
                    _ => &c.crate_name,
                };
                f.write_str(name)?;
                if let Some(version) = &c.version {
                    write!(f, " {version}")?;
                }
                write!(f, " ({}", c.kind.words())?;
                for kind in &c.more_kinds {
                    write!(f, ", {}", kind.words())?;
                }
                f.write_str(")")
            }
            Action::Probe(p) => {
                // A build script's trial compile goes by its package.
                match &p.package {
                    Some(package) => {
                        f.write_str(package)?;
                        if let Some(version) = &p.version {
                            write!(f, " {version}")?;
                        }
                        f.write_str(" (build script probe")?;
                    }
                    None => write!(f, "{} (probe", p.compiler)?,
                }
                if !p.asks.is_empty() {
                    write!(f, ": {}", p.asks.join(", "))?;
                }
                f.write_str(")")
            }
            Action::Compile(c) => {
                let what = c.output.as_deref().or(c.source.as_deref()).unwrap_or("?");
                write!(f, "{what} ({})", c.compiler)
            }
            Action::Link(l) => write!(f, "{} ({} link)", l.output, l.linker),
            Action::Program(p) => f.write_str(&p.program),
            Action::Script(s) => f.write_str(s.line.as_deref().unwrap_or(&s.shell)),
            Action::Unknown => f.write_str("an action of a newer kind"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_action_reads_as_what_it_builds() {
        let mut serde = CrateBuild::new("serde".into(), CrateKind::Lib, "rustc".into());
        serde.version = Some("1.0.219".into());
        assert_eq!(Action::Crate(serde).to_string(), "serde 1.0.219 (lib)");
        let mut syntax = CrateBuild::new("regex_syntax".into(), CrateKind::Lib, "rustc".into());
        syntax.package = Some("regex-syntax".into());
        assert_eq!(Action::Crate(syntax.clone()).to_string(), "regex-syntax (lib)");
        syntax.crate_name = "parse_tests".into();
        assert_eq!(Action::Crate(syntax).to_string(), "parse_tests (lib)");
        let mut script = CrateBuild::new("build_script_build".into(), CrateKind::BuildScript, "rustc".into());
        script.package = Some("serde".into());
        assert_eq!(Action::Crate(script).to_string(), "serde (build script)");
        let mut both = CrateBuild::new("ffi".into(), CrateKind::Rlib, "rustc".into());
        both.more_kinds = vec![CrateKind::Cdylib];
        assert_eq!(Action::Crate(both).to_string(), "ffi (rlib, cdylib)");
        let probe = Action::Probe(Probe::new("rustc".into(), vec!["file-names".into(), "cfg".into()]));
        assert_eq!(probe.to_string(), "rustc (probe: file-names, cfg)");
        assert!(probe.is_probe() && probe.names_what_it_builds());
        assert_eq!(Action::Probe(Probe::new("cc".into(), Vec::new())).to_string(), "cc (probe)");
        let mut trial = Probe::new("rustc".into(), vec!["probe.rs".into()]);
        (trial.package, trial.version) = (Some("proc-macro2".into()), Some("1.0.107".into()));
        assert_eq!(Action::Probe(trial).to_string(), "proc-macro2 1.0.107 (build script probe: probe.rs)");
        let compile = Action::Compile(Compile::new("cc".into(), Some("main.o".into()), Some("main.c".into())));
        assert_eq!(compile.to_string(), "main.o (cc)");
        let script = Action::Script(Script::new("bash".into(), Some("make -j4".into())));
        assert_eq!(script.to_string(), "make -j4");
        assert!(!script.names_what_it_builds() && !script.is_build_action());
        assert_eq!(Action::Script(Script::new("sh".into(), None)).to_string(), "sh");
        let by_source = Action::Compile(Compile::new("g++".into(), None, Some("x.cpp".into())));
        assert_eq!(by_source.to_string(), "x.cpp (g++)");
        assert_eq!(Action::Link(Link::new("cc".into(), "app".into())).to_string(), "app (cc link)");
        let program = Action::Program(Program::new("protoc".into()));
        assert_eq!(program.to_string(), "protoc");
        assert!(!program.names_what_it_builds() && !program.is_probe());
    }

    #[test]
    fn the_json_round_trips_and_reads_kinds_it_does_not_know() {
        let mut c = CrateBuild::new("m".into(), CrateKind::ProcMacro, "rustc".into());
        c.package = Some("m".into());
        let actions = [
            Action::Crate(c),
            Action::Probe(Probe::new("rustc".into(), vec!["version".into()])),
            Action::Compile(Compile::new("cc".into(), Some("a.o".into()), None)),
            Action::Link(Link::new("cc".into(), "a.out".into())),
            Action::Program(Program::new("ar".into())),
        ];
        for action in actions {
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), action, "{json}");
        }
        let newer = r#"{"action":"crate","crate":"x","kind":"sdylib","compiler":"rustc"}"#;
        let Action::Crate(read) = serde_json::from_str::<Action>(newer).unwrap() else { panic!("a crate") };
        assert_eq!(read.kind, CrateKind::Other);
        let newest = r#"{"action":"shader","file":"x.glsl"}"#;
        assert_eq!(serde_json::from_str::<Action>(newest).unwrap(), Action::Unknown);
        let json =
            serde_json::to_string(&Action::Crate(CrateBuild::new("b".into(), CrateKind::BuildScript, "r".into())));
        assert!(json.unwrap().contains(r#""kind":"build-script""#));
    }
}

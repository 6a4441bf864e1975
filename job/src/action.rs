//! What a build action builds, read from its command line and cargo's
//! environment: the name a launcher (`stepmon wrap`, `RUSTC_WRAPPER=stepmon`)
//! records with the step ([`stepmon_model::action::Action`]). Pure: the
//! environment comes through a lookup function, nothing is read here.
//!
//! How the callers lay out the command line:
//!
//! * cargo runs `$RUSTC_WRAPPER $RUSTC ARGS…`, and `$RUSTC_WRAPPER
//!   $RUSTC_WORKSPACE_WRAPPER $RUSTC ARGS…` for the workspace's own crates
//!   (<https://doc.rust-lang.org/cargo/reference/config.html#buildrustc-wrapper>),
//!   with `CARGO_PKG_NAME`, `CARGO_PKG_VERSION` and `CARGO_CRATE_NAME` set
//!   for each crate it compiles
//!   (<https://doc.rust-lang.org/cargo/reference/environment-variables.html#environment-variables-cargo-sets-for-crates>).
//!   Before the build it asks rustc about itself: `rustc -vV`, and
//!   `rustc - --crate-name ___ --print=file-names …` (the `___` crate).
//! * CMake runs `<launcher> <compiler> ARGS…`
//!   (`CMAKE_<LANG>_COMPILER_LAUNCHER`); make runs `$(CC) … -c -o x.o x.c`
//!   and `$(CC) … -o app x.o y.o`, so `CC="stepmon wrap cc"` puts the
//!   compiler first.
//! * A compiler cache (sccache, ccache) or any other wrapper may stand in
//!   front: `stepmon wrap sccache rustc …`, `stepmon wrap my-wrapper ccache cc …`.

use stepmon_model::action::{Action, Compile, CrateBuild, CrateKind, Link, Probe, Program};

/// Wrappers that run the compiler named by their first argument: compiler
/// caches and distributors, and clippy's driver (cargo's
/// `RUSTC_WORKSPACE_WRAPPER` under `cargo clippy`).
pub const KNOWN_WRAPPERS: &[&str] = &["sccache", "ccache", "distcc", "icecc", "buildcache", "clippy-driver"];

/// How far into a command line the compiler is looked for (a wrapper or
/// two in front of it).
const MAX_WRAPPERS: usize = 3;

/// Which compiler a program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compiler {
    Rust,
    C,
}

/// The base name of `program`: after its last `/` (or `\`).
fn base_name(program: &str) -> &str {
    program.rsplit(['/', '\\']).next().unwrap_or(program)
}

/// Whether `program` is a rustc: its file name is `rustc` or `rustc.exe`
/// (a path such as `/root/.rustup/toolchains/…/bin/rustc`, as cargo passes
/// `$RUSTC`, or the bare name).
///
/// ```
/// use stepmon_job::action::is_rustc;
/// assert!(is_rustc("rustc") && is_rustc("/usr/lib/rust/bin/rustc") && is_rustc(r"C:\rust\rustc.exe"));
/// assert!(!is_rustc("rustc-wrapper") && !is_rustc("/usr/bin/cc") && !is_rustc(""));
/// ```
#[must_use]
pub fn is_rustc(program: &str) -> bool {
    matches!(base_name(program), "rustc" | "rustc.exe")
}

/// C and C++ compiler drivers, by name with any target prefix
/// (`x86_64-linux-gnu-gcc`) and version suffix (`gcc-14`) taken off.
const C_COMPILERS: &[&str] = &["cc", "c++", "gcc", "g++", "clang", "clang++", "tcc", "icx", "icpx"];

/// Whether `program` is a C or C++ compiler driver.
fn is_c_compiler(program: &str) -> bool {
    let name = base_name(program);
    let name = name.strip_suffix(".exe").unwrap_or(name);
    // `gcc-14`, `clang-19`: a version after the last dash.
    let name = match name.rsplit_once('-') {
        Some((front, version)) if !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.') => {
            front
        }
        _ => name,
    };
    // `x86_64-linux-gnu-gcc`, `aarch64-none-elf-g++`: the target before the last dash.
    let name = name.rsplit_once('-').map_or(name, |(_, driver)| driver);
    C_COMPILERS.contains(&name)
}

fn compiler_of(program: &str) -> Option<Compiler> {
    if is_rustc(program) {
        return Some(Compiler::Rust);
    }
    is_c_compiler(program).then_some(Compiler::C)
}

/// Whether `program` is a known wrapper ([`KNOWN_WRAPPERS`]).
fn is_known_wrapper(program: &str) -> bool {
    let name = base_name(program);
    KNOWN_WRAPPERS.contains(&name.strip_suffix(".exe").unwrap_or(name))
}

/// Where the compiler is in `argv`, and which: the first word that is one,
/// behind known wrappers and one unknown program in front (a wrapper of
/// the caller's own); `None` when there is none.
fn find_compiler<S: AsRef<str>>(argv: &[S]) -> Option<(usize, Compiler)> {
    for (at, word) in argv.iter().take(MAX_WRAPPERS + 1).enumerate() {
        let word = word.as_ref();
        if let Some(compiler) = compiler_of(word) {
            return Some((at, compiler));
        }
        // A word that is not a program (an option) ends the wrappers; so
        // does an unknown one after the first.
        if word.starts_with('-') || (at > 0 && !is_known_wrapper(word)) {
            return None;
        }
    }
    None
}

/// Where the compiler is in `argv` once wrappers are skipped
/// ([`identify`]'s rule), when `argv` runs one: `stepmon wrap` uses it to
/// tell a rustc behind wrappers from any other program.
///
/// ```
/// use stepmon_job::action::compiler_position;
/// let argv = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
/// assert_eq!(compiler_position(&argv("sccache rustc --crate-name x")), Some(1));
/// assert_eq!(compiler_position(&argv("make -j4")), None);
/// ```
#[must_use]
pub fn compiler_position<S: AsRef<str>>(argv: &[S]) -> Option<usize> {
    find_compiler(argv).map(|(at, _)| at)
}

/// What the action `argv` (its program first) builds, with cargo's
/// variables read through `env` (`CARGO_PKG_NAME`, `CARGO_PKG_VERSION`):
///
/// * a rustc: the crate by `--crate-name` and kind (`--crate-type`,
///   `--test`, a build script), or a probe (`-vV`, `--print`, the crate
///   `___`, no input);
/// * a C or C++ compiler: a compile (`-c`, `-S`, `-E`, `-M`, `-MM`) by its
///   `-o` output and source file, a link by its output (`-o`, else
///   `a.out`), or a probe (no input file);
/// * anything else: its program.
///
/// The compiler may stand behind wrappers ([`KNOWN_WRAPPERS`], and one
/// other program in front): `sccache rustc …` is rustc's action.
///
/// ```
/// use stepmon_job::action::identify;
///
/// let argv = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
/// let cargo = |name: &str| match name {
///     "CARGO_PKG_NAME" => Some("serde".to_owned()),
///     "CARGO_PKG_VERSION" => Some("1.0.219".to_owned()),
///     _ => None,
/// };
/// let lib = argv("/opt/rust/bin/rustc --crate-name serde --edition=2018 src/lib.rs --crate-type lib");
/// assert_eq!(identify(&lib, cargo).to_string(), "serde 1.0.219 (lib)");
/// let script = argv("sccache rustc --crate-name build_script_build build.rs --crate-type bin");
/// assert_eq!(identify(&script, cargo).to_string(), "serde 1.0.219 (build script)");
/// assert_eq!(identify(&argv("rustc -vV"), |_| None).to_string(), "rustc (probe: version)");
/// assert_eq!(identify(&argv("cc -O2 -c -o main.o main.c"), |_| None).to_string(), "main.o (cc)");
/// assert_eq!(identify(&argv("cc -o app main.o util.o"), |_| None).to_string(), "app (cc link)");
/// assert_eq!(identify(&argv("make -j4"), |_| None).to_string(), "make");
/// ```
#[must_use]
pub fn identify<S: AsRef<str>>(argv: &[S], env: impl Fn(&str) -> Option<String>) -> Action {
    match find_compiler(argv) {
        Some((at, compiler)) => {
            let program = base_name(argv[at].as_ref());
            let program = program.strip_suffix(".exe").unwrap_or(program).to_owned();
            let args: Vec<&str> = argv[at + 1..].iter().map(AsRef::as_ref).collect();
            match compiler {
                Compiler::Rust => rust(program, &args, &env),
                Compiler::C => c(program, &args),
            }
        }
        None => Action::Program(Program::new(
            argv.first().map_or_else(|| "step".to_owned(), |p| base_name(p.as_ref()).to_owned()),
        )),
    }
}

/// The value of option `name` at `args[at]`: `--name VALUE` (the next
/// argument) or `--name=VALUE`; and how many arguments it took.
fn option_value<'a>(args: &[&'a str], at: usize, name: &str) -> Option<(&'a str, usize)> {
    let arg = args[at];
    if arg == name {
        return args.get(at + 1).map(|v| (*v, 2));
    }
    arg.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')).map(|v| (v, 1))
}

/// rustc's options that take their value as the next argument, so that a
/// value is not read as the input file (rustc's `--help -v`).
const RUSTC_VALUED: &[&str] = &[
    "--cfg",
    "--check-cfg",
    "-L",
    "-l",
    "--crate-type",
    "--crate-name",
    "--edition",
    "--emit",
    "--print",
    "-o",
    "--out-dir",
    "--explain",
    "--target",
    "-A",
    "-W",
    "--force-warn",
    "-D",
    "-F",
    "--cap-lints",
    "-C",
    "--codegen",
    "-Z",
    "--error-format",
    "--json",
    "--color",
    "--diagnostic-width",
    "--remap-path-prefix",
    "--extern",
    "--sysroot",
    "--env-set",
];

/// rustc's action: the crate it compiles, or a probe.
fn rust(compiler: String, args: &[&str], env: &impl Fn(&str) -> Option<String>) -> Action {
    let (mut crate_name, mut kinds, mut prints, mut test, mut version, mut input) =
        (None, Vec::new(), Vec::new(), false, false, None);
    let mut at = 0;
    while at < args.len() {
        let arg = args[at];
        if let Some((value, took)) = option_value(args, at, "--crate-name") {
            crate_name = Some(value);
            at += took;
            continue;
        }
        if let Some((value, took)) = option_value(args, at, "--crate-type") {
            kinds.extend(value.split(',').map(crate_kind));
            at += took;
            continue;
        }
        if let Some((value, took)) = option_value(args, at, "--print") {
            // `--print=file-names`, `--print=cfg=path` (to a file, 1.78+).
            prints.push(value.split('=').next().unwrap_or(value).to_owned());
            at += took;
            continue;
        }
        match arg {
            "--test" => test = true,
            "-V" | "-vV" | "-Vv" | "--version" => version = true,
            "-" => input = input.or(Some(arg)),
            _ if RUSTC_VALUED.contains(&arg) => at += 1,
            _ if !arg.starts_with('-') => input = input.or(Some(arg)),
            _ => {}
        }
        at += 1;
    }
    // cargo's probes build nothing: `-vV`, `--print …`, the crate `___`
    // read from stdin.
    if version || !prints.is_empty() || crate_name == Some("___") || input.is_none() {
        let asks = if version { vec!["version".to_owned()] } else { prints };
        return Action::Probe(by_build_script(Probe::new(compiler, asks), env));
    }
    // A build script's trial compile (proc-macro2's and autocfg's run
    // `$RUSTC_WRAPPER $RUSTC … probe.rs`): cargo sets `CARGO_CFG_*` for a
    // build script's run and `CARGO_CRATE_NAME` for each rustc of its own,
    // never both
    // (<https://doc.rust-lang.org/cargo/reference/environment-variables.html#environment-variables-cargo-sets-for-build-scripts>).
    if env("CARGO_CFG_TARGET_ARCH").is_some() && env("CARGO_CRATE_NAME").is_none() {
        let file = base_name(input.unwrap_or_default()).to_owned();
        return Action::Probe(by_build_script(Probe::new(compiler, vec![file]), env));
    }
    let file_stem = || {
        let file = base_name(input.unwrap_or("main"));
        file.rsplit_once('.').map_or(file, |(stem, _)| stem).replace('-', "_")
    };
    let crate_name = crate_name.map_or_else(file_stem, str::to_owned);
    let kind = if test {
        kinds.clear();
        CrateKind::Test
    } else if crate_name.starts_with("build_script_") {
        // cargo names every build script's crate `build_script_build` and
        // builds it as a bin.
        kinds.clear();
        CrateKind::BuildScript
    } else if kinds.is_empty() {
        CrateKind::Bin
    } else {
        kinds.remove(0)
    };
    let mut build = CrateBuild::new(crate_name, kind, compiler);
    kinds.dedup();
    build.more_kinds = kinds;
    build.package = env("CARGO_PKG_NAME").filter(|p| !p.is_empty());
    build.version = env("CARGO_PKG_VERSION").filter(|v| !v.is_empty());
    Action::Crate(build)
}

/// `probe` with the package whose build script ran it, when one did.
fn by_build_script(mut probe: Probe, env: &impl Fn(&str) -> Option<String>) -> Probe {
    if env("CARGO_CFG_TARGET_ARCH").is_some() && env("CARGO_CRATE_NAME").is_none() {
        probe.package = env("CARGO_PKG_NAME").filter(|p| !p.is_empty());
        probe.version = env("CARGO_PKG_VERSION").filter(|v| !v.is_empty());
    }
    probe
}

fn crate_kind(text: &str) -> CrateKind {
    match text {
        "lib" => CrateKind::Lib,
        "rlib" => CrateKind::Rlib,
        "dylib" => CrateKind::Dylib,
        "cdylib" => CrateKind::Cdylib,
        "staticlib" => CrateKind::Staticlib,
        "bin" => CrateKind::Bin,
        "proc-macro" => CrateKind::ProcMacro,
        _ => CrateKind::Other,
    }
}

/// The options of GCC and Clang that take their value as the next
/// argument (<https://gcc.gnu.org/onlinedocs/gcc/Option-Summary.html>), so
/// that a value (`-I include`, `-MF x.d`) is not read as an input.
const C_VALUED: &[&str] = &[
    "-o",
    "-I",
    "-D",
    "-U",
    "-L",
    "-l",
    "-x",
    "-MF",
    "-MT",
    "-MQ",
    "-include",
    "-imacros",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-isysroot",
    "-imultilib",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xclang",
    "-T",
    "-u",
    "-z",
    "-e",
    "--param",
    "-aux-info",
    "-target",
    "-arch",
    "-MJ",
    "-Xarch_host",
    "-Xarch_device",
];

/// Files a C or C++ driver compiles (as opposed to objects and libraries
/// it links), by extension.
const SOURCE_EXTENSIONS: &[&str] =
    &["c", "cc", "cp", "cpp", "cxx", "c++", "C", "CPP", "m", "mm", "M", "i", "ii", "s", "S", "sx", "cu"];

/// A C or C++ driver's action.
fn c(compiler: String, args: &[&str]) -> Action {
    let (mut output, mut inputs, mut compile_only) = (None, Vec::new(), false);
    let mut at = 0;
    while at < args.len() {
        let arg = args[at];
        match arg {
            "-o" => {
                output = args.get(at + 1).copied();
                at += 1;
            }
            "-c" | "-S" | "-E" | "-M" | "-MM" => compile_only = true,
            _ if C_VALUED.contains(&arg) => at += 1,
            _ if arg.starts_with("-o") => output = Some(&arg[2..]),
            // `-` is stdin, an input.
            "-" => inputs.push(arg),
            _ if !arg.starts_with('-') && !arg.starts_with('@') => inputs.push(arg),
            _ => {}
        }
        at += 1;
    }
    if inputs.is_empty() {
        let asks = args.iter().map(|a| (*a).to_owned()).collect();
        return Action::Probe(Probe::new(compiler, asks));
    }
    let is_source = |file: &str| file.rsplit_once('.').is_some_and(|(_, ext)| SOURCE_EXTENSIONS.contains(&ext));
    let source = inputs.iter().find(|file| is_source(file)).map(|s| (*s).to_owned());
    let output = output.map(str::to_owned);
    if compile_only {
        return Action::Compile(Compile::new(
            compiler,
            output,
            source.or_else(|| inputs.first().map(|s| (*s).to_owned())),
        ));
    }
    Action::Link(Link::new(compiler, output.unwrap_or_else(|| "a.out".to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    fn named(line: &str) -> String {
        identify(&argv(line), |_| None).to_string()
    }

    fn cargo(name: &str) -> Option<String> {
        match name {
            "CARGO_PKG_NAME" => Some("fixture-macro".to_owned()),
            "CARGO_PKG_VERSION" => Some("0.3.1".to_owned()),
            _ => None,
        }
    }

    #[test]
    fn cargos_rustc_lines_name_their_crates() {
        // As `cargo build -v` prints them (paths shortened).
        let rustc = "/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc";
        let lines = [
            (
                "--crate-name fixture_macro --edition=2021 src/lib.rs --error-format=json --json=diagnostic-rendered-ansi --crate-type proc-macro --emit=dep-info,link -C prefer-dynamic",
                "fixture-macro 0.3.1 (proc-macro)",
            ),
            (
                "--crate-name build_script_build --edition=2021 build.rs --crate-type bin --emit=dep-info,link -C embed-bitcode=no",
                "fixture-macro 0.3.1 (build script)",
            ),
            ("--crate-name app --edition=2021 src/main.rs --crate-type bin -C opt-level=0", "app 0.3.1 (bin)"),
            (
                "--crate-name app --edition=2021 src/lib.rs --emit=dep-info,link --test -C debuginfo=2",
                "app 0.3.1 (test)",
            ),
            ("--crate-name ffi --crate-type rlib --crate-type cdylib src/lib.rs", "ffi 0.3.1 (rlib, cdylib)"),
            ("--crate-name=x --crate-type=lib,staticlib x.rs", "x 0.3.1 (lib, staticlib)"),
        ];
        for (args, expected) in lines {
            let action = identify(&argv(&format!("{rustc} {args}")), cargo);
            assert_eq!(action.to_string(), expected, "{args}");
            assert!(!action.is_probe());
        }
        // Without cargo's variables: no package, no version.
        assert_eq!(named("rustc --crate-name a --crate-type lib a.rs"), "a (lib)");
        // No crate name: rustc's own, from the file.
        assert_eq!(named("rustc -O my-tool.rs"), "my_tool (bin)");
    }

    #[test]
    fn cargos_probes_are_probes() {
        let probe = "rustc - --crate-name ___ --print=file-names --crate-type bin --crate-type rlib --print=sysroot --print=cfg -Wwarnings";
        let action = identify(&argv(probe), cargo);
        assert!(action.is_probe());
        assert_eq!(action.to_string(), "rustc (probe: file-names, sysroot, cfg)");
        assert_eq!(named("/x/rustc -vV"), "rustc (probe: version)");
        assert_eq!(named("rustc --print sysroot"), "rustc (probe: sysroot)");
        assert!(identify(&argv("rustc - --crate-name ___ --crate-type lib"), cargo).is_probe());
        assert!(identify(&["rustc"], cargo).is_probe());
    }

    #[test]
    fn a_build_scripts_trial_compiles_are_its_probes() {
        // In a build script's run: CARGO_CFG_*, no CARGO_CRATE_NAME.
        let build_script = |name: &str| match name {
            "CARGO_CFG_TARGET_ARCH" => Some("x86_64".to_owned()),
            other => cargo(other),
        };
        let trial = "rustc --edition=2021 --crate-name proc_macro2 --crate-type lib --emit=dep-info,metadata --out-dir /t/out src/probe/proc_macro_span.rs";
        let action = identify(&argv(trial), build_script);
        assert!(action.is_probe());
        assert_eq!(action.to_string(), "fixture-macro 0.3.1 (build script probe: proc_macro_span.rs)");
        assert_eq!(
            identify(&argv("rustc --version"), build_script).to_string(),
            "fixture-macro 0.3.1 (build script probe: version)"
        );
        // A cargo inside a build script compiles crates of its own.
        let nested = |name: &str| match name {
            "CARGO_CRATE_NAME" => Some("proc_macro2".to_owned()),
            other => build_script(other),
        };
        assert!(!identify(&argv(trial), nested).is_probe());
    }

    #[test]
    fn wrappers_in_front_are_skipped() {
        let lib = "rustc --crate-name z --crate-type lib z.rs";
        for front in ["sccache", "/usr/bin/sccache", "my-wrapper", "my-wrapper sccache", "clippy-driver", "ccache"] {
            assert_eq!(identify(&argv(&format!("{front} {lib}")), cargo).to_string(), "z 0.3.1 (lib)", "{front}");
        }
        assert_eq!(named("ccache gcc -c -o a.o a.c"), "a.o (gcc)");
        assert_eq!(named("wrap.sh ccache cc -c a.c"), "a.c (cc)");
        // Two unknown programs, or an option, before the compiler: not a compiler's action.
        assert_eq!(named("one two rustc --crate-name z z.rs"), "one");
        assert_eq!(named("env -i rustc --crate-name z z.rs"), "env");
        assert_eq!(named(""), "");
        assert_eq!(identify::<String>(&[], |_| None).to_string(), "step");
    }

    #[test]
    fn c_compiles_and_links_by_their_outputs() {
        assert_eq!(named("cc -O2 -Wall -c -o main.o main.c"), "main.o (cc)");
        assert_eq!(named("cc -c util.c"), "util.c (cc)");
        assert_eq!(named("/usr/bin/g++ -I include -MD -MF x.d -oobj/x.o -c src/x.cpp"), "obj/x.o (g++)");
        assert_eq!(named("x86_64-linux-gnu-gcc-14 -c -o a.o a.c"), "a.o (x86_64-linux-gnu-gcc-14)");
        assert_eq!(named("clang-19 -S -o a.s a.c"), "a.s (clang-19)");
        assert_eq!(named("cc main.o util.o -o app -lm"), "app (cc link)");
        assert_eq!(named("cc hello.c"), "a.out (cc link)");
        assert_eq!(named("c++ --version"), "c++ (probe: --version)");
        assert_eq!(named("gcc -dumpmachine"), "gcc (probe: -dumpmachine)");
        let Action::Compile(compile) = identify(&argv("cc -c -o main.o -I src main.c"), |_| None) else {
            panic!("a compile")
        };
        assert_eq!((compile.output.as_deref(), compile.source.as_deref()), (Some("main.o"), Some("main.c")));
        // Not compilers.
        for line in ["ccc -c a.c", "gcc-ar rcs x.a a.o", "ld -o app a.o", "cmake --build ."] {
            assert!(matches!(identify(&argv(line), |_| None), Action::Program(_)), "{line}");
        }
    }
}

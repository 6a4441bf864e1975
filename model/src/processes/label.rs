//! A short label for one process from its arguments: the input it worked
//! on (`foo.cpp` of `cc1plus -quiet -I include src/foo.cpp -o /tmp/cc.s`),
//! so that "largest 1.2 GiB (pid 8841, foo.cpp)" says which of 312 compiler
//! runs it was. A heuristic over common command lines (compilers, rustc,
//! interpreters, make), never more than a hint: the full arguments are in
//! the record.

/// Options whose value follows as the next argument and is not what the
/// process worked on: outputs (`-o`, `--out-dir`, gcc's dependency files),
/// search paths and definitions (`-I`, `-L`, `-D`), language and codegen
/// settings (`-x`, rustc's `-C`, `--extern`, `--cfg`).
const VALUE_OPTIONS: &[&str] = &[
    "-o",
    "--output",
    "-MF",
    "-MT",
    "-MQ",
    "-dumpbase",
    "-dumpbase-ext",
    "-dumpdir",
    "-auxbase",
    "-auxbase-strip",
    "-I",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-isysroot",
    "-imultiarch",
    "-include",
    "-imacros",
    "-L",
    "-D",
    "-U",
    "-x",
    "-C",
    "--out-dir",
    "--crate-type",
    "--extern",
    "--cfg",
    "--check-cfg",
    "--cap-lints",
    "--error-format",
    "--json",
    "--target",
    "--edition",
    "--emit",
];

/// Programs whose `-c` takes code, not a file: its value is no label
/// (`sh -c 'true'`). Elsewhere `-c` is a flag (`gcc -c foo.c`).
fn takes_code(program: &str) -> bool {
    matches!(program, "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "busybox") || program.starts_with("python")
}

/// The file name of a path (`src/foo.cpp` → `foo.cpp`, `src/` → `src`).
fn base_name(arg: &str) -> &str {
    let trimmed = arg.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// Whether `arg` can be a label at all: not empty, not a number or a size
/// (`sleep 1`, `head -c 64M` have no file), not an assignment (`make CC=gcc`).
fn usable(arg: &str) -> bool {
    let before_slash = arg.split('/').next().unwrap_or(arg);
    !base_name(arg).is_empty() && arg.chars().any(char::is_alphabetic) && !before_slash.contains('=')
}

/// The most telling argument of `args` (argv, argv\[0\] first) for a short
/// label, or `None`:
///
/// * rustc's `--crate-name NAME`: the crate (its file is `lib.rs` or
///   `main.rs` for every crate);
/// * else the last argument that is not argv\[0\], not an option (`-...`)
///   and not the value of an option that names an output or a setting
///   (search paths, definitions, outputs; a shell's or Python's `-c` code), preferring one
///   that looks like a file (holds a `.` or a `/`), shown by its file name.
///
/// ```
/// use stepmon_model::processes::label;
/// let argv = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
/// assert_eq!(label(&argv("cc1plus -quiet -I include src/foo.cpp -o /tmp/x.s")), Some("foo.cpp"));
/// assert_eq!(label(&argv("sh -c true")), None);
/// ```
#[must_use]
pub fn label(args: &[String]) -> Option<&str> {
    let (program, rest) = args.split_first()?;
    let program = base_name(program);
    let mut file = None;
    let mut word = None;
    let mut skip_next = false;
    for (i, arg) in rest.iter().enumerate() {
        // The value of the option before (an option itself is no value).
        if std::mem::take(&mut skip_next) && !arg.starts_with('-') {
            continue;
        }
        if arg == "--crate-name" {
            if let Some(name) = rest.get(i + 1).filter(|n| !n.is_empty()) {
                return Some(name);
            }
            continue;
        }
        if arg.starts_with('-') {
            skip_next = VALUE_OPTIONS.contains(&arg.as_str()) || (arg == "-c" && takes_code(program));
            continue;
        }
        if !usable(arg) {
            continue;
        }
        if arg.contains(['.', '/']) {
            file = Some(base_name(arg));
        } else {
            word = Some(arg.as_str());
        }
    }
    file.or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> Option<String> {
        let argv: Vec<String> = line.split(' ').map(str::to_owned).collect();
        label(&argv).map(str::to_owned)
    }

    #[test]
    fn a_compiler_run_is_labelled_by_its_input_not_its_output() {
        assert_eq!(of("cc1plus -quiet -I include src/foo.cpp -o /tmp/x.s").as_deref(), Some("foo.cpp"));
        assert_eq!(
            of("/usr/lib/gcc/x86_64-linux-gnu/14/cc1plus -quiet -I /usr/include -D NDEBUG -imultiarch x86_64-linux-gnu src/net/http.cc -quiet -dumpbase http.cc -o /tmp/ccX.s").as_deref(),
            Some("http.cc")
        );
        // The driver: `-c` is a flag here, the file after it the input.
        assert_eq!(of("gcc -O2 -c foo.c -o foo.o").as_deref(), Some("foo.c"));
        assert_eq!(of("ld -o app main.o util.o -L /usr/lib -lc").as_deref(), Some("util.o"));
        // The path of an include directory is no input.
        assert_eq!(of("cc1 src/a.c -I /usr/include").as_deref(), Some("a.c"));
        // Cut at 8 args before its input: the target triple is no label either.
        assert_eq!(of("cc1plus -quiet -imultiarch x86_64-linux-gnu -D_GNU_SOURCE -I include -I src"), None);
    }

    #[test]
    fn rustc_is_labelled_by_its_crate() {
        let line = "rustc --crate-name stepmon_report --edition=2024 report/src/lib.rs --error-format=json \
                    --crate-type lib -C opt-level=3 --out-dir /w/target/debug/deps -L dependency=/w/target/debug/deps \
                    --extern serde=/w/target/debug/deps/libserde-1.rlib";
        assert_eq!(of(line).as_deref(), Some("stepmon_report"));
        assert_eq!(of("rustc src/main.rs -o /tmp/x").as_deref(), Some("main.rs"), "no crate name: its file");
    }

    #[test]
    fn interpreters_and_shells() {
        assert_eq!(of("python3 -m pytest tests/test_x.py").as_deref(), Some("test_x.py"));
        assert_eq!(of("python3 -m pytest").as_deref(), Some("pytest"), "the module when nothing looks like a file");
        assert_eq!(of("/usr/bin/python3.12 -c print(1)"), None, "code is no label");
        assert_eq!(of("sh -c true"), None);
        assert_eq!(of("bash -c make"), None);
        assert_eq!(of("sh ./configure --prefix=/usr").as_deref(), Some("configure"));
        assert_eq!(of("node /app/node_modules/.bin/jest"), Some("jest".to_owned()));
    }

    #[test]
    fn no_label_without_a_telling_argument() {
        assert_eq!(of("sleep 1"), None, "a number");
        assert_eq!(of("head -c 64M /dev/zero").as_deref(), Some("zero"));
        assert_eq!(of("make -j8 CC=gcc"), None, "an assignment");
        assert_eq!(of("make -j8 CC=gcc all").as_deref(), Some("all"));
        assert_eq!(of("true"), None, "argv[0] alone");
        assert_eq!(label(&[]), None);
        assert_eq!(of("tar -x -f /tmp/src/"), Some("src".to_owned()), "a directory by its name");
        assert_eq!(of("cat /"), None, "the root has no name");
    }
}

//! `stepmon run`'s arguments in their common shapes, read without clap:
//! `run`, any of `-q`/`--quiet`, `--no-cgroup`, `--wait-all`,
//! `--strict-output`, `-o FILE`/`--output FILE`, then `--` and the command.
//!
//! clap builds `run`'s thirty options (their help, defaults and checks)
//! and parses against them before anything else happens: a share of every
//! `stepmon run`'s start that a plain loop does not pay
//! (benches/README.md, "Argument parsing").
//! Anything else — another option, a combined flag, a value that starts
//! with `-`, no command, `--help` — goes to clap, which parses it and says
//! what is wrong. The defaults below are clap's: a test parses the same
//! command lines both ways and compares the results.

use std::ffi::OsString;

use crate::fleet::PushGroup;
use crate::run::{NetMode, OutputFormat, RunArgs};

/// `args` (the program name first) as [`RunArgs`] when they have one of the
/// shapes above; `None`: let clap parse them.
pub(crate) fn common_run(args: &[OsString]) -> Option<RunArgs> {
    let mut rest = args.get(1..)?.iter();
    if rest.next()? != "run" {
        return None;
    }
    let mut run = defaults();
    loop {
        let arg = rest.next()?;
        match arg.to_str()? {
            "--" => break,
            "-q" | "--quiet" if !run.quiet => run.quiet = true,
            "--no-cgroup" if !run.no_cgroup => run.no_cgroup = true,
            "--wait-all" if !run.wait_all => run.wait_all = true,
            "--strict-output" if !run.strict_output => run.strict_output = true,
            "-o" | "--output" if run.output.is_none() => {
                let file = rest.next()?;
                // `-` is stdout; any other leading `-` may be an option
                // clap would refuse there.
                if file.is_empty() || (file != "-" && file.as_encoded_bytes().starts_with(b"-")) {
                    return None;
                }
                run.output = Some(file.into());
            }
            _ => return None,
        }
    }
    run.command = rest.cloned().collect();
    (!run.command.is_empty()).then_some(run)
}

/// `run`'s options as clap sets them when none is given.
fn defaults() -> RunArgs {
    RunArgs {
        output: None,
        format: OutputFormat::Document,
        cgroup_parent: None,
        require_cgroup: false,
        no_cgroup: false,
        wait_all: false,
        processes: stepmon_model::processes::Keep::default(),
        net: NetMode::Host,
        include_loopback: false,
        memory_max: None,
        cpus: None,
        pids_max: None,
        quiet: false,
        progress: None,
        strict_output: false,
        name: None,
        labels: Vec::new(),
        push: None,
        otlp: false,
        push_group: PushGroup { push_job: "stepmon".to_owned(), push_instance: None },
        textfile: None,
        job: None,
        baseline: None,
        command: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{RunCmd, RunOnly};

    fn argv(line: &str) -> Vec<OsString> {
        std::iter::once("stepmon").chain(line.split(' ')).map(Into::into).collect()
    }

    fn by_clap(args: &[OsString]) -> RunArgs {
        let RunCmd::Run(run) = RunOnly::try_parse_from(args).unwrap().command;
        *run
    }

    #[test]
    fn the_common_shapes_read_as_clap_reads_them() {
        for line in [
            "run -- true",
            "run -q -- /bin/true",
            "run --quiet -- sh -c exit",
            "run -- make -j4 --keep-going -o x",
            "run --no-cgroup -q -- true",
            "run --wait-all --strict-output -o out.json -- true",
            "run --output - -q -- true",
            "run -o run.json --no-cgroup --wait-all -- cargo build --release",
        ] {
            let args = argv(line);
            let fast = common_run(&args).unwrap_or_else(|| panic!("`{line}` is a common shape"));
            assert_eq!(format!("{fast:?}"), format!("{:?}", by_clap(&args)), "{line}");
        }
    }

    #[test]
    fn every_other_command_line_is_left_to_clap() {
        for line in [
            "run true",
            "run --",
            "run -q",
            "run -qo x -- true",
            "run -q -q -- true",
            "run -o -- true",
            "run -o --quiet -- true",
            "run --output=x -- true",
            "run --name n -- true",
            "run -f json -o x -- true",
            "run --help",
            "report -- x",
        ] {
            assert!(common_run(&argv(line)).is_none(), "`{line}` is for clap");
        }
        assert!(common_run(&["stepmon".into()]).is_none());
    }
}

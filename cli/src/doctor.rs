//! `stepmon doctor`: prints what `stepmon_runner::admin::examine` found on this host —
//! the checks, and per resource which rung a step gets and why.

use stepmon_runner::admin::{self as host, Report, Status};

use crate::error::CliError;

/// Arguments of `stepmon doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the report as JSON on stdout.
    #[arg(long, conflicts_with = "own_cgroup")]
    pub json: bool,
    /// Print only this process's cgroup v2 directory (for `--cgroup-parent`
    /// inside a delegated scope).
    #[arg(long)]
    pub own_cgroup: bool,
}

/// `stepmon doctor`; exits 0 (a step runs and is measured everywhere; the
/// report says how well).
pub fn doctor(args: &DoctorArgs) -> Result<i32, CliError> {
    if args.own_cgroup {
        let location = host::locate().map_err(|e| CliError::new(e.to_string()))?;
        crate::out::emit(&format!("{}\n", location.own_dir.display()))?;
        return Ok(0);
    }
    let report = host::examine();
    if args.json {
        let json = serde_json::to_string_pretty(&report).map_err(|e| CliError::new(format!("JSON: {e}")))?;
        crate::out::emit(&(json + "\n"))?;
    } else {
        crate::out::emit(&render(&report))?;
    }
    Ok(0)
}

/// Human output: a header, one line per check, then one line per resource.
pub fn render(report: &Report) -> String {
    let mut out = format!("stepmon doctor: Linux {}, cgroup layout {}\n", report.kernel, report.layout);
    for check in &report.checks {
        let status = match check.status {
            Status::Ok => "ok",
            Status::Missing => "missing",
            Status::Unknown => "unknown",
        };
        let mut line = format!("{status:<8}{}: ", check.name);
        line.push_str(check.reason.as_deref().unwrap_or(&check.detail));
        if let Some(hint) = &check.hint {
            line.push_str(" — hint: ");
            line.push_str(hint);
        }
        out.push_str(&line);
        out.push('\n');
    }
    for rung in &report.rungs {
        let name = rung.rung.map_or("not measured", |r| r.words());
        let mut line = format!("{:<8}{} from the {name}: {}", "rung", rung.resource, rung.why);
        if rung.rung.is_none() {
            line = format!("{:<8}{} not measured: {}", "rung", rung.resource, rung.why);
        }
        if let Some(up) = &rung.to_improve {
            line.push_str(" — to improve: ");
            line.push_str(up);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

//! Who a step is beyond its numbers: its name (`stepmon run --name`), the
//! caller's labels (`--label KEY=VALUE`) and the CI job it ran in.
//!
//! The name and labels become metric labels in the fleet exports, so they
//! are meant to have few distinct values (a step's role, not its command
//! line). The CI context is read by the caller from the environment
//! ([`CiContext::from_env`] takes a lookup function: nothing here reads the
//! process's environment); its pipeline, job and runner are labels, its run
//! id, attempt and URL stay in the JSON and the trace (one value per run:
//! as labels they would make a new time series per run).

use serde::{Deserialize, Serialize};

/// One `--label KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Label {
    /// A Prometheus label name (`[a-zA-Z_][a-zA-Z0-9_]*`, not `__…`).
    pub key: String,
    /// Any text.
    pub value: String,
}

/// Label names stepmon puts on its metrics itself (the step's identity, the
/// CI context, the per-family labels of `stepmon-report`'s exports, and the
/// Pushgateway grouping key and Prometheus' target labels): a `--label`
/// may not take one, or one sample would carry the name twice.
pub const RESERVED: &[&str] = &[
    "step",
    "origin",
    "index",
    "ci_pipeline",
    "ci_job",
    "ci_runner",
    "exit_code",
    "signal",
    "wall_source",
    "step_id",
    "digest",
    "kernel",
    "cgroup_layout",
    "group",
    "rung",
    "bound",
    "resource",
    "kind",
    "stepmon_step_bottleneck",
    "stepmon_step_memory_outcome",
    "stepmon_step_machine_load",
    "worker",
    "limited_by",
    "job",
    "instance",
    "le",
    "quantile",
];

/// Whether `key` is a label name a `--label` may use: valid in the
/// Prometheus data model (<https://prometheus.io/docs/concepts/data_model/>),
/// not reserved for internal use (`__` prefix) and not one of [`RESERVED`].
#[must_use]
pub fn usable_key(key: &str) -> bool {
    let mut chars = key.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid && !key.starts_with("__") && !RESERVED.contains(&key)
}

impl Label {
    /// A label from its parts.
    #[must_use]
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Label {
        Label { key: key.into(), value: value.into() }
    }
}

impl std::str::FromStr for Label {
    type Err = String;

    /// `KEY=VALUE` (the value may be empty and may contain `=`).
    fn from_str(text: &str) -> Result<Label, String> {
        let (key, value) = text.split_once('=').ok_or_else(|| format!("expected KEY=VALUE, got {text:?}"))?;
        if RESERVED.contains(&key) {
            return Err(format!("label {key:?} is set by stepmon itself; pick another name"));
        }
        if !usable_key(key) {
            return Err(format!(
                "label name {key:?} is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)"
            ));
        }
        Ok(Label::new(key, value))
    }
}

/// A step's name when none is given: the program's base name (`make` for
/// `/usr/bin/make -j8`), `step` for an empty command.
#[must_use]
pub fn default_name(command: &[String]) -> String {
    command
        .first()
        .map(|program| program.rsplit('/').next().unwrap_or(program))
        .filter(|base| !base.is_empty())
        .map_or_else(|| "step".to_owned(), str::to_owned)
}

/// One argument, shell-style: as is when plain, else in single quotes with
/// control characters escaped.
#[must_use]
pub fn quote(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c));
    if plain {
        return arg.to_owned();
    }
    let mut out = String::from("'");
    for c in arg.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The CI job a step ran in, as its CI's environment describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CiContext {
    /// `githubActions`, `gitlab`, `buildkite` or `jenkins`.
    pub provider: String,
    /// The pipeline (label `ci_pipeline`): what runs again and again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<String>,
    /// The job within the pipeline (label `ci_job`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// The machine or agent that ran it (label `ci_runner`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    /// This run of the pipeline (JSON and trace only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// This job within the run (JSON and trace only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Which attempt of the run or job (JSON and trace only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<String>,
    /// Where the run is shown (JSON and trace only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl CiContext {
    /// The CI context from environment variables, read through `var`
    /// (e.g. `|k| std::env::var(k).ok()`); `None` outside a known CI.
    /// Empty variables count as unset.
    ///
    /// Variables: GitHub Actions
    /// (<https://docs.github.com/en/actions/reference/variables-reference>),
    /// GitLab (<https://docs.gitlab.com/ci/variables/predefined_variables/>),
    /// Buildkite (<https://buildkite.com/docs/pipelines/configure/environment-variables>),
    /// Jenkins (`${JENKINS_URL}/env-vars.html`).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<CiContext> {
        let get = |name: &str| var(name).filter(|v| !v.is_empty());
        let join = |a: Option<String>, b: Option<String>| match (a, b) {
            (Some(a), Some(b)) => Some(format!("{a}/{b}")),
            (a, b) => a.or(b),
        };
        let context = if get("GITHUB_ACTIONS").as_deref() == Some("true") {
            let url = match (get("GITHUB_SERVER_URL"), get("GITHUB_REPOSITORY"), get("GITHUB_RUN_ID")) {
                (Some(server), Some(repo), Some(run)) => Some(format!("{server}/{repo}/actions/runs/{run}")),
                _ => None,
            };
            CiContext {
                provider: "githubActions".to_owned(),
                pipeline: join(get("GITHUB_REPOSITORY"), get("GITHUB_WORKFLOW")),
                job: get("GITHUB_JOB"),
                runner: get("RUNNER_NAME"),
                run_id: get("GITHUB_RUN_ID"),
                job_id: None,
                attempt: get("GITHUB_RUN_ATTEMPT"),
                url,
            }
        } else if get("GITLAB_CI").as_deref() == Some("true") {
            CiContext {
                provider: "gitlab".to_owned(),
                pipeline: get("CI_PROJECT_PATH"),
                job: get("CI_JOB_NAME"),
                runner: get("CI_RUNNER_DESCRIPTION").or_else(|| get("CI_RUNNER_ID")),
                run_id: get("CI_PIPELINE_ID"),
                job_id: get("CI_JOB_ID"),
                attempt: None,
                url: get("CI_JOB_URL"),
            }
        } else if get("BUILDKITE").as_deref() == Some("true") {
            CiContext {
                provider: "buildkite".to_owned(),
                pipeline: join(get("BUILDKITE_ORGANIZATION_SLUG"), get("BUILDKITE_PIPELINE_SLUG")),
                job: get("BUILDKITE_STEP_KEY").or_else(|| get("BUILDKITE_LABEL")),
                runner: get("BUILDKITE_AGENT_NAME"),
                run_id: get("BUILDKITE_BUILD_NUMBER"),
                job_id: get("BUILDKITE_JOB_ID"),
                attempt: get("BUILDKITE_RETRY_COUNT"),
                url: get("BUILDKITE_BUILD_URL"),
            }
        } else if get("JENKINS_URL").is_some() || (get("BUILD_NUMBER").is_some() && get("JOB_NAME").is_some()) {
            CiContext {
                provider: "jenkins".to_owned(),
                pipeline: get("JOB_NAME"),
                job: get("STAGE_NAME"),
                runner: get("NODE_NAME"),
                run_id: get("BUILD_NUMBER"),
                job_id: get("BUILD_ID"),
                attempt: None,
                url: get("BUILD_URL"),
            }
        } else {
            return None;
        };
        Some(context)
    }

    /// The labels of the fleet exports: `ci_pipeline`, `ci_job`,
    /// `ci_runner`, those that are known.
    #[must_use]
    pub fn labels(&self) -> Vec<(&'static str, &str)> {
        [("ci_pipeline", &self.pipeline), ("ci_job", &self.job), ("ci_runner", &self.runner)]
            .into_iter()
            .filter_map(|(key, value)| Some((key, value.as_deref()?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: std::collections::BTreeMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn parses_labels() {
        assert_eq!("team=infra".parse(), Ok(Label::new("team", "infra")));
        assert_eq!("k=a=b".parse(), Ok(Label::new("k", "a=b")));
        assert_eq!("k=".parse(), Ok(Label::new("k", "")));
        for bad in ["noequals", "=v", "1k=v", "a-b=v", "__x=v", "step=v", "job=v", "ci_runner=v", "é=v"] {
            assert!(bad.parse::<Label>().is_err(), "{bad}");
        }
    }

    #[test]
    fn default_names() {
        let cmd = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        assert_eq!(default_name(&cmd(&["/usr/bin/make", "-j8"])), "make");
        assert_eq!(default_name(&cmd(&["cargo", "build"])), "cargo");
        assert_eq!(default_name(&cmd(&["./dir/"])), "step");
        assert_eq!(default_name(&[]), "step");
    }

    #[test]
    fn ci_contexts() {
        assert_eq!(CiContext::from_env(env(&[("HOME", "/root")])), None);
        let gh = CiContext::from_env(env(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_WORKFLOW", "ci"),
            ("GITHUB_JOB", "test"),
            ("RUNNER_NAME", "r1"),
            ("GITHUB_RUN_ID", "42"),
            ("GITHUB_RUN_ATTEMPT", "2"),
            ("GITHUB_SERVER_URL", "https://github.com"),
        ]))
        .unwrap();
        assert_eq!(gh.labels(), vec![("ci_pipeline", "o/r/ci"), ("ci_job", "test"), ("ci_runner", "r1")]);
        assert_eq!((gh.run_id.as_deref(), gh.attempt.as_deref()), (Some("42"), Some("2")));
        assert_eq!(gh.url.as_deref(), Some("https://github.com/o/r/actions/runs/42"));
        let gl = CiContext::from_env(env(&[("GITLAB_CI", "true"), ("CI_JOB_NAME", "build"), ("CI_RUNNER_ID", "7")]))
            .unwrap();
        assert_eq!(gl.labels(), vec![("ci_job", "build"), ("ci_runner", "7")]);
        let bk = CiContext::from_env(env(&[("BUILDKITE", "true"), ("BUILDKITE_PIPELINE_SLUG", "app")])).unwrap();
        assert_eq!((bk.provider.as_str(), bk.pipeline.as_deref()), ("buildkite", Some("app")));
        let jk =
            CiContext::from_env(env(&[("BUILD_NUMBER", "3"), ("JOB_NAME", "folder/app"), ("NODE_NAME", "")])).unwrap();
        assert_eq!(jk.labels(), vec![("ci_pipeline", "folder/app")]);
        assert_eq!(jk.run_id.as_deref(), Some("3"));
    }
}

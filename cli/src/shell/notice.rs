//! How `stepmon shell` says what it cannot do: one line on stderr, never a
//! failed step.

/// Says what stepmon cannot do, in one line on stderr.
pub(super) fn notice(what: &str) {
    crate::watch_lines::say(&format!("stepmon: notice: {what}"));
}

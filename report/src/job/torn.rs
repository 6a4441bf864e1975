//! Torn lines of a job record: a line its writer's `write(2)` cut short.
//!
//! The writer appends each line with one `write(2)` (`stepmon-job`); a
//! write reaches the page cache whole before it returns, so a stepmon killed
//! (even by SIGKILL) leaves whole lines only. A line is cut short when the
//! write was short: the file system filled up mid-line (write(2): "the
//! number of bytes written may be less than count if, for example, there is
//! insufficient space on the underlying physical medium"), or the host went
//! away before the page reached the disk. Such a line is the file's last
//! (no newline after it), or another step's line follows it on the same
//! line. Its first bytes still say whose it was, as far as they got.

use serde::Serialize;

use super::read::JobStep;

/// A line of the record cut short (a short write), attributed to a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TornLine {
    /// Its number in the file, from 1.
    pub line: usize,
    /// How many of its bytes were written.
    pub bytes: usize,
}

/// How far a torn line got into its step's id: every writer starts a
/// line with `{"kind":"KIND","step":"ID"` (its `kind` first, then `step`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TornId {
    /// The whole id (its closing quote was written).
    Whole(String),
    /// The id's first bytes (maybe none): the line stops in it or before.
    Partial(String),
}

/// Whose `torn` (a line's written bytes) was.
pub(crate) fn step_of(torn: &str) -> TornId {
    const STEP: &str = "\",\"step\":\"";
    let after_kind = torn.strip_prefix("{\"kind\":\"").and_then(|rest| rest.split_once(STEP)).map(|(_, id)| id);
    match after_kind {
        Some(id) => match id.split_once('"') {
            Some((id, _)) => TornId::Whole(id.to_owned()),
            None => TornId::Partial(id.to_owned()),
        },
        None => TornId::Partial(String::new()),
    }
}

/// The step among `steps` that a torn line of `id` was of: the one with
/// that id; for a partial id, the only step without an end whose id starts
/// with it (a torn line is its writer's last: its step's end never came).
pub(crate) fn owner(steps: &[JobStep], id: &TornId) -> Option<usize> {
    match id {
        TornId::Whole(id) => steps.iter().position(|s| s.id == *id),
        TornId::Partial(part) => {
            let mut open = steps.iter().enumerate().filter(|(_, s)| s.end.is_none() && s.id.starts_with(part.as_str()));
            match (open.next(), open.next()) {
                (Some((at, _)), None) => Some(at),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_line_names_its_step_as_far_as_it_got() {
        assert_eq!(step_of(r#"{"kind":"sample","step":"7.1","of":"st"#), TornId::Whole("7.1".to_owned()));
        assert_eq!(step_of(r#"{"kind":"stepEnd","step":"7."#), TornId::Partial("7.".to_owned()));
        assert_eq!(step_of(r#"{"kind":"stepE"#), TornId::Partial(String::new()));
        assert_eq!(step_of(""), TornId::Partial(String::new()));
    }
}

//! The diffs for people: one line per field, the verdict and warnings
//! above them.

use std::fmt::Write as _;

use crate::units;

use super::commands;
use super::{Comparability, FieldDiff, FieldKind, RunDiff, StepDiff, TotalsDiff};

impl FieldKind {
    pub(super) fn show(self, value: f64) -> String {
        match self {
            FieldKind::Wall | FieldKind::CpuTime | FieldKind::Stall => units::seconds(value.abs()),
            FieldKind::Memory | FieldKind::IoBytes | FieldKind::NetBytes => bytes(value.abs()),
            FieldKind::Cores => format!("{:.2}", value.abs()),
            FieldKind::Tasks | FieldKind::Events => format!("{:.0}", value.abs()),
        }
    }
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn bytes(value: f64) -> String {
    units::bytes(value.round().max(0.0) as u64)
}

impl StepDiff {
    /// For people: the verdict, warnings, then one line per field measured
    /// on at least one side (`*` marks significant changes).
    #[must_use]
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let (before, after) = (&self.before, &self.after);
        let (before, after) =
            (crate::step::label(&before.name, &before.command), crate::step::label(&after.name, &after.command));
        let _ = writeln!(out, "stepmon diff: `{before}` → `{after}`");
        let _ = writeln!(out, "  verdict  {}", self.reason);
        for w in &self.warnings {
            let _ = writeln!(out, "  warning  {w}");
        }
        field_lines(&mut out, &self.fields);
        commands::lines(&mut out, &self.commands);
        out
    }
}

impl TotalsDiff {
    /// For people: the verdict, then a line per total.
    #[must_use]
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "stepmon diff: the jobs' totals");
        let _ = writeln!(out, "  verdict  {}", self.reason);
        field_lines(&mut out, &self.fields);
        out
    }
}

impl RunDiff {
    /// Every step's text, then the unpaired steps.
    #[must_use]
    pub fn render_text(&self) -> String {
        let mut out = self.steps.iter().map(StepDiff::render_text).collect::<Vec<_>>().join("\n");
        for name in &self.only_before {
            let _ = writeln!(out, "only before: `{name}`");
        }
        for name in &self.only_after {
            let _ = writeln!(out, "only after: `{name}`");
        }
        if let Some(totals) = &self.totals {
            out.push('\n');
            out.push_str(&totals.render_text());
        }
        out
    }
}

/// One line per field measured on at least one side (`*` marks the
/// significant changes), under a header.
pub(super) fn field_lines(out: &mut String, fields: &[FieldDiff]) {
    let _ = writeln!(out, "  {:<20} {:>12} {:>12} {:>22}  tolerance", "field", "before", "after", "change");
    for f in fields.iter().filter(|f| f.comparability != Comparability::MissingBoth) {
        let show = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| f.kind.show(v));
        let change = match (f.change, f.comparability) {
            (Some(c), _) => {
                let sign = if c < 0.0 { "-" } else { "+" };
                let rel =
                    f.relative_change.map_or_else(String::new, |r| format!(" ({sign}{})", units::percent(r.abs())));
                format!("{sign}{}{rel}", f.kind.show(c))
            }
            (None, _) => "not comparable".to_owned(),
        };
        let tolerance = f.tolerance.map_or_else(String::new, |t| {
            let widened =
                if t.widened_by > 0.0 { format!(" (+{} busy)", units::percent(t.widened_by)) } else { String::new() };
            format!("±{}{widened}, ≥ {}", units::percent(t.relative), f.kind.show(t.absolute))
        });
        let mark = if f.significant { "*" } else { " " };
        let _ = writeln!(
            out,
            "{mark} {:<20} {:>12} {:>12} {:>22}  {tolerance}",
            f.label,
            show(f.before),
            show(f.after),
            change
        );
    }
}

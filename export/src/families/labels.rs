//! The labels of a sample: every step's identity (module docs of
//! `families`) and their escaping, shared by both encoders.

use std::fmt::Write as _;

use stepmon_report::step::Step;

/// Escapes a label value or HELP text per the ABNF's `escaped-string`:
/// backslash, double quote and line feed; everything else is a
/// `normal-char` and stays as is.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes a label value per both formats (OpenMetrics' `escaped-string`,
/// the Prometheus text format's label values): `\\`, `\"`, `\n`. No
/// labels, no braces.
pub(super) fn write_labels(out: &mut String, labels: &[(&str, &str)]) {
    if labels.is_empty() {
        return;
    }
    out.push('{');
    for (i, (name, value)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{name}=\"{}\"", escape(value));
    }
    out.push('}');
}

/// The labels every sample of `step` carries (see the module docs).
pub(super) fn identity(step: &Step, index: usize) -> Vec<(&str, String)> {
    let mut labels =
        vec![("step", step.name.clone()), ("origin", step.origin.name().to_owned()), ("index", index.to_string())];
    if let Some(run) = &step.run {
        if let Some(ci) = &run.ci {
            labels.extend(ci.labels().into_iter().map(|(k, v)| (k, v.to_owned())));
        }
        for label in &run.labels {
            if stepmon_model::labels::usable_key(&label.key) && labels.iter().all(|(k, _)| *k != label.key) {
                labels.push((label.key.as_str(), label.value.clone()));
            }
        }
    }
    labels
}

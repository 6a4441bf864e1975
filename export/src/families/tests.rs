use super::verdicts::BOTTLENECK_STATES;
use super::*;

#[test]
fn escapes_label_values() {
    assert_eq!(escape(r#"sh -c 'echo "hi"'"#), r#"sh -c 'echo \"hi\"'"#);
    assert_eq!(escape("a\\b"), "a\\\\b");
    assert_eq!(escape("line\nbreak"), "line\\nbreak");
    // Not escaped by the spec: tab, carriage return, unicode.
    assert_eq!(escape("tab\tcr\r✓ ü"), "tab\tcr\r✓ ü");
}

#[test]
fn numbers() {
    assert_eq!(Value::Unsigned(42).render(Kind::Counter).as_deref(), Some("42"));
    assert_eq!(Value::Float(3.0).render(Kind::Gauge).as_deref(), Some("3.0"));
    assert_eq!(Value::Float(1.5e-7).render(Kind::Gauge).as_deref(), Some("1.5e-7"));
    assert_eq!(Value::Float(f64::NAN).render(Kind::Gauge), None);
    assert_eq!(Value::Float(f64::INFINITY).render(Kind::Gauge), None);
    assert_eq!(Value::Float(-1.0).render(Kind::Counter), None);
    assert_eq!(Value::Signed(-1).render(Kind::Gauge).as_deref(), Some("-1"));
    assert_eq!(Value::Signed(-1).render(Kind::Counter), None);
}

#[test]
fn family_labels_are_reserved() {
    // A `--label` cannot take a label name a family uses.
    let step = Step::from_run(&stepmon_model::document::RunDocument::default());
    let facts = Facts { step: &step, verdicts: step.verdicts() };
    for family in all() {
        for (labels, _) in (family.points)(&facts) {
            for (name, _) in labels {
                assert!(stepmon_model::labels::RESERVED.contains(&name), "{name} of {} is not reserved", family.name);
            }
        }
    }
    for (name, _) in identity(&step, 0) {
        assert!(stepmon_model::labels::RESERVED.contains(&name), "{name}");
    }
}

#[test]
fn family_names_are_valid_and_do_not_clash() {
    let valid = |n: &str| {
        let mut chars = n.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    };
    let mut sample_names = std::collections::BTreeSet::new();
    for family in all() {
        assert!(valid(family.name), "{}", family.name);
        if let Some(unit) = family.unit {
            assert!(family.name.ends_with(&format!("_{unit}")), "{} lacks its unit suffix", family.name);
            assert!(matches!(family.kind, Kind::Gauge | Kind::Counter));
        }
        assert!(!family.help.is_empty());
        // Every name a family can put into the text must be its own
        // (the spec's "Suffixes" section: a gauge `foo_created` would
        // clash with a counter `foo`).
        let mut own = std::collections::BTreeSet::from([family.name.to_owned()]);
        own.insert(format!("{}{}", family.name, family.kind.suffix()));
        if family.kind == Kind::Counter {
            own.insert(format!("{}_created", family.name));
        }
        for name in own {
            assert!(sample_names.insert(name.clone()), "clash: {name}");
        }
    }
}

#[test]
fn statesets_have_exactly_one_true_state() {
    for current in BOTTLENECK_STATES {
        let points = states("f", &BOTTLENECK_STATES, current);
        assert_eq!(points.iter().filter(|(_, v)| *v == Value::Unsigned(1)).count(), 1);
        assert_eq!(points.len(), BOTTLENECK_STATES.len());
    }
}

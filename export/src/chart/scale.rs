//! Axes of the charts: a range from zero to a "nice" top with evenly spaced
//! ticks (steps of 1, 2 or 5 × 10ⁿ; for bytes × 1024ᵏ so labels read
//! `16.0 MiB`, not `16.8 MB`), and their labels in the units of
//! [`stepmon_report::units`].

use stepmon_report::units;

/// What a value axis measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Bytes (labels `16.0 MiB`).
    Bytes,
    /// CPU cores (labels `0.5`, `2`).
    Cores,
    /// A share of time, 0–1 (labels `25.0%`); the axis always spans 0–100 %.
    Share,
    /// Seconds since the step's start (labels `500.0 ms`, `2.00 s`).
    Seconds,
}

/// An axis from 0 to `top` with `ticks` (0 and `top` included).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    /// The value at the far end of the axis (> 0, finite).
    pub(crate) top: f64,
    /// Tick values, ascending.
    pub(crate) ticks: Vec<f64>,
    /// The spacing of the ticks (for the number of decimals in labels).
    step: f64,
    unit: Unit,
}

/// 1, 2, 5 or 10 × 10ⁿ, the smallest not below `raw` (> 0, finite).
pub(crate) fn nice_step(raw: f64) -> f64 {
    let base = 10f64.powf(raw.log10().floor());
    let fraction = raw / base;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * base
}

/// About this many intervals between ticks.
const INTERVALS: f64 = 4.0;

impl Axis {
    /// An axis for values up to `max` (non-finite or non-positive `max`, as
    /// for a series of zeros, gives the unit range).
    pub(crate) fn new(unit: Unit, max: f64) -> Axis {
        if unit == Unit::Share {
            return Axis { top: 1.0, ticks: vec![0.0, 0.25, 0.5, 0.75, 1.0], step: 0.25, unit };
        }
        let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
        // Bytes: pick the binary unit first (KiB, MiB, ...), then a decimal
        // step of that unit; and never a step below one byte.
        let scale = if unit == Unit::Bytes { 1024f64.powf(max.log(1024.0).floor().clamp(0.0, 5.0)) } else { 1.0 };
        let mut step = nice_step(max / scale / INTERVALS) * scale;
        if unit == Unit::Bytes {
            step = step.max(1.0);
        }
        let count = (max / step).ceil().max(1.0);
        let top = count * step;
        // `count` is at most about INTERVALS × 2.5, so the cast is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ticks = (0..=count as u32).map(|i| f64::from(i) * step).collect();
        Axis { top, ticks, step, unit }
    }

    /// The label of tick value `v`.
    pub(crate) fn label(&self, v: f64) -> String {
        if v == 0.0 {
            return "0".to_owned();
        }
        match self.unit {
            // Tick values are whole multiples of a whole number of bytes.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Unit::Bytes => units::bytes(v.round() as u64),
            Unit::Share => units::percent(v),
            Unit::Seconds => units::seconds(v),
            Unit::Cores => {
                // Enough decimals to tell neighbouring ticks apart.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let decimals = (-self.step.log10().floor()).clamp(0.0, 3.0) as u32;
                stepmon_report::fixed::string(v, decimals)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_axes() {
        let a = Axis::new(Unit::Cores, 1.7);
        assert_eq!(a.ticks, vec![0.0, 0.5, 1.0, 1.5, 2.0]);
        assert_eq!(a.top, 2.0);
        assert_eq!(a.label(0.5), "0.5");
        assert_eq!(Axis::new(Unit::Cores, 3.0).label(2.0), "2");
        assert_eq!(Axis::new(Unit::Seconds, 6.66).ticks.last(), Some(&8.0));
    }

    #[test]
    fn degenerate_ranges_give_the_unit_range() {
        for max in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let a = Axis::new(Unit::Cores, max);
            assert_eq!(a.top, 1.0, "{max}");
            assert!(a.ticks.iter().all(|t| t.is_finite()));
        }
    }

    #[test]
    fn byte_axes_use_binary_units() {
        let a = Axis::new(Unit::Bytes, 48.0 * 1024.0 * 1024.0);
        assert_eq!(a.label(a.top), "60.0 MiB");
        assert_eq!(a.ticks.len(), 4);
        let small = Axis::new(Unit::Bytes, 3.0);
        assert_eq!(small.ticks, vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(small.label(2.0), "2 B");
    }

    #[test]
    fn shares_span_the_whole_range() {
        let a = Axis::new(Unit::Share, 0.02);
        assert_eq!(a.top, 1.0);
        assert_eq!(a.label(0.25), "25.0%");
    }
}

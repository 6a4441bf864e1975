//! BuildKit's `Pressure`/`PressureValues` JSON shape for PSI readings.

use serde::{Deserialize, Serialize};
use stepmon_psi::{Pressure, PressureLine};

use super::float::go_opt_f64;

/// One `some` or `full` line in BuildKit's `PressureValues` shape: every
/// field present, `null` when the kernel did not print it. Spec of the
/// source: <https://docs.kernel.org/accounting/psi.html#pressure-interface>.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PressureValues {
    /// `avg10`, percent (two decimals, as printed).
    #[serde(serialize_with = "go_opt_f64")]
    pub avg10: Option<f64>,
    /// `avg60`, percent.
    #[serde(serialize_with = "go_opt_f64")]
    pub avg60: Option<f64>,
    /// `avg300`, percent.
    #[serde(serialize_with = "go_opt_f64")]
    pub avg300: Option<f64>,
    /// `total`, cumulative stall µs.
    pub total: Option<u64>,
}

impl From<&PressureLine> for PressureValues {
    fn from(line: &PressureLine) -> Self {
        // `Hundredths::as_f64` is the nearest double to the printed decimal,
        // the same value Go's ParseFloat gives BuildKit.
        PressureValues {
            avg10: line.avg10.map(|h| h.as_f64()),
            avg60: line.avg60.map(|h| h.as_f64()),
            avg300: line.avg300.map(|h| h.as_f64()),
            total: line.total_usec,
        }
    }
}

/// BuildKit's `Pressure`: `some` and `full`, each `null` when its line is
/// absent (Go pointers without omitempty), e.g. `some` of `/proc/pressure/irq`.
///
/// ```
/// use stepmon_sysusage::model::PressureJson;
/// let p = stepmon_psi::Pressure::parse(b"some avg10=3.00 avg60=1.16 avg300=0.60 total=3220079\n")?;
/// assert_eq!(serde_json::to_string(&PressureJson::from(&p)).unwrap(),
///     r#"{"some":{"avg10":3,"avg60":1.16,"avg300":0.6,"total":3220079},"full":null}"#);
/// # Ok::<(), stepmon_psi::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PressureJson {
    /// The `some` line.
    pub some: Option<PressureValues>,
    /// The `full` line.
    pub full: Option<PressureValues>,
}

impl From<&Pressure> for PressureJson {
    fn from(p: &Pressure) -> Self {
        PressureJson {
            some: p.some.as_ref().map(PressureValues::from),
            full: p.full.as_ref().map(PressureValues::from),
        }
    }
}

//! BuildKit's `Pressure`/`PressureValues` JSON shape for PSI readings.

use crate::float::go_opt_f64;
use serde::{Deserialize, Serialize};

/// One `some` or `full` line in BuildKit's `PressureValues` shape: every
/// field present, `null` when the kernel did not print it. Spec of the
/// source: <https://docs.kernel.org/accounting/psi.html#pressure-interface>.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
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

/// BuildKit's `Pressure`: `some` and `full`, each `null` when its line is
/// absent (Go pointers without omitempty), e.g. `some` of `/proc/pressure/irq`.
///
/// ```
/// use stepmon_model::system::PressureJson;
/// let p: PressureJson = serde_json::from_str(r#"{"some":{"avg10":3,"avg60":1.16,"avg300":0.6,"total":3220079},"full":null}"#)?;
/// assert_eq!(p.some.and_then(|s| s.total), Some(3220079));
/// assert_eq!(serde_json::to_string(&p)?,
///     r#"{"some":{"avg10":3,"avg60":1.16,"avg300":0.6,"total":3220079},"full":null}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PressureJson {
    /// The `some` line.
    pub some: Option<PressureValues>,
    /// The `full` line.
    pub full: Option<PressureValues>,
}

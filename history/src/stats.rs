//! The tests that tell a change from run-to-run noise, each as an interval
//! the next run's value is expected in ([`Test::bounds`]), and the rates
//! they promise for normally distributed noise.

use serde::{Deserialize, Serialize};

/// How a value is compared with its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Test {
    /// Beyond `threshold` % of the baseline's mean.
    Percent,
    /// More than `threshold` standard deviations (of the baseline) from its mean.
    Z,
    /// Outside the two-sided `1 - threshold` prediction interval of Student's
    /// t for one new value: mean ± t(1-α/2, n-1)·s·√(1+1/n). For normal noise
    /// its false-alarm rate is exactly α, whatever the window.
    T,
    /// Beyond Q1 - k·IQR or Q3 + k·IQR, `threshold` = k (Tukey's fences):
    /// no assumption about the noise's shape.
    Iqr,
}

impl Test {
    /// Its name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Test::Percent => "percent",
            Test::Z => "z",
            Test::T => "t",
            Test::Iqr => "iqr",
        }
    }

    /// What its threshold is, for people.
    #[must_use]
    pub fn threshold_meaning(self) -> &'static str {
        match self {
            Test::Percent => "% of the mean",
            Test::Z => "standard deviations",
            Test::T => "false-alarm level α",
            Test::Iqr => "× IQR beyond the quartiles",
        }
    }

    /// The interval `(lower, upper)` a new value is expected in, given the
    /// baseline `values` (at least two) and the test's `threshold`.
    #[must_use]
    pub fn bounds(self, values: &[f64], threshold: f64) -> (f64, f64) {
        self.bounds_memo(values, threshold, &mut Vec::new())
    }

    /// [`Test::bounds`] with the t quantiles already computed for this
    /// threshold kept in `memo` (indexed by the number of values): a
    /// trend judges thousands of runs with the same few baseline sizes.
    pub(crate) fn bounds_memo(self, values: &[f64], threshold: f64, memo: &mut Vec<Option<f64>>) -> (f64, f64) {
        let (m, s) = (mean(values), sd(values));
        #[allow(clippy::cast_precision_loss)]
        let n = values.len() as f64;
        match self {
            Test::Percent => {
                let half = m.abs() * threshold / 100.0;
                (m - half, m + half)
            }
            Test::Z => (m - threshold * s, m + threshold * s),
            Test::T => {
                if memo.len() <= values.len() {
                    memo.resize(values.len() + 1, None);
                }
                let q = *memo[values.len()].get_or_insert_with(|| t_quantile(1.0 - threshold / 2.0, n - 1.0));
                let half = q * s * (1.0 + 1.0 / n).sqrt();
                (m - half, m + half)
            }
            Test::Iqr => {
                let (q1, q3) = (quantile(values, 0.25), quantile(values, 0.75));
                let iqr = q3 - q1;
                (q1 - threshold * iqr, q3 + threshold * iqr)
            }
        }
    }

    /// The share of runs it flags (regression, improvement) when the
    /// baseline is `n` values of normal noise with coefficient of variation
    /// `cv` (sd / mean) and the new run's true value is `shift` (a share:
    /// 0.1 = 10 %) above the baseline's: with `shift` 0 their sum is the
    /// false-alarm rate, with `shift` > 0 the first is the rate a real
    /// change is found at. Floors are not applied. `None` for IQR, which
    /// has no closed form (the tests simulate it).
    ///
    /// Exact for normal noise: with x̄, s the baseline's mean and sd and σ'
    /// = σ·√(1+1/n), (x - x̄)/σ' is normal with mean δ = shift/(cv·√(1+1/n))
    /// and (n-1)s²/σ² is χ²(n-1) and independent of it, so the z and t
    /// tests' rates are one integral over the χ² density (the t test's is
    /// the noncentral t's tail). The percent test's bound moves with x̄ only
    /// (taken as the true mean).
    #[must_use]
    pub fn expected_rates(self, threshold: f64, n: usize, cv: f64, shift: f64) -> Option<(f64, f64)> {
        #[allow(clippy::cast_precision_loss)]
        let nf = n as f64;
        let widen = (1.0 + 1.0 / nf).sqrt();
        let delta = shift / (cv * widen);
        // The bound in units of σ' for an sd estimate s = σ·√(v/df).
        let (df, c) = match self {
            Test::Percent => {
                let bound = threshold / 100.0 / (cv * widen);
                return Some((normal_cdf(delta - bound), normal_cdf(-bound - delta)));
            }
            Test::Z => (nf - 1.0, threshold / widen),
            Test::T => (nf - 1.0, t_quantile(1.0 - threshold / 2.0, nf - 1.0)),
            Test::Iqr => return None,
        };
        let (up, down) = chi_square_expectation(df, |v| {
            let bound = c * (v / df).sqrt();
            (normal_cdf(delta - bound), normal_cdf(-bound - delta))
        });
        Some((up, down))
    }
}

/// E[f(V)] for V ~ χ²(df), by Simpson's rule in u = √v (smooth at 0 for
/// every df) over [0, √(df + 14·√(2·df) + 40)].
fn chi_square_expectation(df: f64, f: impl Fn(f64) -> (f64, f64)) -> (f64, f64) {
    const STEPS: u32 = 4000;
    let top = (df + 14.0 * (2.0 * df).sqrt() + 40.0).sqrt();
    let h = top / f64::from(STEPS);
    let ln_norm = (df / 2.0) * std::f64::consts::LN_2 + ln_gamma(df / 2.0);
    // The density of V at u², times dv/du = 2u: 2·u^(df-1)·e^(-u²/2) / norm.
    let density = |u: f64| if u <= 0.0 { 0.0 } else { 2.0 * ((df - 1.0) * u.ln() - u * u / 2.0 - ln_norm).exp() };
    let (mut a, mut b) = (0.0, 0.0);
    for i in 0..=STEPS {
        let u = f64::from(i) * h;
        let weight = if i == 0 || i == STEPS {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let (x, y) = f(u * u);
        let d = density(u) * weight;
        a += x * d;
        b += y * d;
    }
    (a * h / 3.0, b * h / 3.0)
}

impl std::str::FromStr for Test {
    type Err = String;
    fn from_str(s: &str) -> Result<Test, String> {
        [Test::Percent, Test::Z, Test::T, Test::Iqr]
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown test `{s}` (one of: percent, z, t, iqr)"))
    }
}

/// The arithmetic mean (NaN of nothing).
#[must_use]
pub fn mean(values: &[f64]) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let n = values.len() as f64;
    values.iter().sum::<f64>() / n
}

/// The sample standard deviation (n - 1; 0 of fewer than two values).
#[must_use]
pub fn sd(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let m = mean(values);
    #[allow(clippy::cast_precision_loss)]
    let n = values.len() as f64;
    (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// The `p` quantile, linear between order statistics (R's type 7, numpy's default).
#[must_use]
pub fn quantile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let Some(last) = sorted.len().checked_sub(1) else { return f64::NAN };
    #[allow(clippy::cast_precision_loss)]
    let h = p * last as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let lo = (h.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    #[allow(clippy::cast_precision_loss)]
    let frac = h - lo as f64;
    sorted[lo] + frac * (sorted[hi] - sorted[lo])
}

/// The standard normal distribution function, from the complementary
/// error function (W. J. Cody's rational approximation as in Numerical
/// Recipes' `erfc`, |error| < 1.2e-7).
#[must_use]
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Student's t distribution function with `df` degrees of freedom, from the
/// regularized incomplete beta function: P(T ≤ t) = 1 - I_x(df/2, 1/2)/2
/// with x = df/(df+t²), for t ≥ 0.
#[must_use]
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, x);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `p` quantile of Student's t with `df` degrees of freedom (bisection
/// of [`t_cdf`]; `df` below 1 is taken as 1).
#[must_use]
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let df = df.max(1.0);
    if p == 0.5 {
        return 0.0;
    }
    let (mut lo, mut hi) = (-1e4, 1e4);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function I_x(a, b) by its continued
/// fraction (Lentz's method; Numerical Recipes §6.4).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        #[allow(clippy::cast_precision_loss)]
        let i = i as f64;
        a += c / (x + i);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 1 % and 5 % critical values (any statistics table).
        for (df, p, want) in [(4.0, 0.995, 4.604), (9.0, 0.995, 3.250), (9.0, 0.975, 2.262), (29.0, 0.995, 2.756)] {
            let got = t_quantile(p, df);
            assert!((got - want).abs() < 2e-3, "t({p}, {df}) = {got}, tables say {want}");
        }
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
    }

    #[test]
    fn the_t_test_promises_its_level() {
        for n in [3, 5, 10, 30] {
            let (up, down) = Test::T.expected_rates(0.01, n, 0.05, 0.0).unwrap();
            assert!((up + down - 0.01).abs() < 1e-4, "n={n}: {up} + {down}");
        }
        // z of 2 with a known sd would be 4.55 %; estimated from 5 runs, more.
        let (up, down) = Test::Z.expected_rates(2.0, 1_000_000, 0.05, 0.0).unwrap();
        assert!((up + down - 0.0455).abs() < 1e-3, "{}", up + down);
        let (up, down) = Test::Z.expected_rates(2.0, 5, 0.05, 0.0).unwrap();
        assert!(up + down > 0.1, "{}", up + down);
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert!((quantile(&v, 0.25) - 1.75).abs() < 1e-12);
        assert!((quantile(&v, 0.75) - 3.25).abs() < 1e-12);
        assert!((sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) - 2.138_089_935).abs() < 1e-9);
    }
}

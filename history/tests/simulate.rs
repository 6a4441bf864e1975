//! The tests' promises checked on simulated histories: 1,000 histories
//! per test, family and window, of normal noise with the run-to-run spread
//! measured on this project's machine (docs/baselines.md, "Noise"), a
//! seeded generator so a failure replays.
//!
//! * Without a change, each test flags (either way) at most the rate it
//!   promises ([`Test::expected_rates`]; the t test's is its α); IQR, which
//!   has no closed form, at most 2 % from 10 runs on.
//! * With a 10 % step up, it finds the regression at the rate it promises.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

use std::collections::BTreeMap;

use stepmon_history::{Family, Machine, Measure, Policy, RunKey, RunRecord, Test, Verdict, check, default_threshold};

/// Coefficients of variation measured with scripts/baseline-noise (10 runs
/// each of two steady steps, release binary, load 7-11 on 2 cores): the
/// larger of the two steps' for each metric.
const NOISE: [(Family, &str, f64, f64); 4] = [
    (Family::Cpu, "cpu-seconds", 0.202_6, 0.022_2),
    (Family::Wall, "wall-seconds", 1.107, 0.257_8),
    (Family::Memory, "memory-peak-bytes", 112_475_000.0, 0.000_6),
    (Family::Stall, "cpu-stall-seconds", 0.400, 0.507),
];

const HISTORIES: usize = 1000;
/// IQR's documented false-alarm level for normal noise from 10 runs on
/// (k = 3: 1.4-1.6 % at 10 runs in this simulation, 0-0.1 % at 30).
const IQR_LEVEL: f64 = 0.02;

fn normal(rng: &mut fastrand::Rng) -> f64 {
    // Box–Muller.
    let (u, v) = (1.0 - rng.f64(), rng.f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn record(i: usize, metric: &str, value: f64) -> RunRecord {
    RunRecord {
        key: RunKey { step: "simulated".into(), ..RunKey::default() },
        branch: None,
        time: jiff::Timestamp::from_second(1_800_000_000 + i64::try_from(i).unwrap()).unwrap(),
        commit: None,
        machine: Machine::Quiet,
        measures: vec![Measure { metric: metric.into(), value }],
        content_key: i.to_string(),
    }
}

/// The shares of `HISTORIES` simulated histories of `n` runs in which a
/// new run `shift` above the true mean is judged a regression, an
/// improvement; floors as `policy` has them.
fn simulate(policy: &Policy, n: usize, (metric, mean, cv): (&str, f64, f64), shift: f64, seed: u64) -> (f64, f64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut up, mut down) = (0, 0);
    for _ in 0..HISTORIES {
        let history: Vec<RunRecord> = (0..n).map(|i| record(i, metric, mean * (1.0 + cv * normal(&mut rng)))).collect();
        let new = record(n, metric, mean * (1.0 + shift + cv * normal(&mut rng)));
        match check(&new, &history, policy).metrics[0].verdict {
            Verdict::Regression => up += 1,
            Verdict::Improvement => down += 1,
            _ => {}
        }
    }
    (up as f64 / HISTORIES as f64, down as f64 / HISTORIES as f64)
}

/// How far a share of 1,000 may stray from `p` by chance (4 standard errors, and 0.5 %).
fn slack(p: f64) -> f64 {
    4.0 * (p * (1.0 - p) / HISTORIES as f64).sqrt() + 0.005
}

fn policy(test: Test, n: usize, floors: bool) -> Policy {
    let mut policy = Policy { test, window: n, min_runs: 5, ..Policy::default() };
    if !floors {
        policy.floors = Family::ALL.into_iter().map(|f| (f, 0.0)).collect::<BTreeMap<_, _>>();
    }
    policy
}

#[test]
fn without_a_change_no_test_alarms_more_than_it_promises() {
    let mut seed = 1;
    let mut table = String::new();
    for test in [Test::Percent, Test::Z, Test::T, Test::Iqr] {
        for (family, metric, mean, cv) in NOISE {
            for n in [10, 30] {
                seed += 1;
                let threshold = default_threshold(test, family);
                let (up, down) = simulate(&policy(test, n, false), n, (metric, mean, cv), 0.0, seed);
                let rate = up + down;
                let promise = match test.expected_rates(threshold, n, cv, 0.0) {
                    Some((u, d)) => u + d,
                    None => IQR_LEVEL,
                };
                table.push_str(&format!(
                    "{:<8}{:<8}n={n:<3} false alarms {:>5.1}% (promised {:>5.2}%)\n",
                    test.name(),
                    family.name(),
                    rate * 100.0,
                    promise * 100.0
                ));
                assert!(rate <= promise + slack(promise), "{test:?} {family:?} n={n}: {rate} > {promise}\n{table}");
                // With the floors the gate uses, never more.
                let (fu, fd) = simulate(&policy(test, n, true), n, (metric, mean, cv), 0.0, seed);
                assert!(fu + fd <= rate, "{test:?} {family:?}: floors added alarms");
            }
        }
    }
    println!("{table}");
    // The default test's level, whatever the noise.
    for n in [5, 10, 30] {
        let (u, d) = Test::T.expected_rates(default_threshold(Test::T, Family::Cpu), n, 0.02, 0.0).unwrap();
        assert!((u + d - 0.01).abs() < 1e-3);
    }
}

#[test]
fn a_ten_percent_step_is_found_at_the_promised_rate() {
    let mut seed = 1000;
    let mut table = String::new();
    for test in [Test::Percent, Test::Z, Test::T, Test::Iqr] {
        for (family, metric, mean, cv) in NOISE {
            let n = 30;
            seed += 1;
            let threshold = default_threshold(test, family);
            let (found, _) = simulate(&policy(test, n, false), n, (metric, mean, cv), 0.10, seed);
            let promise = test.expected_rates(threshold, n, cv, 0.10).map(|(u, _)| u);
            table.push_str(&format!(
                "{:<8}{:<8}found {:>5.1}% (promised {})\n",
                test.name(),
                family.name(),
                found * 100.0,
                promise.map_or_else(|| "—".to_owned(), |p| format!("{:.1}%", p * 100.0))
            ));
            match promise {
                Some(p) => {
                    assert!((found - p).abs() <= slack(p), "{test:?} {family:?}: found {found}, promised {p}\n{table}")
                }
                // IQR: certain where the noise is small against 10 %.
                None if cv < 0.01 => assert!(found > 0.99, "{family:?}: {found}"),
                None => {}
            }
        }
    }
    println!("{table}");
    // What the defaults promise at the measured noise: memory and CPU
    // regressions of 10 % found by the default t test at least 9 times in 10.
    for (family, _, _, cv) in &NOISE[..3] {
        if *family == Family::Wall {
            continue;
        }
        let (up, _) = Test::T.expected_rates(0.01, 30, *cv, 0.10).unwrap();
        assert!(up > 0.9, "{family:?}: {up}");
    }
}

//! PSI files (`/proc/pressure/*`, cgroup `*.pressure`): `Pressure::parse`
//! checked against the `NestedKeyed` model (last `some`/`full` line wins,
//! unknown lines and tokens ignored), `Hundredths` display round trips, and
//! `StallDelta::between` (with every accessor) of two readings.
//!
//! Input: one PSI reading, or two separated by a NUL byte (without a NUL
//! the input is compared with itself).
#![no_main]

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::format::nested::NestedKeyed;
use stepmon_cgroupfs_parse::number::{Hundredths, parse_u64};
use stepmon_fuzz::{check_error, split_nul};
use stepmon_psi::{ParseError, Pressure, PressureLine, StallDelta};

fn model(data: &[u8]) -> Result<Pressure, ParseError> {
    let (mut some, mut full) = (None, None);
    for line in NestedKeyed::new(data) {
        let line = line?;
        let slot = match line.key {
            "some" => &mut some,
            "full" => &mut full,
            _ => continue,
        };
        let (mut avg10, mut avg60, mut avg300, mut total) = (None, None, None, None);
        for pair in line.pairs() {
            let pair = pair?;
            match pair.key {
                "avg10" => avg10 = Some(pair.convert(Hundredths::parse)?),
                "avg60" => avg60 = Some(pair.convert(Hundredths::parse)?),
                "avg300" => avg300 = Some(pair.convert(Hundredths::parse)?),
                "total" => total = Some(pair.convert(parse_u64)?),
                _ => {}
            }
        }
        *slot = Some((avg10, avg60, avg300, total));
    }
    let to_line = |l: Option<(Option<Hundredths>, _, _, Option<u64>)>| {
        l.map(|(a10, a60, a300, t)| {
            let mut line = PressureLine::default();
            line.avg10 = a10;
            line.avg60 = a60;
            line.avg300 = a300;
            line.total_usec = t;
            line
        })
    };
    Ok(Pressure::new(to_line(some), to_line(full)))
}

fn parse_checked(data: &[u8]) -> Option<Pressure> {
    match (Pressure::parse(data), model(data)) {
        (Ok(p), Ok(expected)) => {
            assert_eq!(p, expected);
            for line in [p.some, p.full].into_iter().flatten() {
                for avg in [line.avg10, line.avg60, line.avg300].into_iter().flatten() {
                    assert_eq!(Hundredths::parse(avg.to_string().as_bytes()), Ok(avg));
                    assert!(avg.as_f64().is_finite());
                }
            }
            Some(p)
        }
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected);
            check_error(data, &err);
            None
        }
        (got, expected) => panic!("Pressure::parse gave {got:?}, model {expected:?}"),
    }
}

fn expected_delta(earlier: Option<PressureLine>, later: Option<PressureLine>) -> Option<u64> {
    let (e, l) = (earlier?.total_usec?, later?.total_usec?);
    (l >= e).then(|| l - e)
}

fuzz_target!(|data: &[u8]| {
    parse_checked(data);
    let (first, second) = split_nul(data);
    let (Some(earlier), Some(later)) = (parse_checked(first), parse_checked(second)) else {
        return;
    };
    let mut walls = vec![Duration::ZERO, Duration::from_micros(1), Duration::from_secs(1), Duration::MAX];
    walls.extend(later.some.and_then(|l| l.total_usec).map(Duration::from_micros));
    walls.push(Duration::from_nanos(data.len() as u64 * 999));
    for wall in walls {
        for (a, b) in [(&earlier, &later), (&later, &earlier), (&earlier, &earlier)] {
            let d = StallDelta::between(a, b, wall);
            assert_eq!(d.some_usec, expected_delta(a.some, b.some));
            assert_eq!(d.full_usec, expected_delta(a.full, b.full));
            assert_eq!(u128::from(d.wall_usec), wall.as_micros().min(u128::from(u64::MAX)));
            assert_eq!(d.some(), d.some_usec.map(Duration::from_micros));
            assert_eq!(d.full(), d.full_usec.map(Duration::from_micros));
            for (share, percent, stall) in [
                (d.some_share_of_wall(), d.some_percent_of_wall(), d.some_usec),
                (d.full_share_of_wall(), d.full_percent_of_wall(), d.full_usec),
            ] {
                assert_eq!(share.is_some(), stall.is_some() && d.wall_usec > 0);
                assert_eq!(percent.is_some(), share.is_some());
                if let (Some(s), Some(p)) = (share, percent) {
                    assert!(s.is_finite() && s >= 0.0 && p.is_finite() && p >= 0.0);
                }
            }
        }
    }
    // Comparing a reading with itself: no stall passed.
    let same = StallDelta::between(&earlier, &earlier, Duration::from_secs(1));
    assert_eq!(same.some_usec, earlier.some.and_then(|l| l.total_usec).map(|_| 0));
});

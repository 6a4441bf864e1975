//! `Pressure::parse` on every PSI file captured on the hybrid 6.18 host and on
//! hand-written ones (see `tests/data/README.md`), with exact values, plus
//! the edge cases of the format and `StallDelta` on real readings.

use std::time::Duration;

use stepmon_psi::{ErrorKind, Hundredths, ParseError, Pressure, PressureLine, StallDelta};

macro_rules! data {
    ($path:literal) => {
        include_bytes!(concat!("data/", $path)).as_slice()
    };
}

fn line(avg10: u64, avg60: u64, avg300: u64, total: u64) -> Option<PressureLine> {
    Some(PressureLine::new(Hundredths(avg10), Hundredths(avg60), Hundredths(avg300), total))
}

fn loc(e: ParseError) -> (ErrorKind, u32, u32) {
    (e.kind, e.line, e.offset)
}

#[test]
fn system_wide_captures() {
    let cpu = Pressure::parse(data!("hybrid-6.18/proc_pressure_cpu.txt")).unwrap();
    assert_eq!(cpu, Pressure::new(line(300, 116, 60, 3_220_079), line(0, 0, 0, 0)));
    let io = Pressure::parse(data!("hybrid-6.18/proc_pressure_io.txt")).unwrap();
    assert_eq!(io, Pressure::new(line(72, 22, 9, 745_509), line(72, 22, 9, 683_709)));
    let memory = Pressure::parse(data!("hybrid-6.18/proc_pressure_memory.txt")).unwrap();
    assert_eq!(memory, Pressure::new(line(0, 0, 0, 0), line(0, 0, 0, 0)));
}

#[test]
fn root_cgroup_captures_match_the_system_wide_files() {
    let cpu = Pressure::parse(data!("hybrid-6.18/cgroup2_root_cpu.pressure.txt")).unwrap();
    // Read a moment after /proc/pressure/cpu: same averages, total 351 µs later.
    assert_eq!(cpu, Pressure::new(line(300, 116, 60, 3_220_430), line(0, 0, 0, 0)));
    assert_eq!(
        Pressure::parse(data!("hybrid-6.18/cgroup2_root_io.pressure.txt")),
        Pressure::parse(data!("hybrid-6.18/proc_pressure_io.txt"))
    );
    assert_eq!(
        Pressure::parse(data!("hybrid-6.18/cgroup2_root_memory.pressure.txt")),
        Pressure::parse(data!("hybrid-6.18/proc_pressure_memory.txt"))
    );
}

#[test]
fn fresh_child_cgroup_captures_are_all_zero_but_present() {
    for input in [
        data!("hybrid-6.18/cgroup2_child_cpu.pressure.txt"),
        data!("hybrid-6.18/cgroup2_child_io.pressure.txt"),
        data!("hybrid-6.18/cgroup2_child_memory.pressure.txt"),
    ] {
        assert_eq!(Pressure::parse(input).unwrap(), Pressure::new(line(0, 0, 0, 0), line(0, 0, 0, 0)));
    }
}

#[test]
fn handmade_variants() {
    // irq.pressure has only `full`.
    let irq = Pressure::parse(data!("pure-v2-handmade/irq.pressure")).unwrap();
    assert_eq!(irq, Pressure::new(None, line(52, 31, 12, 4_180_533)));
    // cpu.pressure before 5.13 has only `some`.
    let old = Pressure::parse(data!("pure-v2-handmade/cpu.pressure.pre-5.13")).unwrap();
    assert_eq!(old, Pressure::new(line(175, 88, 21, 602_114), None));
    let mem = Pressure::parse(data!("pure-v2-handmade/memory.pressure")).unwrap();
    assert_eq!(mem, Pressure::new(line(8765, 4120, 998, 58_212_009), line(8001, 3743, 902, 51_900_114)));
    assert_eq!(mem.some.unwrap().avg10.unwrap().to_string(), "87.65");
    assert_eq!(mem.full.unwrap().avg300.unwrap().as_f64(), 9.02);
    let cpu = Pressure::parse(data!("pure-v2-handmade/cpu.pressure")).unwrap();
    assert_eq!(cpu, Pressure::new(line(1234, 567, 123, 9_876_543), line(456, 201, 44, 3_456_789)));
}

#[test]
fn missing_trailing_newline_gives_the_same_result() {
    for input in [
        data!("hybrid-6.18/proc_pressure_io.txt"),
        data!("pure-v2-handmade/irq.pressure"),
        data!("pure-v2-handmade/memory.pressure"),
    ] {
        let stripped = input.strip_suffix(b"\n").unwrap();
        assert_eq!(Pressure::parse(stripped), Pressure::parse(input));
    }
}

#[test]
fn empty_and_odd_but_valid_inputs() {
    // A 0-byte read is "no line printed": both lines absent, not zeros.
    assert_eq!(Pressure::parse(b"").unwrap(), Pressure::default());
    assert_eq!(Pressure::default(), Pressure::new(None, None));
    // A line with no pairs is present with every field absent.
    assert_eq!(Pressure::parse(b"some\n").unwrap(), Pressure::new(Some(PressureLine::default()), None));
    // Order of lines and of pairs does not matter.
    let reordered = Pressure::parse(
        b"full total=2 avg300=0.03 avg60=0.02 avg10=0.01\nsome avg300=3.00 total=1 avg10=1.00 avg60=2.00\n",
    );
    assert_eq!(reordered.unwrap(), Pressure::new(line(100, 200, 300, 1), line(1, 2, 3, 2)));
    // Unknown pairs and unknown lines are ignored (unknown lines are not even validated).
    let extra =
        Pressure::parse(b"some avg10=0.50 future=x avg60=0.25 avg300=0.10 total=9 avg600=1.00\nnone of this=matters\n");
    assert_eq!(extra.unwrap(), Pressure::new(line(50, 25, 10, 9), None));
    // Averages may exceed 100.00 and may be printed with fewer decimals.
    assert_eq!(Pressure::parse(b"some avg10=100.37\n").unwrap().some.unwrap().avg10, Some(Hundredths(10_037)));
    assert_eq!(Pressure::parse(b"some avg10=3\n").unwrap().some.unwrap().avg10, Some(Hundredths(300)));
    assert_eq!(Pressure::parse(b"some avg10=3.5\n").unwrap().some.unwrap().avg10, Some(Hundredths(350)));
    // total is u64 microseconds; u64::MAX is accepted.
    let max = Pressure::parse(b"full total=18446744073709551615\n").unwrap();
    assert_eq!(max.full.unwrap().total_usec, Some(u64::MAX));
    // Double spaces between pairs are tolerated.
    let spaced = Pressure::parse(b"some  avg10=1.00  total=5\n").unwrap().some.unwrap();
    assert_eq!(
        (spaced.avg10, spaced.avg60, spaced.avg300, spaced.total_usec),
        (Some(Hundredths(100)), None, None, Some(5))
    );
}

#[test]
fn duplicates_last_wins() {
    // A repeated line replaces the earlier one as a whole (fields are not merged).
    let p = Pressure::parse(b"some avg10=1.00 avg60=1.00 avg300=1.00 total=5\nsome total=7\n").unwrap();
    let some = p.some.unwrap();
    assert_eq!((some.avg10, some.avg60, some.avg300, some.total_usec), (None, None, None, Some(7)));
    // A repeated pair: the last one wins.
    let p = Pressure::parse(b"some total=1 total=2\n").unwrap();
    assert_eq!(p.some.unwrap().total_usec, Some(2));
}

#[test]
fn error_locations() {
    let ok_line = "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"; // 47 bytes
    assert_eq!(ok_line.len(), 47);
    let err = |s: &str| Pressure::parse(s.as_bytes()).map_err(loc);
    assert_eq!(err("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\r\n"), Err((ErrorKind::InvalidNumber, 1, 45)));
    assert_eq!(err(&format!("{ok_line}full avg10=1.234")), Err((ErrorKind::InvalidNumber, 2, 58)));
    assert_eq!(err(&format!("{ok_line}full total=18446744073709551616\n")), Err((ErrorKind::Overflow, 2, 58)));
    assert_eq!(err("some avg10=1.00 total=-1\n"), Err((ErrorKind::InvalidNumber, 1, 22)));
    assert_eq!(err("some avg10=1.00 total=+1\n"), Err((ErrorKind::InvalidNumber, 1, 22)));
    assert_eq!(err("some avg10=1e2\n"), Err((ErrorKind::InvalidNumber, 1, 11)));
    assert_eq!(err("some avg10=.5\n"), Err((ErrorKind::InvalidNumber, 1, 11)));
    assert_eq!(err("some avg10=inf\n"), Err((ErrorKind::InvalidNumber, 1, 11)));
    assert_eq!(err("some avg10=1.00 avg60\n"), Err((ErrorKind::MissingSeparator, 1, 16)));
    assert_eq!(err("some =1\n"), Err((ErrorKind::InvalidKey, 1, 5)));
    assert_eq!(err("some\tavg10=1.00\n"), Err((ErrorKind::InvalidKey, 1, 0)));
    assert_eq!(err(&format!("{ok_line}\n")), Err((ErrorKind::EmptyLine, 2, 47)));
    assert_eq!(err("\x00\x01"), Err((ErrorKind::InvalidKey, 1, 0)));
    assert_eq!(err("\u{feff}some total=1\n"), Err((ErrorKind::InvalidKey, 1, 0)));
    // Values of unknown pairs are not parsed, so they cannot fail.
    assert!(err("some future=\u{7f}\n").is_ok());
}

#[test]
fn stall_delta_on_real_readings() {
    let system = Pressure::parse(data!("hybrid-6.18/proc_pressure_cpu.txt")).unwrap();
    let root = Pressure::parse(data!("hybrid-6.18/cgroup2_root_cpu.pressure.txt")).unwrap();
    let d = StallDelta::between(&system, &root, Duration::from_millis(1));
    assert_eq!((d.some_usec, d.full_usec, d.wall_usec), (Some(351), Some(0), 1000));
    assert_eq!(d.some(), Some(Duration::from_micros(351)));
    assert_eq!(d.some_share_of_wall(), Some(0.351));
    assert_eq!(d.full_percent_of_wall(), Some(0.0));
    // Backwards (the earlier reading passed second) is not a delta.
    let back = StallDelta::between(&root, &system, Duration::from_millis(1));
    assert_eq!((back.some_usec, back.full_usec), (None, Some(0)));
    // A file without a `full` line gives no full delta.
    let old = Pressure::parse(data!("pure-v2-handmade/cpu.pressure.pre-5.13")).unwrap();
    let d = StallDelta::between(&old, &old, Duration::from_secs(1));
    assert_eq!((d.some_usec, d.full_usec, d.full_share_of_wall()), (Some(0), None, None));
    // Zero wall time: no share.
    assert_eq!(StallDelta::between(&system, &root, Duration::ZERO).some_percent_of_wall(), None);
}

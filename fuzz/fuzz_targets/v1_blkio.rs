//! v1 blkio statistics (`blkio.throttle.io_service_bytes*`,
//! `io_serviced*`): `v1::BlkioStat::{parse, totals, total_line,
//! device_count, devices, device}`. The lazy device walk must agree with the
//! validating parse: as many devices, totals equal to their sums, `device(id)`
//! the first entry of that device; and a print/re-parse of the devices gives
//! the same devices.
#![no_main]

use std::fmt::Write as _;

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::DeviceId;
use stepmon_cgroupfs_parse::v1::BlkioStat;
use stepmon_fuzz::{check_error, sum_present as sum};

fuzz_target!(|data: &[u8]| {
    let io = match BlkioStat::parse(data) {
        Ok(io) => io,
        Err(err) => return check_error(data, &err),
    };
    let devices: Vec<_> = io.devices().collect();
    assert_eq!(devices.len(), io.device_count());
    let t = io.totals();
    assert_eq!(t.read, sum(devices.iter().map(|d| d.read)));
    assert_eq!(t.write, sum(devices.iter().map(|d| d.write)));
    assert_eq!(t.sync, sum(devices.iter().map(|d| d.sync)));
    assert_eq!(t.async_, sum(devices.iter().map(|d| d.async_)));
    assert_eq!(t.discard, sum(devices.iter().map(|d| d.discard)));
    assert_eq!(t.total, sum(devices.iter().map(|d| d.total)));
    for (i, d) in devices.iter().enumerate() {
        assert_eq!(io.device(d.device), devices.iter().find(|x| x.device == d.device).copied());
        // Consecutive entries are different devices (a run is one entry).
        if i > 0 {
            assert_ne!(devices[i - 1].device, d.device);
        }
    }
    let absent = DeviceId { major: u32::MAX, minor: u32::MAX };
    if !devices.iter().any(|d| d.device == absent) {
        assert_eq!(io.device(absent), None);
    }
    // Printed back in the kernel's layout, the devices parse to themselves.
    // An entry whose lines all had unknown operations gets one such line
    // back, so entries of one device around it do not merge.
    let mut printed = String::new();
    for d in &devices {
        writeln!(printed, "{} Unknown x", d.device).unwrap();
        for (op, v) in [
            ("Read", d.read),
            ("Write", d.write),
            ("Sync", d.sync),
            ("Async", d.async_),
            ("Discard", d.discard),
            ("Total", d.total),
        ] {
            if let Some(v) = v {
                writeln!(printed, "{} {op} {v}", d.device).unwrap();
            }
        }
    }
    if let Some(total) = io.total_line() {
        writeln!(printed, "Total {total}").unwrap();
    }
    let again = BlkioStat::parse(printed.as_bytes()).expect("the printed devices parse");
    assert_eq!(again.devices().collect::<Vec<_>>(), devices);
    assert_eq!(again.total_line(), io.total_line());
    assert_eq!(again.totals(), t);
});

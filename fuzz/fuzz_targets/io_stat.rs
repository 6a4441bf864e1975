//! `io.stat`: `IoStat::parse`, `parse_with`, `totals`, `device_count`,
//! `devices` (fully consumed), `device`, plus `DeviceId::parse` and its
//! `Display`. `parse_with` must give the same result as `parse` and hand
//! over exactly the devices `devices()` yields.
//! Checks that the lazy per-device view agrees with the validating parse:
//! same number of lines, totals equal to the per-device sums, `device(id)`
//! equal to the first line of that device.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::format::nested::NestedKeyed;
use stepmon_cgroupfs_parse::{DeviceId, IoStat};
use stepmon_fuzz::{check_error, sum_present as sum};

fn check_device_id(token: &[u8]) {
    if let Ok(id) = DeviceId::parse(token) {
        let printed = id.to_string();
        assert_eq!(DeviceId::parse(printed.as_bytes()), Ok(id));
    }
}

fuzz_target!(|data: &[u8]| {
    check_device_id(data);
    let mut handed = Vec::new();
    let one_pass = IoStat::parse_with(data, |d| handed.push(d));
    assert_eq!(one_pass, IoStat::parse(data), "parse_with != parse");
    match IoStat::parse(data) {
        Ok(io) => {
            let devices: Vec<_> = io.devices().collect();
            assert_eq!(handed, devices, "parse_with's devices != devices()");
            assert_eq!(devices.len(), io.device_count(), "devices().count() != device_count()");
            // Every line is a device line (none skipped by the lazy view).
            assert_eq!(NestedKeyed::new(data).count(), io.device_count());
            let t = io.totals();
            assert_eq!(t.rbytes, sum(devices.iter().map(|d| d.rbytes)));
            assert_eq!(t.wbytes, sum(devices.iter().map(|d| d.wbytes)));
            assert_eq!(t.rios, sum(devices.iter().map(|d| d.rios)));
            assert_eq!(t.wios, sum(devices.iter().map(|d| d.wios)));
            assert_eq!(t.dbytes, sum(devices.iter().map(|d| d.dbytes)));
            assert_eq!(t.dios, sum(devices.iter().map(|d| d.dios)));
            for d in &devices {
                let first = devices.iter().find(|x| x.device == d.device).copied();
                assert_eq!(io.device(d.device), first);
                check_device_id(d.device.to_string().as_bytes());
                if let Some(vrate) = d.cost_vrate {
                    let _ = (vrate.as_f64(), vrate.to_string());
                }
                if let Some(depth) = d.iolat_depth {
                    assert_eq!(depth.is_max(), depth.value().is_none());
                }
            }
            let absent = DeviceId { major: u32::MAX, minor: u32::MAX };
            if !devices.iter().any(|d| d.device == absent) {
                assert_eq!(io.device(absent), None);
            }
            // Re-parsing is deterministic.
            assert_eq!(IoStat::parse(data), Ok(io));
        }
        Err(err) => check_error(data, &err),
    }
});

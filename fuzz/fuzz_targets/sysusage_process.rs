//! `/proc/PID/{stat,status,io}` (crate `stepmon-sysusage`): `ProcStat`,
//! `ProcStatus` and `ProcIo::parse` on any bytes, never a panic. For
//! `stat` checked against a model of proc(5)'s layout: the command is what
//! lies between the first `(` and the *last* `)`, the pid before it, and a
//! parsed value printed back the way the kernel prints it parses to the
//! same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_sysusage::parse::{ProcIo, ProcStat, ProcStatus};

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = ProcStat::parse(data) {
        let open = data.iter().position(|&b| b == b'(').expect("a parsed stat has a '('");
        let close = data.iter().rposition(|&b| b == b')').expect("a parsed stat has a ')'");
        assert_eq!(s.comm, &data[open + 1..close], "comm is between the first '(' and the last ')'");
        let printed = format!(
            "{} ({}) S {} 0 0 0 -1 0 {} 0 {} 0 {} {} 0 0 20 0 {} 0 {} 0 0\n",
            s.pid,
            String::from_utf8_lossy(s.comm),
            s.ppid,
            s.minflt,
            s.majflt,
            s.utime,
            s.stime,
            s.threads,
            s.start_ticks
        );
        if std::str::from_utf8(s.comm).is_ok() {
            let again = ProcStat::parse(printed.as_bytes()).expect("printed back parses");
            assert_eq!(
                (again.pid, again.ppid, again.minflt, again.majflt, again.utime, again.stime, again.threads),
                (s.pid, s.ppid, s.minflt, s.majflt, s.utime, s.stime, s.threads)
            );
            assert_eq!(again.start_ticks, s.start_ticks);
        }
    }
    if let Ok(s) = ProcStatus::parse(data) {
        if let Some(kib) = s.vm_hwm_kib {
            let again = ProcStatus::parse(format!("VmHWM:\t{kib} kB\n").as_bytes()).expect("printed back parses");
            assert_eq!(again.vm_hwm_kib, Some(kib));
        }
    }
    if let Ok(io) = ProcIo::parse(data) {
        if let (Some(r), Some(w)) = (io.read_bytes, io.write_bytes) {
            let again = ProcIo::parse(format!("read_bytes: {r}\nwrite_bytes: {w}\n").as_bytes()).expect("printed back");
            assert_eq!((again.read_bytes, again.write_bytes), (Some(r), Some(w)));
        }
    }
});

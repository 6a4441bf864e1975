//! Taskstats over generic netlink: `Messages` (and `Message::error`),
//! `ctrl::Family::parse`, `TaskstatsReply::parse` and every `TaskStats`
//! accessor, on one datagram. Checked against a small model: a message walk
//! covers the input with 4-byte aligned steps, a record's fields read the
//! bytes at their offsets, and a field is present exactly when the record
//! holds all of its bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_taskstats_parse::ctrl::Family;
use stepmon_taskstats_parse::genl::{Attrs, GenlMessage};
use stepmon_taskstats_parse::netlink::{HEADER_LEN, Messages};
use stepmon_taskstats_parse::taskstats::{TaskStats, TaskstatsReply};

fn model_u64(bytes: &[u8], at: usize) -> Option<u64> {
    bytes.get(at..at + 8).map(|b| u64::from_ne_bytes(b.try_into().unwrap()))
}

fn check_record(s: TaskStats<'_>) {
    let b = s.as_bytes();
    assert!(b.len() >= TaskStats::MIN_LEN);
    assert_eq!(s.hiwater_rss_kib(), model_u64(b, 200));
    assert_eq!(s.write_bytes(), model_u64(b, 256));
    assert_eq!(s.irq_delay_total_ns(), model_u64(b, 424));
    assert_eq!(s.pid().map(u64::from), b.get(128..132).map(|x| u64::from(u32::from_ne_bytes(x.try_into().unwrap()))));
    assert!(s.comm().len() <= 32 && !s.comm().contains(&0));
    let _ = (s.version(), s.exit_code(), s.flags(), s.nice(), s.uid(), s.gid(), s.ppid(), s.btime(), s.tgid());
    let _ = (s.start_seconds(), s.cpu_count(), s.cpu_delay_total_ns(), s.blkio_count(), s.blkio_delay_total_ns());
    let _ = (s.swapin_count(), s.swapin_delay_total_ns(), s.cpu_run_real_total_ns(), s.cpu_run_virtual_total_ns());
    let _ = (s.elapsed_us(), s.utime_us(), s.stime_us(), s.minor_faults(), s.major_faults(), s.hiwater_vm_kib());
    let _ = (s.read_chars(), s.write_chars(), s.read_bytes(), s.cancelled_write_bytes(), s.voluntary_switches());
    let _ = (s.involuntary_switches(), s.freepages_count(), s.freepages_delay_total_ns(), s.thrashing_count());
    let _ = (s.thrashing_delay_total_ns(), s.compact_count(), s.compact_delay_total_ns());
    let _ = (s.thread_group_elapsed_ns(), s.wpcopy_count(), s.wpcopy_delay_total_ns(), s.irq_count());
}

fuzz_target!(|data: &[u8]| {
    let mut covered = 0usize;
    for message in Messages::new(data) {
        let Ok(m) = message else { break };
        assert_eq!(m.payload.len() + HEADER_LEN, m.header.len as usize);
        covered += (m.header.len as usize).next_multiple_of(4).min(data.len() - covered);
        if let Some(Ok(e)) = m.error() {
            let _ = e.request;
        }
        if let Ok(f) = Family::parse(m.payload) {
            assert!(!f.name.contains(&0));
        }
        if let Ok(g) = GenlMessage::parse(m.payload) {
            for attr in g.attrs().flatten() {
                let _ = (attr.u16(), attr.u32(), attr.c_str());
                assert!(attr.nested().count() <= attr.payload.len() / 4 + 1);
            }
        }
        if let Ok(r) = TaskstatsReply::parse(m.payload) {
            for (_, s) in [r.pid, r.tgid].into_iter().flatten() {
                check_record(s);
            }
        }
    }
    assert!(covered <= data.len());
    assert!(Attrs::new(data).count() <= data.len() / 4 + 1);
    if let Ok(s) = TaskStats::new(data) {
        check_record(s);
    }
});

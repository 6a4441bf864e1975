//! Parsing allocates nothing: measured with `allocation_counter::measure`
//! (a counting `#[global_allocator]` linked into this test binary only).
//! A control test shows the counter can fail.

use std::hint::black_box;

use allocation_counter::measure;
use stepmon_taskstats_parse::cn_proc::ProcEvent;
use stepmon_taskstats_parse::ctrl::Family;
use stepmon_taskstats_parse::netlink::Messages;
use stepmon_taskstats_parse::taskstats::TaskstatsReply;

#[test]
#[allow(clippy::vec_init_then_push)] // the push is the allocation under test
fn control_the_counter_sees_one_vec_push() {
    let info = measure(|| {
        let mut v: Vec<u8> = Vec::new();
        v.push(1);
        black_box(&v);
    });
    assert_eq!(info.count_total, 1, "{info:?}");
}

#[test]
fn parsing_every_capture_does_not_allocate() {
    let mut sum = 0u64;
    let info = measure(|| {
        for datagram in [
            &include_bytes!("data/exit-thread-group.bin")[..],
            include_bytes!("data/getfamily-reply.bin"),
            include_bytes!("data/cn-fork.bin"),
        ] {
            for m in Messages::new(black_box(datagram)).flatten() {
                if let Ok(r) = TaskstatsReply::parse(m.payload) {
                    sum += r.pid.and_then(|(_, s)| s.hiwater_rss_kib()).unwrap_or(0);
                }
                sum += Family::parse(m.payload).map_or(0, |f| u64::from(f.id));
                sum += ProcEvent::parse(m.payload).map_or(0, |e| e.timestamp_ns & 1);
            }
        }
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    assert!(sum > 0);
}

//! Any bytes: no parser panics, iterators end, and a record built from
//! arbitrary field values reads them back at their documented offsets.

use proptest::prelude::*;
use stepmon_taskstats_parse::cn_proc::ProcEvent;
use stepmon_taskstats_parse::ctrl::Family;
use stepmon_taskstats_parse::genl::Attrs;
use stepmon_taskstats_parse::netlink::Messages;
use stepmon_taskstats_parse::taskstats::{TaskStats, TaskstatsReply};

const EXIT: &[u8] = include_bytes!("data/exit-thread-group.bin");

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1400)) {
        let mut n = 0usize;
        for m in Messages::new(&bytes) {
            n += 1;
            prop_assert!(n <= bytes.len() / 16 + 1, "more messages than 16-byte headers");
            let Ok(m) = m else { continue };
            let _ = m.error();
            let _ = Family::parse(m.payload);
            let _ = ProcEvent::parse(m.payload);
            if let Ok(r) = TaskstatsReply::parse(m.payload) {
                for (_, s) in [r.pid, r.tgid].into_iter().flatten() {
                    let _ = (s.comm(), s.pid(), s.irq_delay_total_ns(), s.start_seconds());
                }
            }
        }
        prop_assert!(Attrs::new(&bytes).count() <= bytes.len() / 4 + 1);
        let _ = TaskStats::new(&bytes).map(|s| (s.version(), s.hiwater_rss_kib(), s.tgid()));
    }

    #[test]
    fn a_mutated_capture_never_panics(at in 0..EXIT.len(), value in any::<u8>(), cut in 0..=EXIT.len()) {
        let mut bytes = EXIT.to_vec();
        bytes[at] = value;
        bytes.truncate(cut);
        for m in Messages::new(&bytes).flatten() {
            let _ = TaskstatsReply::parse(m.payload);
        }
    }

    #[test]
    fn fields_read_back_where_the_header_puts_them(
        pid in any::<u32>(), ppid in any::<u32>(), rss in any::<u64>(), wb in any::<u64>(), len in 140usize..600
    ) {
        let mut record = vec![0u8; len];
        let mut put = |at: usize, b: &[u8]| if at + b.len() <= len { record[at..at + b.len()].copy_from_slice(b) };
        put(128, &pid.to_ne_bytes());
        put(132, &ppid.to_ne_bytes());
        put(200, &rss.to_ne_bytes());
        put(256, &wb.to_ne_bytes());
        let s = TaskStats::new(&record).unwrap();
        prop_assert_eq!((s.pid(), s.ppid()), (Some(pid), Some(ppid)));
        prop_assert_eq!(s.hiwater_rss_kib(), (len >= 208).then_some(rss));
        prop_assert_eq!(s.write_bytes(), (len >= 264).then_some(wb));
    }
}

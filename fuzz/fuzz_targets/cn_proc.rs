//! Proc connector events: `ProcEvent::parse` on a connector message's
//! payload, checked against a model of `struct cn_msg` + `struct
//! proc_event`: it succeeds only for the proc connector's index with its
//! data inside the input, and a fork's pids are the data's four words.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_taskstats_parse::cn_proc::{CN_IDX_PROC, CN_MSG_LEN, EventKind, ProcEvent};
use stepmon_taskstats_parse::netlink::Messages;

fn word(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|x| u32::from_ne_bytes(x.try_into().unwrap()))
}

fn check(payload: &[u8]) {
    let Ok(event) = ProcEvent::parse(payload) else { return };
    assert_eq!(word(payload, 0), Some(CN_IDX_PROC));
    let len = usize::from(u16::from_ne_bytes(payload[16..18].try_into().unwrap()));
    assert!(CN_MSG_LEN + len <= payload.len());
    let data = &payload[CN_MSG_LEN..CN_MSG_LEN + len];
    assert_eq!(word(data, 4), Some(event.cpu));
    if let EventKind::Fork { parent_pid, parent_tgid, child_pid, child_tgid } = event.kind {
        assert_eq!(
            [Some(parent_pid), Some(parent_tgid), Some(child_pid), Some(child_tgid)],
            [word(data, 16), word(data, 20), word(data, 24), word(data, 28)]
        );
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    for m in Messages::new(data).flatten() {
        check(m.payload);
    }
});

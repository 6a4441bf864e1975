//! `/proc/PID/cmdline` (crate `stepmon-sysusage`): `CmdLine` and its `Args`
//! on any bytes, never a panic, checked against a model of
//! proc_pid_cmdline(5)'s layout: every argument is followed by a NUL except
//! perhaps the last, so joining the arguments with NULs gives back the input
//! without its final NUL, and an empty input has no arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_sysusage::parse::CmdLine;

fuzz_target!(|data: &[u8]| {
    let line = CmdLine::new(data);
    assert_eq!(line.as_bytes(), data);
    let args: Vec<&[u8]> = line.args().collect();
    assert_eq!(line.len(), args.len());
    assert_eq!(line.is_empty(), args.is_empty());
    assert_eq!(line.argv0(), args.first().copied());
    assert!(args.iter().all(|a| !a.contains(&0)), "an argument holds no NUL");
    let body = data.strip_suffix(b"\0").unwrap_or(data);
    assert_eq!(args.join(&0u8), body, "the arguments joined by NULs are the input");
    // One argument per NUL, plus the unterminated rest.
    let nuls = data.iter().filter(|&&b| b == 0).count();
    assert_eq!(args.len(), nuls + usize::from(!data.is_empty() && !data.ends_with(b"\0")));
    let mut it = line.args();
    let (low, high) = it.size_hint();
    assert!(low <= args.len() && high.is_some_and(|h| h >= args.len()));
    it.by_ref().for_each(drop);
    assert_eq!(it.next(), None, "fused");
});

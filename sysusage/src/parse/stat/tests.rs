use super::*;

const HOST: &[u8] = b"cpu  991 0 1182 38460 93 0 21 7 0 0\n\
cpu0 229 0 543 19571 7 0 5 2 0 0\n\
cpu1 761 0 638 18889 86 0 15 5 0 0\n\
intr 98611 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 14 0 0\n\
ctxt 231363\n\
btime 1796005186\n\
processes 4682\n\
procs_running 1\n\
procs_blocked 0\n\
softirq 51212 0 6742 4 4623 6218 0 137 17545 0 15943\n";

#[test]
fn host_capture() {
    let s = KernelStat::parse(HOST).unwrap();
    let total = s.total.unwrap();
    assert_eq!((total.user, total.system, total.idle, total.steal), (991, 1182, 38460, Some(7)));
    let cpus: Vec<_> = s.per_cpu().collect();
    assert_eq!(cpus.len(), 2);
    assert_eq!((cpus[1].cpu, cpus[1].times.iowait), (1, Some(86)));
    assert_eq!(s.counters.intr_total, Some(98_611));
    assert_eq!(s.counters.ctxt, Some(231_363));
    assert_eq!(s.counters.btime, Some(1_796_005_186));
    assert_eq!(s.counters.processes, Some(4682));
    assert_eq!((s.counters.procs_running, s.counters.procs_blocked), (Some(1), Some(0)));
    let soft = s.softirq.unwrap();
    assert_eq!((soft.total, soft.timer, soft.rcu), (51_212, Some(6742), Some(15_943)));
    assert_eq!(s.cpu(1).unwrap().user, 761);
    assert_eq!(s.cpu(2), None);
}

#[test]
fn errors_are_located() {
    let err = |i: &[u8]| {
        let e = KernelStat::parse(i).unwrap_err();
        (e.kind, e.line, e.offset)
    };
    assert_eq!(err(b""), (ErrorKind::Empty, 1, 0));
    assert_eq!(err(b"cpu  1 2 3 4\ncpu0 1 2\n"), (ErrorKind::MissingField, 2, 17));
    assert_eq!(err(b"cpu  1 2 3 4\nctxt\n"), (ErrorKind::MissingField, 2, 17));
    assert_eq!(err(b"ctxt 1 2\n"), (ErrorKind::TrailingData, 1, 7));
    assert_eq!(err(b"ctxt 1\n\nbtime 2\n"), (ErrorKind::EmptyLine, 2, 7));
    assert_eq!(err(b"ctxt 1\r\n"), (ErrorKind::InvalidNumber, 1, 5));
    assert_eq!(err(b"cpu99999999999 1 2 3 4\n"), (ErrorKind::Overflow, 1, 0));
    assert_eq!(err(b"intr x 1 2\n"), (ErrorKind::InvalidNumber, 1, 5));
    assert_eq!(err(b"softirq\n"), (ErrorKind::MissingField, 1, 7));
    assert_eq!(err(b"ctxt 1\npag"), (ErrorKind::MissingField, 2, 10));
}

#[test]
fn parse_with_sees_what_per_cpu_yields() {
    let mut seen = Vec::new();
    let s = KernelStat::parse_with(HOST, |c| seen.push(c)).unwrap();
    assert_eq!(seen, s.per_cpu().collect::<Vec<_>>());
    assert_eq!(s, KernelStat::parse(HOST).unwrap());
    let mut seen = Vec::new();
    let e = KernelStat::parse_with(b"cpu0 1 2 3 4\ncpu1 1 2 3 4\ncpu2 x\n", |c| seen.push(c.cpu)).unwrap_err();
    assert_eq!((e.kind, e.line, seen), (ErrorKind::InvalidNumber, 3, vec![0, 1]));
}

/// `parse_with` with the general path only: the specification the fast
/// path must agree with.
fn parse_general(input: &[u8]) -> Result<(KernelStat<'_>, Vec<PerCpuTimes>)> {
    let mut cpus = Vec::new();
    let mut out = KernelStat::parse(b"x 1").unwrap();
    let mut number = 0;
    let mut rest = input;
    if input.is_empty() {
        return Err(ParseError::new(ErrorKind::Empty, 1, 0));
    }
    while !rest.is_empty() {
        number += 1;
        let (bytes, next) = split_line(rest);
        let item = general_line(&Line { bytes, number, start: input.len() - rest.len() })?;
        store(item, &mut out, &mut |c| cpus.push(c));
        rest = next;
    }
    Ok((out, cpus))
}

fn check_against_general(input: &[u8]) {
    let mut cpus = Vec::new();
    let fast = KernelStat::parse_with(input, |c| cpus.push(c));
    match (fast, parse_general(input)) {
        (Ok(f), Ok((g, g_cpus))) => {
            assert_eq!((f.total, f.counters, f.softirq), (g.total, g.counters, g.softirq), "{input:?}");
            assert_eq!(cpus, g_cpus, "{input:?}");
            assert_eq!(f.per_cpu().collect::<Vec<_>>(), g_cpus, "{input:?}");
        }
        (Err(f), Err(g)) => assert_eq!(f, g, "{input:?}"),
        (f, g) => panic!("{input:?}: fast {f:?}, general {g:?}"),
    }
}

#[test]
fn fast_path_agrees_with_the_general_path() {
    let inputs: [&[u8]; 4] = [
        HOST,
        b"cpu  1 2 3 4 5 6 7 8 9 10 11\ncpu12 99999999999999999999 1 1 1\ncpu1  1\t2 3 4 \nintr 5\nintr 6 x\n",
        b"softirq 1 2 3 4 5 6 7 8 9 10 11 12\nctxt 18446744073709551615\nbtime 1 \nprocs_blocked 01\n",
        // 19 digits (the most the fast path reads) where the digit
        // window and the input's end meet at every cut.
        b"cpu  9999999999999999999 1 2 3\ncpu0 1 2 3 4 5 6 7 8 9 1234567890123456789\ncpu4294967296 1 2 3 4\n\
          intr 1234567890123456789 0\nsoftirq 9999999999999999999 1\nctxt 1234567890123456789\n",
    ];
    // Every cut, and every byte replaced by each of a few troublemakers.
    for input in inputs {
        stepmon_cgroupfs_parse::testing::for_each_damaged(&mut input.to_vec(), b" \t\n09x\r-:", check_against_general);
    }
}

#[test]
fn intr_columns_are_not_parsed() {
    // Garbage after the total is never looked at: proof that the line is skipped.
    let s = KernelStat::parse(b"intr 12 not numbers at all\nctxt 3\n").unwrap();
    assert_eq!((s.counters.intr_total, s.counters.ctxt), (Some(12), Some(3)));
}

#[test]
fn unknown_lines_and_no_cpu_lines() {
    let s = KernelStat::parse(b"page 5741 1808\ndisk_io: (2,0):(31,30,5764,1,2)\ncpufreq x\nctxt 1\n").unwrap();
    assert_eq!((s.total, s.cpu_count(), s.per_cpu().next()), (None, 0, None));
    assert_eq!(s.counters.ctxt, Some(1));
}

#[test]
fn non_contiguous_cpu_lines() {
    let s = KernelStat::parse(b"cpu0 1 0 0 0\nctxt 5\ncpu3 2 0 0 0\n").unwrap();
    let got: Vec<_> = s.per_cpu().map(|c| (c.cpu, c.times.user)).collect();
    assert_eq!(got, [(0, 1), (3, 2)]);
    assert_eq!(s.per_cpu().len(), 2);
}

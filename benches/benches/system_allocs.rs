//! Allocations per call of every case of `stepmon_benches::system` and
//! `stepmon_benches::step` (the same closures the timing benches run),
//! under a counting global allocator. Fails if one of our parser cases
//! allocates (the probes build owned samples, so they are only counted).
//!
//! Under `cargo bench` it also writes `allocs_system.tsv` next to
//! criterion's results (`$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`,
//! else `<target dir of this binary>/criterion`) for `scripts/bench-table`.
//! Under `cargo test` it only checks.

use std::hint::black_box;
use std::process::ExitCode;

use stepmon_benches::alloc_report::{CALLS, criterion_dir, per_call};

use stepmon_benches::runner::{GroupInfo, Runner, Side};
use stepmon_benches::{step, system};

struct Row {
    group: GroupInfo,
    function: &'static str,
    side: Side,
    allocs: u64,
    bytes: u64,
}

struct Counting {
    group: GroupInfo,
    rows: Vec<Row>,
}

impl Runner for Counting {
    fn case<T: std::fmt::Debug>(&mut self, function: &'static str, side: Side, mut run: impl FnMut() -> T) {
        // One call outside the count, so one-time lazy initialisation (of std,
        // of a peer, or a probe's buffers growing to fit) is not charged.
        black_box(run());
        let info = allocation_counter::measure(|| {
            for _ in 0..CALLS {
                black_box(run());
            }
        });
        self.rows.push(Row { group: self.group, function, side, allocs: info.count_total, bytes: info.bytes_total });
    }
}

fn main() -> ExitCode {
    let mut rows = Vec::new();
    let groups = system::GROUPS
        .iter()
        .map(|g| (g.info, Box::new(move |r: &mut Counting| g.cases(r)) as Box<dyn Fn(&mut Counting) -> _>));
    let groups = groups.chain(
        step::GROUPS
            .iter()
            .map(|g| (g.info, Box::new(move |r: &mut Counting| g.cases(r)) as Box<dyn Fn(&mut Counting) -> _>)),
    );
    for (info, cases) in groups {
        let mut sink = Counting { group: info, rows: Vec::new() };
        if let Err(e) = cases(&mut sink) {
            eprintln!("FAIL: cannot set up {}: {e}", info.name);
            return ExitCode::FAILURE;
        }
        rows.append(&mut sink.rows);
    }

    let mut tsv = String::from("group\tfile\tfunction\tside\tallocs_per_call\tbytes_per_call\n");
    println!("{:<18} {:<30} {:<9} {:>12} {:>12}", "group", "function", "side", "allocs/call", "bytes/call");
    for r in &rows {
        let (allocs, bytes) = (per_call(r.allocs), per_call(r.bytes));
        println!("{:<18} {:<30} {:<9} {:>12} {:>12}", r.group.name, r.function, r.side.name(), allocs, bytes);
        tsv.push_str(&format!(
            "{}\t{}\t{}\t{}\t{allocs}\t{bytes}\n",
            r.group.name,
            r.group.file,
            r.function,
            r.side.name()
        ));
    }

    // `cargo bench` passes `--bench`; `cargo test` does not.
    if std::env::args().any(|a| a == "--bench") {
        match criterion_dir() {
            Some(out) => {
                let path = out.join("allocs_system.tsv");
                match std::fs::create_dir_all(&out).and_then(|()| std::fs::write(&path, &tsv)) {
                    Ok(()) => println!("wrote {}", path.display()),
                    Err(e) => eprintln!("cannot write {}: {e}", path.display()),
                }
            }
            None => eprintln!("cannot find criterion's output directory; allocs_system.tsv not written"),
        }
    }

    let must_not = |r: &&Row| r.group.zero_alloc && r.side == Side::Ours;
    let allocating: Vec<_> = rows.iter().filter(must_not).filter(|r| r.allocs != 0).collect();
    if allocating.is_empty() {
        println!("ok: none of our {} parser cases allocates", rows.iter().filter(must_not).count());
        ExitCode::SUCCESS
    } else {
        for r in allocating {
            eprintln!("FAIL: {}/{} allocates {} times per call", r.group.name, r.function, per_call(r.allocs));
        }
        ExitCode::FAILURE
    }
}

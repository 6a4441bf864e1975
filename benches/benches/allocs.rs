//! Allocations per call: runs every case of every group (the same code the
//! timing bench runs) under a counting global allocator and prints
//! allocations and bytes per call. Fails if one of our cases allocates.
//!
//! Under `cargo bench` it also writes `allocs.tsv` next to criterion's
//! results (`$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else
//! `<target dir of this binary>/criterion`) for `scripts/bench-table`.
//! Under `cargo test` it only checks.

use std::hint::black_box;
use std::process::ExitCode;

use stepmon_benches::alloc_report::{CALLS, criterion_dir, per_call};

use stepmon_benches::cases::{GROUPS, Side, Sink};
use stepmon_benches::inputs::{Fixture, TmpDir};

struct Row {
    group: &'static str,
    file: &'static str,
    function: &'static str,
    side: Side,
    allocs: u64,
    bytes: u64,
}

struct Counting<'a> {
    group: &'static str,
    file: &'static str,
    fx: &'a Fixture,
    rows: Vec<Row>,
}

impl Sink for Counting<'_> {
    fn case<T: std::fmt::Debug>(&mut self, function: &'static str, side: Side, run: impl Fn(&Fixture) -> T) {
        // One call outside the count, so one-time lazy initialisation (of std
        // or of a peer) is not charged to every call.
        black_box(run(self.fx));
        let info = allocation_counter::measure(|| {
            for _ in 0..CALLS {
                black_box(run(black_box(self.fx)));
            }
        });
        self.rows.push(Row {
            group: self.group,
            file: self.file,
            function,
            side,
            allocs: info.count_total,
            bytes: info.bytes_total,
        });
    }
}

fn main() -> ExitCode {
    let dir = TmpDir::new().expect("cannot create the tmpfs directory for the file-based cases");
    let mut rows = Vec::new();
    for g in GROUPS {
        let fx = Fixture::new(g.input, dir.path()).expect("cannot write the tmpfs copy");
        let mut sink = Counting { group: g.name, file: g.input.file, fx: &fx, rows: Vec::new() };
        g.cases(&mut sink);
        rows.append(&mut sink.rows);
    }

    let mut tsv = String::from("group\tfile\tfunction\tside\tallocs_per_call\tbytes_per_call\n");
    println!("{:<18} {:<36} {:<9} {:>12} {:>12}", "group", "function", "side", "allocs/call", "bytes/call");
    for r in &rows {
        let (allocs, bytes) = (per_call(r.allocs), per_call(r.bytes));
        println!("{:<18} {:<36} {:<9} {:>12} {:>12}", r.group, r.function, r.side.name(), allocs, bytes);
        tsv.push_str(&format!("{}\t{}\t{}\t{}\t{allocs}\t{bytes}\n", r.group, r.file, r.function, r.side.name()));
    }

    // `cargo bench` passes `--bench`; `cargo test` does not.
    if std::env::args().any(|a| a == "--bench") {
        match criterion_dir() {
            Some(out) => {
                let path = out.join("allocs.tsv");
                match std::fs::create_dir_all(&out).and_then(|()| std::fs::write(&path, &tsv)) {
                    Ok(()) => println!("wrote {}", path.display()),
                    Err(e) => eprintln!("cannot write {}: {e}", path.display()),
                }
            }
            None => eprintln!("cannot find criterion's output directory; allocs.tsv not written"),
        }
    }

    let allocating: Vec<_> = rows.iter().filter(|r| r.side == Side::Ours && r.allocs != 0).collect();
    if allocating.is_empty() {
        println!("ok: none of our {} cases allocates", rows.iter().filter(|r| r.side == Side::Ours).count());
        ExitCode::SUCCESS
    } else {
        for r in allocating {
            eprintln!("FAIL: {}/{} allocates {} times per call", r.group, r.function, per_call(r.allocs));
        }
        ExitCode::FAILURE
    }
}

//! A process tree of known memory, for the builder's tests and benchmarks:
//! the parent holds 10 MiB while its three children hold 20, 30 and 40 MiB
//! at the same time (100 MiB at the peak: the parent waits until all three
//! are resident), for `HOLD_MS` more (default 100 ms).
//!
//! `tree` runs the whole tree; `tree hold MIB` is one child.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

const MIB: usize = 1 << 20;

/// `mib` MiB, every page written (a zeroed allocation would not be resident).
fn touched(mib: usize) -> Vec<u8> {
    vec![1u8; mib * MIB]
}

fn hold() -> Duration {
    let ms = std::env::var("HOLD_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    Duration::from_millis(ms)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, verb, mib] = args.as_slice()
        && verb == "hold"
    {
        // Resident, then ready; held until the parent closes stdin.
        let memory = touched(mib.parse().expect("MiB"));
        println!("ready");
        std::io::stdout().flush().expect("stdout");
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::hint::black_box(&memory);
        return;
    }
    let memory = touched(10);
    let me = std::env::current_exe().expect("own path");
    let mut children: Vec<_> = [20, 30, 40]
        .iter()
        .map(|mib| {
            Command::new(&me)
                .args(["hold", &mib.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    // All four hold their memory at once from here.
    for child in &mut children {
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().expect("piped")).read_line(&mut line).expect("ready");
        assert_eq!(line.trim(), "ready");
    }
    std::thread::sleep(hold());
    for mut child in children {
        drop(child.stdin.take());
        assert!(child.wait().expect("wait").success());
    }
    std::hint::black_box(&memory);
}

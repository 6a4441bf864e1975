//! A job of 200 steps of 10 samples (the `job_report` bench's) in every
//! format, pinned by a digest of each output: restructuring the job's
//! model or views for speed must not change a byte of what they print.
//!
//! An intended change of an output changes its digest: print the new ones
//! with `STEPMON_PRINT_DIGESTS=1 cargo test -p stepmon-export --test
//! job_large -- --nocapture`, check the outputs, and update the table.
//! `STEPMON_WRITE_JOB=FILE` also writes the job record to `FILE` (the
//! input of the `hyperfine` runs of `stepmon report` in benches/README.md).

#[path = "large/job_record.rs"]
mod large;

use stepmon_export::Format;
use stepmon_export::job as views;
use stepmon_report::job::{self, Entry};

/// FNV-1a, 64 bits (<http://www.isthe.com/chongo/tech/comp/fnv/>): a digest
/// that is the same on every platform and toolchain, unlike `std`'s hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// Each format's output: its digest and length, bytes.
const DIGESTS: [(&str, u64, usize); 10] = [
    ("text", 0xc36f_cbc0_ce57_689f, 35082),
    ("json", 0x34bb_3120_122e_e600, 121_012),
    ("trace", 0xfee5_38de_ad7e_46b6, 2_121_489),
    ("openmetrics", 0xd6fc_1843_d067_0522, 1_122_648),
    ("prometheus", 0x89b5_f89a_e982_6b05, 1_121_783),
    ("gitlab-metrics", 0xf3d1_c5b4_3bcb_9b85, 167_028),
    ("markdown", 0xe531_743a_bbcd_96b1, 17582),
    ("markdown-svg", 0xe531_743a_bbcd_96b1, 17582),
    ("html", 0x7b5c_48f9_3a37_1e2f, 209_645),
    ("svg", 0x6fa0_d884_1b1d_f0f9, 119_777),
];

#[test]
fn every_format_of_a_200_step_job_is_unchanged() {
    let text = large::record(200, 10);
    if let Some(path) = std::env::var_os("STEPMON_WRITE_JOB") {
        std::fs::write(path, &text).expect("write the job record");
    }
    let record = job::read(&text);
    assert_eq!(record.steps.len(), 200);
    assert!(record.lost.is_empty() && record.unknown.is_empty());
    let entries: Vec<Entry> = record.steps.into_iter().map(|s| Entry::from_job(s, "job.jsonl".to_owned())).collect();
    let print = std::env::var("STEPMON_PRINT_DIGESTS").is_ok_and(|v| v == "1");
    let mut seen = Vec::new();
    for (name, format) in Format::ALL {
        let out = views::render(format, &entries, &[]);
        let (digest, len) = (fnv1a(out.as_bytes()), out.len());
        if print {
            println!("    (\"{name}\", 0x{digest:016x}, {len}),");
        }
        seen.push((name, digest, len));
    }
    let expected: Vec<(&str, u64, usize)> = DIGESTS.to_vec();
    assert_eq!(seen, expected);
}

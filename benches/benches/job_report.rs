//! `stepmon report` of a job: a record of 200 steps with 10 samples each
//! (and 10 machine samples each), read and rendered in each format — what
//! the CLI does after reading the file (`job::read`, `Entry::of_job`, the
//! job's views). The steps are copies of a real recorded step
//! (`report/tests/data/job/recorded.jsonl`: every field a real sample has),
//! a second apart.
//!
//! `cargo bench -p stepmon-benches --bench job_report`.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use stepmon_export::Format;
use stepmon_export::job as views;
use stepmon_report::job::{self, Entry};

/// The job the report tests pin (`export/tests/job_large.rs`), made by the
/// same code.
#[path = "../../export/tests/large/job_record.rs"]
mod large;

const STEPS: usize = 200;
const SAMPLES: usize = 10;

fn report(text: &str, format: Format) -> String {
    let record = job::read(text);
    let entries: Vec<Entry> = record.steps.into_iter().map(|s| Entry::from_job(s, "job.jsonl".to_owned())).collect();
    views::render(format, &entries, &[])
}

fn job_report(c: &mut Criterion) {
    let text = large::record(STEPS, SAMPLES);
    assert_eq!(job::read(&text).steps.len(), STEPS);
    let mut group = c.benchmark_group("job_report_200x10");
    for (name, format) in Format::ALL {
        group.bench_function(name, |b| b.iter(|| report(std::hint::black_box(&text), format)));
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    targets = job_report
}
criterion_main!(benches);

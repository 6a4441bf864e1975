//! The job's HTML page at the scale of a large build: a record of 10,000
//! steps ended in brief (`large::record_in_brief`: copies of real recorded
//! steps, three failed, one thirty times the longest, the last
//! interrupted) is a page of at most 5 MB with a row for every step, one
//! timeline, and a section only for each step that matters — which
//! headless Chromium loads and finds, every link to a section resolving.
//! A small job keeps every step's section.
//!
//! `STEPMON_WRITE_JOB=FILE` also writes the 10,000-step record to `FILE`
//! (the input of the `stepmon report --format html` runs in
//! benches/README.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[path = "large/job_record.rs"]
mod large;

use common::chromium::{Chromium, chromium_or_skip};
use stepmon_export::job::html::{EVERY_STEP_UP_TO, ROWS_PER_TABLE, render};
use stepmon_report::job::notable::{TOP, Why, notable};
use stepmon_report::job::{self, Entry, table};

const STEPS: usize = 10_000;

fn entries(steps: usize) -> Vec<Entry> {
    let text = large::record_in_brief(steps);
    if steps == STEPS
        && let Some(path) = std::env::var_os("STEPMON_WRITE_JOB")
    {
        std::fs::write(path, &text).expect("write the job record");
    }
    let record = job::read(&text);
    assert_eq!(record.steps.len(), steps);
    assert!(record.lost.is_empty() && record.unknown.is_empty());
    record.steps.into_iter().map(|s| Entry::from_job(s, "job.jsonl".to_owned())).collect()
}

/// The places (from 1) of the sections of `page`, in order.
fn section_places(page: &str) -> Vec<usize> {
    page.match_indices("<section class=\"step\" id=\"step-")
        .map(|(at, m)| {
            let rest = &page[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

/// How many steps the timeline's bars hold (`data-steps`).
fn steps_drawn(page: &str) -> usize {
    page.match_indices(" data-steps=\"")
        .map(|(at, m)| {
            let rest = &page[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse::<usize>().unwrap()
        })
        .sum()
}

#[test]
fn a_job_of_ten_thousand_steps_is_a_small_page_with_the_steps_that_matter() {
    let entries = entries(STEPS);
    let page = render(&entries, &[]);
    eprintln!("the page of {STEPS} steps: {} bytes", page.len());
    assert!(page.len() <= 5 << 20, "the page is {} bytes", page.len());
    // A row for every step, one timeline drawing every step once.
    assert_eq!(page.matches("<tr class=\"job-step\"").count(), STEPS);
    // In parts a browser lays out as they come into view.
    assert_eq!(page.matches("<div class=\"job-rows\">\n<table class=\"job-steps\">").count(), STEPS / ROWS_PER_TABLE);
    assert_eq!(page.matches("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-timeline\"").count(), 1);
    assert_eq!(steps_drawn(&page), STEPS);
    assert!(page.contains(" steps\" data-row=\""), "plain steps merged into bars of several");
    // A section for each step that matters, none for the others.
    let job = table::job(&entries, &[]);
    let matter = notable(&job, &entries, TOP);
    let expected: Vec<usize> = matter.iter().map(|n| n.row + 1).collect();
    assert_eq!(section_places(&page), expected);
    assert!(expected.len() < 100, "{} sections", expected.len());
    assert_eq!(
        page.matches("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-chart\"").count(),
        expected.len()
    );
    // The rows are by start, which is the record's order here: step k is row k.
    for k in large::FAILED_AT {
        assert_eq!(job.steps[k].exit_code, Some(3));
        let why = &matter.iter().find(|n| n.row == k).unwrap_or_else(|| panic!("failed step {k}")).why;
        assert!(why.contains(&Why::Failed), "{why:?}");
    }
    assert_eq!(job.longest, Some(large::LONGEST_AT));
    assert!(matter.iter().any(|n| n.row == large::LONGEST_AT && n.why.contains(&Why::Longest)));
    assert_eq!(job.steps[STEPS - 1].status, "interrupted");
    assert!(matter.iter().any(|n| n.row == STEPS - 1 && n.why.contains(&Why::Interrupted)));
    // Each section says why; each is linked from its row and its bar.
    assert_eq!(page.matches("<p class=\"why\">why: ").count(), expected.len());
    for place in &expected {
        assert_eq!(page.matches(&format!("href=\"#step-{place}\"")).count(), 2, "#{place}");
    }
}

/// `--format svg` of the same job: the timeline on lanes and a chart only
/// for each step that matters, each the target of its bar's link and
/// saying why it is there; a job of at most `EVERY_STEP_UP_TO` steps keeps
/// a row and a chart per step.
#[test]
fn a_job_of_ten_thousand_steps_is_an_svg_of_the_steps_that_matter() {
    let entries = entries(STEPS);
    let svg = stepmon_export::job::svg::render(&entries);
    eprintln!("the SVG of {STEPS} steps: {} bytes", svg.len());
    assert!(svg.len() <= 2 << 20, "the SVG is {} bytes", svg.len());
    assert_eq!(svg.matches("class=\"stepmon-timeline\"").count(), 1);
    assert_eq!(steps_drawn(&svg), STEPS);
    let job = table::job(&entries, &[]);
    let mut expected: Vec<usize> = notable(&job, &entries, TOP).iter().map(|n| n.row + 1).collect();
    expected.sort_unstable();
    let charts: Vec<usize> = svg
        .match_indices("<svg id=\"step-")
        .map(|(at, m)| {
            let rest = &svg[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    assert_eq!(charts, expected);
    assert_eq!(svg.matches("<text class=\"why\"").count(), expected.len());
    assert!(svg.contains(&format!("a job of {STEPS} steps, charts of the {} that matter", expected.len())));
    for place in &expected {
        assert_eq!(svg.matches(&format!("href=\"#step-{place}\"")).count(), 1, "#{place}");
    }
    let small = entries_small();
    let svg = stepmon_export::job::svg::render(&small);
    assert_eq!(svg.matches("<text class=\"step-name\"").count(), small.len());
    assert!(!svg.contains("<svg id=\"step-") && !svg.contains("<text class=\"why\""));
}

fn entries_small() -> Vec<Entry> {
    entries(EVERY_STEP_UP_TO)
}

#[test]
fn a_small_job_keeps_every_steps_section() {
    for steps in [EVERY_STEP_UP_TO, EVERY_STEP_UP_TO + 1] {
        let entries = entries(steps);
        let page = render(&entries, &[]);
        let places = section_places(&page);
        if steps <= EVERY_STEP_UP_TO {
            assert_eq!(places, (1..=steps).collect::<Vec<_>>());
            assert!(!page.contains("<section class=\"notable\">"));
            assert_eq!(page.matches("<table class=\"job-steps\">").count(), 1);
            assert!(!page.contains("<div class=\"job-rows\">"));
            // The timeline: a row per step with its name.
            assert_eq!(page.matches("<text class=\"step-name\"").count(), steps);
        } else {
            assert!(places.len() < steps, "{steps} steps: {} sections", places.len());
            assert!(page.contains("<section class=\"notable\">"));
            assert_eq!(steps_drawn(&page), steps);
        }
    }
}

/// Reads the page as Chromium laid it out: rows, sections, the timeline's
/// bars, and whether each link to a section finds it.
const MEASURE: &str = r##"<script>
(function () {
  const links = Array.from(document.querySelectorAll('a[href^="#step-"]'));
  const timeline = document.querySelectorAll('figure.timeline svg.stepmon-timeline');
  const bars = Array.from(document.querySelectorAll('svg.stepmon-timeline [data-steps]'));
  const result = {
    rows: document.querySelectorAll('table.job-steps tbody tr.job-step').length,
    parts: document.querySelectorAll('div.job-rows > table.job-steps').length,
    sections: Array.from(document.querySelectorAll('section.notable > section.step')).map(s => s.id),
    why: document.querySelectorAll('section.step p.why').length,
    charts: document.querySelectorAll('section.step svg.stepmon-chart').length,
    timelines: timeline.length,
    timelineHeight: timeline.length && timeline[0].getBoundingClientRect().height,
    drawn: bars.reduce((n, b) => n + Number(b.dataset.steps), 0),
    barsLaidOut: bars.filter(b => b.getBBox().width > 0).length, bars: bars.length,
    links: links.length,
    unresolved: links.filter(a => !document.getElementById(a.getAttribute('href').slice(1))).length,
  };
  const pre = document.createElement('pre');
  pre.id = 'stepmon-check';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
})();
</script>"##;

#[test]
fn chromium_loads_the_page_of_ten_thousand_steps() {
    let test = "chromium_loads_the_page_of_ten_thousand_steps";
    let Some(binary) = chromium_or_skip(test) else { return };
    let tmp = tempfile::Builder::new().prefix("stepmon-job-scale-").tempdir().unwrap();
    let chromium = Chromium::new(binary, tmp.path().join("profile"));
    let entries = entries(STEPS);
    let page = render(&entries, &[]);
    let job = table::job(&entries, &[]);
    let expected: Vec<String> = notable(&job, &entries, TOP).iter().map(|n| format!("step-{}", n.row + 1)).collect();
    // The page as written: no script, Chromium parses it whole.
    let plain = tmp.path().join("job.html");
    std::fs::write(&plain, &page).unwrap();
    let dom = chromium.dump_dom(&plain);
    assert!(!dom.contains("<script"));
    assert_eq!(dom.matches("<tr class=\"job-step\"").count(), STEPS);
    // A copy with the measuring script (and without the CSP that blocks it).
    let result = common::measured(&chromium, &page, MEASURE, tmp.path());
    eprintln!("{result}");
    assert_eq!(result["rows"], STEPS);
    assert_eq!(result["parts"], STEPS / ROWS_PER_TABLE);
    let sections: Vec<&str> = result["sections"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(sections, expected);
    assert_eq!(result["why"], expected.len());
    assert_eq!(result["charts"], expected.len());
    assert_eq!(result["timelines"], 1);
    let height = result["timelineHeight"].as_f64().unwrap();
    assert!((50.0..400.0).contains(&height), "the timeline is {height} px tall");
    assert_eq!(result["drawn"], STEPS);
    assert_eq!(result["barsLaidOut"], result["bars"]);
    assert_eq!(result["links"], 2 * expected.len());
    assert_eq!(result["unresolved"], 0);
}

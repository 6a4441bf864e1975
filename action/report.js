// The job's reports, made by the stepmon binary: its Markdown for the job
// summary, and the files for an artifact (the record as it is, the job as
// OpenMetrics). Shared by the post step and by a later use of the action.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const lib = require('./lib.js');

// GitHub refuses a step summary over 1 MiB ("Adding a job summary":
// https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/workflow-commands-for-github-actions#step-isolation-and-limits).
// The job's Markdown stays under it however many steps the job has; this
// is the check that it did.
const SUMMARY_LIMIT = 1024 * 1024;

/** `stepmon ARGS`: its stdout, or null after a warning saying why not. */
function stepmon(binary, args, what) {
  const run = spawnSync(binary, args, { encoding: 'utf8', maxBuffer: 64 * SUMMARY_LIMIT, timeout: 300_000 });
  if (run.error || run.status !== 0) {
    const why = run.error ? run.error.message : `exit status ${run.status}`;
    lib.warning(`stepmon: no ${what}: \`stepmon ${args.join(' ')}\` failed (${why}): ${(run.stderr || '').trim()}`);
    return null;
  }
  return run.stdout;
}

function summary(binary, record) {
  const markdown = stepmon(binary, ['report', record, '--format', 'markdown'], 'job summary');
  if (markdown === null) return;
  const size = Buffer.byteLength(markdown);
  if (size > SUMMARY_LIMIT) {
    lib.warning(`stepmon: the job's report is ${size} bytes, over the job summary's 1 MiB: not added (stepmon report ${record} --format html has it all)`);
    return;
  }
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (!file) {
    lib.notice('stepmon: GITHUB_STEP_SUMMARY is not set: the job report is in this log only');
    process.stdout.write(markdown);
    return;
  }
  fs.appendFileSync(file, markdown.endsWith('\n') ? markdown : `${markdown}\n`);
}

function files(binary, record, dir) {
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(record, path.join(dir, 'stepmon.jsonl'));
  const metrics = path.join(dir, 'stepmon.openmetrics.txt');
  if (stepmon(binary, ['report', record, '--format', 'openmetrics', '--output', metrics], 'OpenMetrics') !== null) {
    console.log(`wrote ${path.join(dir, 'stepmon.jsonl')} and ${metrics}`);
  }
}

module.exports = { summary, files };

// The action's post step, after the job's steps: the job's Markdown
// report appended to the job summary, and with the `files` input the job
// record and its OpenMetrics written to that directory (post steps run
// after every step of the job: an actions/upload-artifact step of the same
// job takes the files a later use of the action writes, main.js). It never
// fails the job for measuring's sake: what it cannot do is a notice or a
// warning, and it exits 0.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const lib = require('./lib.js');
const { summary, files } = require('./report.js');

function post() {
  // A later use of the action in the job (it wrote its files then): the
  // first use's post step reports the job.
  if (lib.getState('later') === 'true') return;
  const binary = lib.getState('binary');
  const record = lib.getState('record');
  if (!binary || !record) {
    lib.notice('stepmon: the main step did not install stepmon, so nothing was measured');
    return;
  }
  if (!fs.existsSync(record)) {
    lib.notice(
      `stepmon: no step was measured: there is no job record at ${record} (a step is measured when it runs with \`shell: stepmon shell {0}\`, for instance as the job's defaults.run.shell)`,
    );
    return;
  }
  let wantSummary = lib.booleanInput('summary', true);
  if (wantSummary === undefined) {
    lib.warning(`stepmon: the summary input is \`${lib.input('summary')}\`, not true or false: taken as true`);
    wantSummary = true;
  }
  if (wantSummary) summary(binary, record);
  const dir = lib.input('files');
  if (dir) files(binary, record, path.resolve(dir));
}

try {
  post();
} catch (e) {
  lib.warning(`stepmon: ${e.message}`);
}
process.exitCode = 0;

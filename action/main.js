// The action's main step: installs stepmon for the runner (from a release,
// or the binary at the `path` input), puts it on the PATH of the job's
// later steps, sets STEPMON_JOB (the job record every `stepmon shell`
// step appends to) and saves what the post step needs. A binary whose
// SHA-256 differs from the release's SHA256SUMS, or that does not run
// here, fails the step and is not installed.
//
// The release is read as scripts/install.sh reads it (the two must
// agree; scripts/dist writes the files): SHA256SUMS first, lines
// `SUM  NAME` (sha256sum's format, `*NAME` in its binary mode), and from
// it the one binary named stepmon-<version>-<arch>-unknown-linux-musl.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const lib = require('./lib.js');
const { files } = require('./report.js');

// The repository's address: cli/Cargo.toml's `repository`, install.sh's
// `repository=` (cli/tests/github_action.rs keeps them equal).
const REPOSITORY = 'https://github.com/stepmon/stepmon';

class Failure extends Error {}

/** The release's name of this runner's architecture (Node's process.arch). */
function target() {
  if (process.platform !== 'linux') {
    throw new Failure(
      `stepmon's binaries are for Linux; this runner is ${process.platform} (stepmon report and diff build from source elsewhere: cargo install --path cli in a clone)`,
    );
  }
  const arch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch];
  if (!arch) {
    throw new Failure(`no stepmon binary for ${process.arch} (there are x86_64 and aarch64); build it from source (cargo install --path cli in a clone)`);
  }
  return `${arch}-unknown-linux-musl`;
}

/** Where the release's files are, without a trailing slash. */
function releaseBase(version) {
  const base = lib.input('release-base');
  if (base) return base.replace(/\/+$/, '');
  if (version) return `${REPOSITORY}/releases/download/v${version}`;
  return `${REPOSITORY}/releases/latest/download`;
}

/** The bytes of the release's file `name`. */
async function fetchFile(base, name) {
  const where = `${base}/${name}`;
  if (/^https?:\/\//.test(base)) {
    let response;
    try {
      // fetch follows GitHub's redirect from the release to its storage.
      response = await fetch(where);
    } catch (e) {
      throw new Failure(`cannot fetch ${where}: ${e.cause ? e.cause.message || e.cause : e.message}`);
    }
    if (!response.ok) throw new Failure(`cannot fetch ${where}: HTTP ${response.status} ${response.statusText}`);
    return Buffer.from(await response.arrayBuffer());
  }
  const dir = base.startsWith('file://') ? base.slice('file://'.length) : base;
  try {
    return fs.readFileSync(path.join(dir, name));
  } catch (e) {
    throw new Failure(`cannot fetch ${where}: ${e.message}`);
  }
}

/** The sum and name of the one binary for `target` that SHA256SUMS lists. */
function pick(sums, base, version, target) {
  const asset = version ? `stepmon-${version}-${target}` : null;
  const matches = [];
  for (const line of sums.split('\n')) {
    const m = /^([0-9a-fA-F]{64}) [ *](\S+)$/.exec(line.replace(/\r$/, ''));
    if (!m) continue;
    const name = m[2];
    const fits = asset ? name === asset : name.startsWith('stepmon-') && name.endsWith(`-${target}`) && !name.includes('/');
    if (fits) matches.push({ sum: m[1].toLowerCase(), name });
  }
  if (matches.length === 0) {
    throw new Failure(`${base}/SHA256SUMS lists no ${version ? `version ${version} ` : ''}binary for ${target}`);
  }
  if (matches.length > 1) {
    throw new Failure(`${base}/SHA256SUMS lists more than one binary for ${target}: say which with the version input`);
  }
  return matches[0];
}

/** `binary --version`'s line, or a Failure saying why it does not run. */
function versionOf(binary, what) {
  const run = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  if (run.error || run.status !== 0) {
    const why = run.error ? run.error.message : `exit status ${run.status}${run.signal ? `, signal ${run.signal}` : ''}`;
    const said = (run.stderr || '').trim();
    throw new Failure(`${what} does not run here (${process.arch}): ${why}${said ? `: ${said}` : ''}; nothing installed`);
  }
  return run.stdout.trim();
}

/** Downloads, checks and installs the release's binary into `dir`; its path. */
async function install(dir) {
  const wanted = lib.input('version');
  const version = wanted === '' || wanted === 'latest' ? '' : wanted.replace(/^v/, '');
  const base = releaseBase(version);
  const triple = target();
  const sums = (await fetchFile(base, 'SHA256SUMS')).toString('utf8');
  const { sum, name } = pick(sums, base, version, triple);
  const bytes = await fetchFile(base, name);
  const actual = crypto.createHash('sha256').update(bytes).digest('hex');
  if (actual !== sum) {
    throw new Failure(`SHA-256 mismatch for ${base}/${name}: SHA256SUMS says ${sum}, the download is ${actual}; nothing installed`);
  }
  fs.mkdirSync(dir, { recursive: true });
  // Written beside its place and run once there (the directory may be
  // mounted noexec, the binary may be another machine's), then renamed
  // over the old one: a binary that does not run replaces nothing.
  const staged = path.join(dir, `.stepmon.install.${process.pid}`);
  const installed = path.join(dir, 'stepmon');
  fs.writeFileSync(staged, bytes, { mode: 0o755 });
  try {
    const said = versionOf(staged, `the ${triple} binary ${name}`);
    fs.renameSync(staged, installed);
    console.log(`installed ${said} (${name}, SHA-256 ${sum}) to ${installed}`);
  } finally {
    fs.rmSync(staged, { force: true });
  }
  return installed;
}

/** The binary of the `path` input, checked and linked into `dir` as `stepmon`. */
function useGiven(given, dir) {
  const binary = path.resolve(given);
  if (!fs.existsSync(binary)) throw new Failure(`the path input names ${binary}, which does not exist`);
  const said = versionOf(binary, `the path input's ${binary}`);
  fs.mkdirSync(dir, { recursive: true });
  // Linked as `stepmon` whatever its own name (a release asset keeps its
  // long name), so that `shell: stepmon shell {0}` finds it.
  const link = path.join(dir, 'stepmon');
  fs.rmSync(link, { force: true });
  fs.symlinkSync(binary, link);
  console.log(`using ${said} at ${binary}`);
  return link;
}

/**
 * A later use of the action in a job an earlier use set up: post steps run
 * only after every step of the job, so this one writes the `files` of the
 * job so far now, for an actions/upload-artifact step after it; the first
 * use's post step still reports the whole job.
 */
function later(binary, record) {
  lib.saveState('later', 'true');
  const dir = lib.input('files');
  if (!dir) {
    lib.notice('stepmon: installed by an earlier step of this job; this use does nothing without `files`');
    return;
  }
  if (!fs.existsSync(record)) {
    lib.notice(`stepmon: no step was measured yet: there is no job record at ${record}; no files written`);
    return;
  }
  files(binary, record, path.resolve(dir));
}

async function main() {
  const temp = process.env.RUNNER_TEMP;
  if (!temp) throw new Failure('RUNNER_TEMP is not set: not a GitHub Actions runner');
  const home = path.join(temp, 'stepmon');
  const bin = path.join(home, 'bin');
  const installed = path.join(bin, 'stepmon');
  if (process.env.STEPMON_JOB && fs.existsSync(installed)) {
    later(installed, process.env.STEPMON_JOB);
    return;
  }
  const given = lib.input('path');
  const binary = given ? useGiven(given, bin) : await install(bin);
  lib.addPath(bin);
  const record = path.join(home, 'job.jsonl');
  lib.exportVariable('STEPMON_JOB', record);
  lib.setOutput('record', record);
  lib.saveState('binary', binary);
  lib.saveState('record', record);
  console.log(`the job record is ${record} (STEPMON_JOB); steps with \`shell: stepmon shell {0}\` are measured into it`);
}

main().catch((e) => {
  lib.error(e instanceof Failure ? e.message : `stepmon's action failed: ${e.stack || e}`);
  process.exitCode = 1;
});

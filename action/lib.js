// What main.js and post.js share: the action's inputs and the runner's
// file commands, written as GitHub's runner reads them, with no npm
// package (the action runs as checked out: no build step, no
// node_modules).
//
// The runner's side of each is documented in "Workflow commands for
// GitHub Actions":
// https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/workflow-commands-for-github-actions
// - an input `name` arrives as the variable INPUT_<NAME> (upper case,
//   spaces as `_`, hyphens kept: INPUT_RELEASE-BASE);
// - GITHUB_ENV, GITHUB_OUTPUT and GITHUB_STATE take `name<<DELIMITER`,
//   the value's lines, then `DELIMITER` ("multiline strings"): the value
//   may then hold any character, newlines too, as long as the delimiter
//   is not one of its lines — so it is random;
// - GITHUB_PATH takes one directory a line, put before PATH in the later
//   steps;
// - a step's GITHUB_STATE values reach the post step as STATE_<name>;
// - `::error::`, `::warning::` and `::notice::` lines on stdout are
//   annotations; `%`, CR and LF in their text are escaped as %25, %0D, %0A.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');

/** The input `name` (trimmed; '' when not given). */
function input(name) {
  const value = process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`];
  return value === undefined ? '' : value.trim();
}

/**
 * The input `name` read as a YAML 1.2 core boolean, as actions' own
 * getBooleanInput reads it; `fallback` when it is empty; `undefined` when
 * it is neither (the caller says so).
 */
function booleanInput(name, fallback) {
  const value = input(name);
  if (value === '') return fallback;
  if (['true', 'True', 'TRUE'].includes(value)) return true;
  if (['false', 'False', 'FALSE'].includes(value)) return false;
  return undefined;
}

/** Escapes the text of a workflow command, as the runner unescapes it. */
function escapeData(text) {
  return String(text).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function annotate(level, message) {
  process.stdout.write(`::${level}::${escapeData(message)}\n`);
}

const error = (message) => annotate('error', message);
const warning = (message) => annotate('warning', message);
const notice = (message) => annotate('notice', message);

/** The file a file command goes to (its variable), or an Error naming it. */
function commandFile(variable) {
  const path = process.env[variable];
  if (!path) throw new Error(`${variable} is not set: not a GitHub Actions runner (or a runner too old for file commands)`);
  return path;
}

/** `name<<DELIMITER` `value` `DELIMITER`, appended to the file of `variable`. */
function appendKeyValue(variable, name, value) {
  const text = String(value);
  const delimiter = `ghadelimiter_${crypto.randomUUID()}`;
  // Cannot happen by chance; refused as the runner's own toolkit refuses it.
  if (name.includes(delimiter) || text.includes(delimiter)) {
    throw new Error(`the value of ${name} holds its delimiter`);
  }
  fs.appendFileSync(commandFile(variable), `${name}<<${delimiter}\n${text}\n${delimiter}\n`);
}

/** Sets the variable `name` for the job's later steps (and this one's process). */
function exportVariable(name, value) {
  process.env[name] = value;
  appendKeyValue('GITHUB_ENV', name, value);
}

/** Sets the step's output `name`. */
function setOutput(name, value) {
  appendKeyValue('GITHUB_OUTPUT', name, value);
}

/** Saves `value` for this action's post step (STATE_<name> there). */
function saveState(name, value) {
  appendKeyValue('GITHUB_STATE', name, value);
}

/** What the main step saved as `name` ('' when nothing). */
function getState(name) {
  return process.env[`STATE_${name}`] || '';
}

/** Puts `dir` first on the PATH of the job's later steps (and this process's). */
function addPath(dir) {
  fs.appendFileSync(commandFile('GITHUB_PATH'), `${dir}\n`);
  process.env.PATH = `${dir}:${process.env.PATH || ''}`;
}

module.exports = {
  input,
  booleanInput,
  escapeData,
  error,
  warning,
  notice,
  exportVariable,
  setOutput,
  saveState,
  getState,
  addPath,
};

'use strict';
// The benchmark harness of benchgate's example suite, written for this
// project. Benchmark files use it the way files in Node's benchmark/ use
// theirs, so `benchgate run` (and Node's compare.js) can drive them:
//
//   const bench = common.createBenchmark(main, { size: [1, 10], n: [1e5] },
//                                        { flags: ['--some-v8-flag'] });
//   function main({ size, n }) { bench.start(); ...; bench.end(n); }
//
// Launched as `node category/file.js [key=value ...]`, the file becomes a
// coordinator: it announces how many configurations it will run, then runs
// each configuration (every combination of the listed values, narrowed by
// key=value arguments) in a child process of its own, one after another,
// with the file's flags plus the coordinator's own node flags. Each child
// measures one configuration and reports {type: 'report', name, conf, rate,
// time}; the coordinator relays reports to whoever started it over the IPC
// channel, or prints them when it was started from a shell.
//
// bench.http(options, done) measures an HTTP server the benchmark started:
// it points a load generator (wrk or autocannon) at it and reports requests
// per second as the rate.

const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');

// A child learns which configuration to measure from this variable (JSON).
const ASSIGNMENT_VARIABLE = 'BENCHGATE_HARNESS_ASSIGNMENT';
const DEFAULT_PORT = 12346;
const LOAD_GENERATORS = ['wrk', 'autocannon'];

function fail(message) {
  process.stderr.write(`benchmark harness: ${message}\n`);
  process.exit(1);
}

// ---- reports ---------------------------------------------------------------

let unsentReports = 0;
let exitWhenSent = null;

function exitAfterReports(status) {
  if (unsentReports === 0) process.exit(status);
  exitWhenSent = status;
}

function printable(report) {
  const settings = Object.keys(report.conf)
    .map((key) => `${key}=${JSON.stringify(report.conf[key])}`)
    .join(', ');
  return `${report.name} [${settings}]  ${report.rate.toFixed(2)} ops/s  (${report.time.toFixed(6)} s)`;
}

function deliver(report) {
  if (typeof process.send !== 'function') {
    console.log(printable(report));
    return;
  }
  unsentReports++;
  process.send(report, () => {
    unsentReports--;
    if (unsentReports === 0 && exitWhenSent !== null) process.exit(exitWhenSent);
  });
}

// ---- configurations --------------------------------------------------------

function valueLists(configs) {
  const lists = {};
  for (const key of Object.keys(configs)) {
    const values = [].concat(configs[key]);
    for (const value of values) {
      if (typeof value !== 'number' && typeof value !== 'string') {
        fail(`option ${key}: values must be numbers or strings, not ${value === null ? 'null' : typeof value}`);
      }
    }
    lists[key] = values;
  }
  return lists;
}

// `key=value` from the command line: the key runs to the first '=', the value
// may be empty or hold '=' itself. A key the benchmark declares replaces its
// list of values (repeat the argument for several); any other key is kept as
// an extra setting (e.g. benchmarker=wrk for bench.http).
function applyArguments(lists, args) {
  const chosen = {};
  const extras = {};
  for (const arg of args) {
    const cut = arg.indexOf('=');
    if (cut < 1) fail(`argument ${JSON.stringify(arg)} is not of the form key=value`);
    const key = arg.slice(0, cut);
    const text = arg.slice(cut + 1);
    if (!Object.prototype.hasOwnProperty.call(lists, key)) {
      extras[key] = text;
      continue;
    }
    let value = text;
    if (typeof lists[key][0] === 'number') {
      value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) fail(`${key}=${text}: ${key} takes a number`);
    }
    if (!chosen[key]) chosen[key] = [];
    chosen[key].push(value);
  }
  return { lists: Object.assign({}, lists, chosen), extras };
}

// Every combination, the first key changing slowest. Inside each
// configuration the keys are stored last-declared first: the order in which
// compare.js-compatible tools print a configuration ("n=10 size=2").
function combinations(lists) {
  const keys = Object.keys(lists);
  const result = [];
  if (keys.some((key) => lists[key].length === 0)) return result;
  const dial = keys.map(() => 0);
  for (;;) {
    const conf = {};
    for (let k = keys.length - 1; k >= 0; k--) conf[keys[k]] = lists[keys[k]][dial[k]];
    result.push(conf);
    let k = keys.length - 1;
    while (k >= 0) {
      dial[k] += 1;
      if (dial[k] < lists[keys[k]].length) break;
      dial[k] = 0;
      k -= 1;
    }
    if (k < 0) return result;
  }
}

// ---- the coordinator -------------------------------------------------------

function runEachInChild(file, name, queue, extras, flags) {
  if (typeof process.send === 'function') {
    process.send({ type: 'config', name, queueLength: queue.length });
  }
  const extraArgs = Object.keys(extras).map((key) => `${key}=${extras[key]}`);
  const next = (position) => {
    if (position === queue.length) {
      exitAfterReports(0);
      return;
    }
    const conf = queue[position];
    const args = Object.keys(conf).map((key) => `${key}=${conf[key]}`).concat(extraArgs);
    const child = childProcess.fork(file, args, {
      execArgv: [...flags, ...process.execArgv],
      env: Object.assign({}, process.env, { [ASSIGNMENT_VARIABLE]: JSON.stringify({ conf, extras }) }),
    });
    child.on('message', (message) => {
      if (message && message.type === 'report') deliver(message);
    });
    child.on('error', (error) => fail(`cannot start a child for ${args.join(' ')}: ${error.message}`));
    child.on('exit', (code, signal) => {
      if (code === 0) {
        next(position + 1);
        return;
      }
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      process.stderr.write(`benchmark harness: ${name} ${args.join(' ')} ${how}\n`);
      exitAfterReports(code || 1);
    });
  };
  next(0);
}

// ---- the measurement -------------------------------------------------------

class Bench {
  constructor(name, conf, extras) {
    this.name = name;
    this.config = conf;
    this.extras = extras;
    this.startedAt = null;
    this.finished = false;
  }

  start() {
    if (this.startedAt !== null) fail(`${this.name}: bench.start() called a second time`);
    this.startedAt = process.hrtime.bigint();
  }

  end(operations) {
    const stoppedAt = process.hrtime.bigint();
    if (this.startedAt === null) fail(`${this.name}: bench.end() without bench.start()`);
    if (!(typeof operations === 'number' && Number.isFinite(operations) && operations > 0)) {
      fail(`${this.name}: bench.end(${operations}): the operation count must be a positive number`);
    }
    const seconds = Number(stoppedAt - this.startedAt) / 1e9;
    this.report(operations / seconds, seconds);
  }

  report(rate, seconds) {
    if (this.finished) fail(`${this.name}: a configuration may report only once`);
    this.finished = true;
    deliver({ type: 'report', name: this.name, conf: this.config, rate, time: seconds });
  }

  http(options, done) {
    const generator = options.benchmarker || this.config.benchmarker || this.extras.benchmarker ||
      LOAD_GENERATORS.find(onPath);
    if (!generator) fail(`${this.name}: bench.http needs wrk or autocannon on the PATH`);
    const load = {
      url: `http://127.0.0.1:${options.port || DEFAULT_PORT}${options.path || '/'}`,
      connections: options.connections || 100,
      seconds: options.duration || 5,
      threads: options.threads,
    };
    const began = process.hrtime.bigint();
    measureHttp(generator, load, (error, requestsPerSecond) => {
      const seconds = Number(process.hrtime.bigint() - began) / 1e9;
      if (typeof done === 'function') done(error ? 1 : 0);
      if (error) fail(`${this.name}: ${generator}: ${error}`);
      this.report(requestsPerSecond, seconds);
    });
  }
}

function onPath(program) {
  return (process.env.PATH || '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir || '.', program), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function measureHttp(generator, load, callback) {
  let args;
  let readRate;
  if (generator === 'wrk') {
    const threads = Math.max(1, Math.min(load.threads || 2, load.connections));
    args = ['-c', `${load.connections}`, '-t', `${threads}`, '-d', `${load.seconds}s`, load.url];
    readRate = (output) => {
      const bad = /Non-2xx or 3xx responses:\s*(\d+)/.exec(output);
      if (bad) throw new Error(`${bad[1]} responses were errors`);
      const found = /Requests\/sec:\s*([0-9.]+)/.exec(output);
      if (!found) throw new Error('no "Requests/sec:" line in its output');
      return Number(found[1]);
    };
  } else if (generator === 'autocannon') {
    args = ['-j', '-n', '-c', `${load.connections}`, '-d', `${load.seconds}`, load.url];
    readRate = (output) => {
      const summary = JSON.parse(output);
      if (summary.errors || summary.non2xx) {
        throw new Error(`${summary.errors} errors, ${summary.non2xx} non-2xx responses`);
      }
      return summary.requests.average;
    };
  } else {
    callback(`unknown load generator (use ${LOAD_GENERATORS.join(' or ')})`);
    return;
  }
  childProcess.execFile(generator, args, { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
    if (error) {
      callback(`${error.message.trim()} ${String(stderr).trim()}`.trim());
      return;
    }
    let rate;
    try {
      rate = readRate(String(stdout));
    } catch (problem) {
      callback(problem.message);
      return;
    }
    if (!(rate > 0 && Number.isFinite(rate))) {
      callback(`measured no requests (${rate} requests/s)`);
      return;
    }
    callback(null, rate);
  });
}

// ---- entry point -----------------------------------------------------------

function createBenchmark(main, configs, options = {}) {
  const file = require.main.filename;
  const name = `${path.basename(path.dirname(file))}/${path.basename(file)}`;
  const assignment = process.env[ASSIGNMENT_VARIABLE];
  if (assignment !== undefined) {
    // A child: measure the one configuration the coordinator assigned.
    delete process.env[ASSIGNMENT_VARIABLE]; // processes the benchmark starts are not children
    const { conf, extras } = JSON.parse(assignment);
    const bench = new Bench(name, conf, extras);
    process.nextTick(() => main(conf));
    return bench;
  }
  const { lists, extras } = applyArguments(valueLists(configs), process.argv.slice(2));
  const queue = combinations(lists);
  const bench = new Bench(name, queue[0], extras);
  const flags = [].concat(options.flags || []);
  process.nextTick(() => runEachInChild(file, name, queue, extras, flags));
  return bench;
}

module.exports = { createBenchmark, PORT: DEFAULT_PORT };

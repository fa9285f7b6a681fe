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
// key=value arguments and by options.combinationFilter(conf)) in a child
// process of its own, one after another, with the flags of
// NODE_BENCHMARK_FLAGS and options.flags plus the coordinator's own node
// flags. A child is told that it is one by NODE_RUN_BENCHMARK_FN in its
// environment and gets its configuration as key=value arguments. Each child
// measures one configuration and reports {type: 'report', name, conf, rate,
// time}; the coordinator relays every message of its children to whoever
// started it over the IPC channel, or prints reports when it was started
// from a shell. With no configuration left to run the file exits 0 having
// sent nothing. A child that dies by a signal is left out; a child that
// exits with an error ends the file with its status.
//
// BENCHGATE_HARNESS_PROTOCOL picks the generation of Node's harness this one
// speaks like, so that benchgate's tests see every form a checkout sends:
//
//   current (default)  Node v16.1.0 and later: `time` is a string of decimal
//                      seconds with nine fraction digits ("0.003866894"); a
//                      configuration child exits at most 5 s after its report;
//                      bench.http adds the load generator to `conf` as
//                      `benchmarker`.
//   legacy             Node v8 to v16.0: `time` is a number of seconds.
//
// bench.http(options, done) measures an HTTP server the benchmark started:
// it points a load generator (wrk or autocannon, or h2load when named) at it
// and reports requests per second as the rate (h2load's as the text it
// prints, as Node's harness does).

const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');

const PROTOCOLS = ['current', 'legacy'];
const protocol = process.env.BENCHGATE_HARNESS_PROTOCOL || 'current';
const CHILD_VARIABLE = 'NODE_RUN_BENCHMARK_FN';
const isChild = process.env[CHILD_VARIABLE] !== undefined;
const DEFAULT_PORT = Number(process.env.PORT) || 12346;
const LOAD_GENERATORS = ['wrk', 'autocannon'];
const CHILD_EXIT_GRACE_MS = 5000;
const NANOSECONDS_PER_SECOND = 1000000000n;

function fail(message) {
  process.stderr.write(`benchmark harness: ${message}\n`);
  process.exit(1);
}

if (!PROTOCOLS.includes(protocol)) {
  fail(`BENCHGATE_HARNESS_PROTOCOL=${protocol}: expected one of ${PROTOCOLS.join(', ')}`);
}

// ---- the time field --------------------------------------------------------

// "12.000345678": whole seconds, a point, always nine digits of nanoseconds.
function secondsText(nanoseconds) {
  const whole = nanoseconds / NANOSECONDS_PER_SECOND;
  const fraction = (nanoseconds % NANOSECONDS_PER_SECOND).toString().padStart(9, '0');
  return `${whole}.${fraction}`;
}

// The legacy harness added the two halves of process.hrtime()'s [s, ns].
function secondsNumber(nanoseconds) {
  return Number(nanoseconds / NANOSECONDS_PER_SECOND) + Number(nanoseconds % NANOSECONDS_PER_SECOND) / 1e9;
}

function timeField(nanoseconds) {
  return protocol === 'current' ? secondsText(nanoseconds) : secondsNumber(nanoseconds);
}

// ---- reports ---------------------------------------------------------------

let unsentMessages = 0;
let exitWhenSent = null;

function exitAfterReports(status) {
  if (unsentMessages === 0) process.exit(status);
  exitWhenSent = status;
}

function printable(report) {
  const settings = Object.keys(report.conf)
    .map((key) => `${key}=${JSON.stringify(report.conf[key])}`)
    .join(', ');
  const rate = Number(report.rate);
  const seconds = Number(report.time);
  return `${report.name} [${settings}]  ${rate.toFixed(2)} ops/s  (${seconds.toFixed(6)} s)`;
}

function deliver(message) {
  if (typeof process.send !== 'function') {
    if (message && message.type === 'report') console.log(printable(message));
    return;
  }
  unsentMessages++;
  process.send(message, () => {
    unsentMessages--;
    if (isChild && protocol === 'current') {
      // A child that keeps handles open (a server a load generator left
      // half-closed) still ends, as Node's current harness makes it.
      setTimeout(() => process.exit(0), CHILD_EXIT_GRACE_MS).unref();
    }
    if (unsentMessages === 0 && exitWhenSent !== null) process.exit(exitWhenSent);
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
// list of values (repeat the argument for several), typed like the first
// declared value; any other key is kept as an extra setting (e.g.
// benchmarker=wrk for bench.http) and passed on to every child.
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

function keepCombinations(queue, filter) {
  if (filter === undefined) return queue;
  if (typeof filter !== 'function') fail('options.combinationFilter must be a function');
  return queue.filter((conf) => {
    const keep = filter(Object.assign({}, conf));
    if (typeof keep !== 'boolean') fail('options.combinationFilter must return true or false');
    return keep;
  });
}

function nodeFlags(options) {
  const fromEnvironment = (process.env.NODE_BENCHMARK_FLAGS || '').split(/\s+/).filter(Boolean);
  return fromEnvironment.concat(options.flags || []);
}

// ---- the coordinator -------------------------------------------------------

function runEachInChild(file, name, queue, extras, flags) {
  deliver({ type: 'config', name, queueLength: queue.length });
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
      env: Object.assign({}, process.env, { [CHILD_VARIABLE]: '' }),
    });
    child.on('message', deliver);
    child.on('error', (error) => fail(`cannot start a child for ${args.join(' ')}: ${error.message}`));
    child.on('close', (code, signal) => {
      if (code === 0) {
        next(position + 1);
      } else if (signal) {
        process.stderr.write(`benchmark harness: ${name} ${args.join(' ')} was killed by ${signal}; left out\n`);
        next(position + 1);
      } else {
        process.stderr.write(`benchmark harness: ${name} ${args.join(' ')} exited with status ${code}\n`);
        exitAfterReports(code);
      }
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
    // Node's own tests set this to run benchmarks with 0 operations.
    const zeroAllowed = Boolean(process.env.NODEJS_BENCHMARK_ZERO_ALLOWED);
    if (!(typeof operations === 'number' && Number.isFinite(operations) && (operations > 0 || zeroAllowed))) {
      fail(`${this.name}: bench.end(${operations}): the operation count must be a positive number`);
    }
    const elapsed = stoppedAt - this.startedAt;
    if (elapsed === 0n) {
      if (!zeroAllowed) fail(`${this.name}: no time passed between start() and end(); measure more operations`);
      this.report(operations && Number.MAX_VALUE, 0n);
      return;
    }
    this.report(operations / (Number(elapsed) / 1e9), elapsed);
  }

  report(rate, nanoseconds) {
    if (this.finished) fail(`${this.name}: a configuration may report only once`);
    this.finished = true;
    deliver({ type: 'report', name: this.name, conf: this.config, rate, time: timeField(nanoseconds) });
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
      const elapsed = process.hrtime.bigint() - began;
      if (typeof done === 'function') done(error ? 1 : 0);
      if (error) fail(`${this.name}: ${generator}: ${error}`);
      if (protocol === 'current') this.config.benchmarker = generator;
      this.report(requestsPerSecond, elapsed);
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
  } else if (generator === 'h2load') {
    args = ['-c', `${load.connections}`, '-D', `${load.seconds}`, load.url];
    readRate = (output) => {
      const found = /(\d+\.\d+) req\/s/.exec(output);
      if (!found) throw new Error('no "req/s" figure in its output');
      return found[1]; // the text h2load printed: Node's harness reports it as a string
    };
  } else {
    callback(`unknown load generator (use ${LOAD_GENERATORS.join(' or ')}, or h2load)`);
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
    if (!(Number(rate) > 0 && Number.isFinite(Number(rate)))) {
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
  const { lists, extras } = applyArguments(valueLists(configs), process.argv.slice(2));
  const queue = keepCombinations(combinations(lists), options.combinationFilter);
  const bench = new Bench(name, queue[0], extras);
  bench.queue = queue; // as Node's Benchmark keeps it: what a coordinator forks, in order
  if (queue.length === 0) return bench; // nothing to run: exit 0 having sent nothing
  if (isChild) {
    // A child's arguments leave exactly one configuration: measure it here.
    process.nextTick(() => main(queue[0]));
  } else {
    process.nextTick(() => runEachInChild(file, name, queue, extras, nodeFlags(options)));
  }
  return bench;
}

module.exports = { createBenchmark, PORT: DEFAULT_PORT };

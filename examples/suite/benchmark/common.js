'use strict';
// benchgate's own benchmark harness. It speaks the protocol of Node's
// benchmark/common.js so that `benchgate run` and `node benchmark/compare.js`
// can drive these files:
//   * `node file.js [key=value ...]` runs every combination of the file's
//     configuration values, each in a forked child (with the file's `flags`
//     and the parent's execArgv), one child at a time;
//   * a child (NODE_RUN_BENCHMARK_FN in its environment) runs one
//     configuration and reports {type: 'report', name, conf, rate, time};
//   * reports travel to the parent over the IPC channel (process.send), or are
//     printed as `name key=value: rate` when nobody listens.

const { fork } = require('child_process');
const path = require('path');

const ARGUMENT = /^(.+?)=([\s\S]*)$/;

function benchmarkName(mainFile) {
  // category/file.js, relative to the benchmark directory.
  const category = path.dirname(mainFile);
  return path.relative(path.dirname(category), mainFile).split(path.sep).join('/');
}

function parseArguments(argv, configs) {
  const chosen = {};
  const extra = {};
  for (const argument of argv) {
    const match = ARGUMENT.exec(argument);
    if (match === null) {
      console.error(`bad argument: ${argument}`);
      process.exit(1);
    }
    const [, key, text] = match;
    if (!Object.hasOwn(configs, key)) {
      extra[key] = text;
      continue;
    }
    const numeric = typeof configs[key][0] === 'number';
    (chosen[key] ??= []).push(numeric ? Number(text) : text);
  }
  return { values: { ...configs, ...chosen }, extra };
}

function combinations(values) {
  // Every combination, the first key varying slowest; in each configuration
  // object later keys come first, as Node's harness builds them.
  const keys = Object.keys(values);
  let partial = [{}];
  for (const key of keys) {
    const next = [];
    for (const config of partial) {
      for (const value of values[key]) {
        if (typeof value !== 'number' && typeof value !== 'string') {
          throw new TypeError(`configuration "${key}" had type ${typeof value}`);
        }
        next.push({ [key]: value, ...config });
      }
    }
    partial = next;
  }
  return partial;
}

function describe(report) {
  const settings = Object.entries(report.conf)
    .map(([key, value]) => ` ${key}=${JSON.stringify(value)}`)
    .join('');
  return `${report.name}${settings}: ${report.rate}`;
}

function sendResult(report) {
  if (process.send) {
    process.send(report);
  } else {
    console.log(describe(report));
  }
}

class Benchmark {
  #startedAt = null;
  #ended = false;

  constructor(fn, configs, options = {}) {
    const normalized = {};
    for (const [key, value] of Object.entries(configs)) {
      normalized[key] = Array.isArray(value) ? value : [value];
    }
    this.name = benchmarkName(require.main.filename);
    const parsed = parseArguments(process.argv.slice(2), normalized);
    this.extraOptions = parsed.extra;
    this.queue = combinations(parsed.values);
    this.config = this.queue[0];
    const inherited = process.env.NODE_BENCHMARK_FLAGS ?
      process.env.NODE_BENCHMARK_FLAGS.split(/\s+/) : [];
    this.flags = inherited.concat(options.flags || []);
    process.nextTick(() => {
      if (Object.hasOwn(process.env, 'NODE_RUN_BENCHMARK_FN')) {
        fn(this.config);
      } else {
        this.#runAll();
      }
    });
  }

  #runAll() {
    if (process.send) {
      process.send({ type: 'config', name: this.name, queueLength: this.queue.length });
    }
    const runOne = (index) => {
      const config = this.queue[index];
      const args = Object.entries(config).map(([key, value]) => `${key}=${value}`);
      for (const [key, value] of Object.entries(this.extraOptions)) {
        args.push(`${key}=${value}`);
      }
      const child = fork(require.main.filename, args, {
        env: { ...process.env, NODE_RUN_BENCHMARK_FN: '' },
        execArgv: this.flags.concat(process.execArgv),
      });
      child.on('message', sendResult);
      child.on('close', (code) => {
        if (code) process.exit(code);
        if (index + 1 < this.queue.length) runOne(index + 1);
      });
    };
    runOne(0);
  }

  start() {
    if (this.#startedAt !== null) throw new Error('start() called twice');
    this.#startedAt = process.hrtime.bigint();
  }

  end(operations) {
    const elapsedNs = process.hrtime.bigint() - (this.#startedAt ?? 0n);
    if (this.#startedAt === null) throw new Error('end() called before start()');
    if (this.#ended) throw new Error('end() called twice');
    if (typeof operations !== 'number' || !(operations > 0)) {
      throw new Error('end() needs a positive operation count');
    }
    this.#ended = true;
    const time = Number(elapsedNs) / 1e9;
    sendResult({ name: this.name, conf: this.config, rate: operations / time, time, type: 'report' });
  }
}

module.exports = {
  createBenchmark(fn, configs, options) {
    return new Benchmark(fn, configs, options);
  },
  sendResult,
};

'use strict';
// benchgate's configuration expansion, loaded with `node --require THIS FILE.js [--set args]`.
//
// The benchmark file runs as the coordinator it is under compare.js: its common.js builds the
// queue of configurations (--set values, filters, combinationFilter, byGroups) and forks one
// child per configuration. Here no child starts: child_process.fork is replaced by a stand-in
// that reports over the IPC channel what it was asked to start (the arguments, the execArgv
// and whether the environment marks it as a configuration child) together with the queue entry
// common.js built for it, and then "closes" at once so common.js forks the next one.
const childProcess = require('child_process');
const Module = require('module');
const { EventEmitter } = require('events');

const preload = __filename;
const benchmarks = [];
let forks = 0;

const originalLoad = Module._load;
Module._load = function load(request, parent, isMain) {
  const loaded = originalLoad.apply(this, arguments);
  if (loaded && typeof loaded.createBenchmark === 'function' && !loaded.createBenchmark.benchgateWrapped) {
    const create = loaded.createBenchmark;
    const wrapped = function createBenchmark() {
      const bench = create.apply(this, arguments);
      benchmarks.push(bench);
      return bench;
    };
    wrapped.benchgateWrapped = true;
    try {
      loaded.createBenchmark = wrapped;
    } catch {
      // a frozen module: the configurations' objects stay unknown, the runner falls back to whole files
    }
  }
  return loaded;
};

childProcess.fork = function fork(modulePath, args, options) {
  const index = forks++;
  const bench = benchmarks.length === 1 ? benchmarks[0] : null;
  const queue = bench && Array.isArray(bench.queue) ? bench.queue : null;
  const execArgv = (options && Array.isArray(options.execArgv)) ? options.execArgv : [];
  // common.js passes this.flags.concat(process.execArgv): the part before process.execArgv is the file's own.
  const own = process.execArgv.filter((arg, position, all) => arg !== preload && all[position + 1] !== preload &&
                                       arg !== `--require=${preload}`);
  let flags = execArgv;
  if (execArgv.length >= process.execArgv.length &&
      process.execArgv.every((arg, i) => execArgv[execArgv.length - process.execArgv.length + i] === arg)) {
    flags = execArgv.slice(0, execArgv.length - process.execArgv.length);
  }
  const env = (options && options.env) || {};
  process.send({
    type: 'benchgate-configuration',
    index,
    queueLength: queue ? queue.length : null,
    module: Boolean(process.mainModule) && String(modulePath) === process.mainModule.filename,
    args: Array.isArray(args) ? args.map(String) : [],
    flags: flags.map(String),
    parentArgv: own,
    runFn: Object.prototype.hasOwnProperty.call(env, 'NODE_RUN_BENCHMARK_FN'),
    conf: queue && index < queue.length ? queue[index] : null,
  });
  const child = new EventEmitter();
  child.send = () => true;
  child.kill = () => true;
  setImmediate(() => child.emit('close', 0, null));
  return child;
};

'use strict';
// Creating Error objects: most of the cost is capturing the stack trace,
// which V8's --stack-trace-limit bounds.
const common = require('../common.js');

const bench = common.createBenchmark(main, {
  depth: [30],
  n: [100000],
});

function nest(depth, fn) {
  return depth === 0 ? fn() : nest(depth - 1, fn);
}

function main({ depth, n }) {
  nest(depth, () => {
    let created = 0;
    bench.start();
    for (let i = 0; i < n; i++) {
      if (new Error('boom').message.length > 0) created++;
    }
    bench.end(created);
  });
}

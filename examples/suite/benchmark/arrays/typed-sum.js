'use strict';
// A tight numeric loop: its speed comes from the optimizing compiler.
const common = require('../common.js');

const bench = common.createBenchmark(main, {
  type: ['Float64Array', 'Int32Array'],
  n: [200],
});

function main({ type, n }) {
  const values = new globalThis[type](10000);
  for (let i = 0; i < values.length; i++) values[i] = i % 97;
  let total = 0;
  bench.start();
  for (let round = 0; round < n; round++) {
    for (let i = 0; i < values.length; i++) total += values[i];
  }
  bench.end(n);
  if (total < 0) console.log(total);
}

'use strict';
// JSON.parse runs in the engine's C++ runtime: compiler flags barely touch it.
const common = require('../common.js');

const bench = common.createBenchmark(main, {
  shape: ['flat', 'nested'],
  n: [150],
});

function document(shape) {
  const rows = [];
  for (let i = 0; i < 2000; i++) {
    rows.push(shape === 'flat' ?
      { id: i, name: `item ${i}`, price: i * 1.25, tags: 'a,b,c' } :
      { id: i, meta: { name: `item ${i}`, tags: ['a', 'b', { c: i }] } });
  }
  return JSON.stringify(rows);
}

function main({ shape, n }) {
  const text = document(shape);
  let count = 0;
  bench.start();
  for (let i = 0; i < n; i++) count += JSON.parse(text).length;
  bench.end(n);
  if (count === 0) console.log(count);
}

'use strict';
// String splitting with a separator chosen per configuration (string values
// appear single- or double-quoted in the configuration, as util.inspect shows).
const common = require('../common.js');

const bench = common.createBenchmark(main, {
  separator: [',', "'"],
  n: [20000],
});

function main({ separator, n }) {
  const text = Array.from({ length: 200 }, (_, i) => `field${i}`).join(separator);
  let parts = 0;
  bench.start();
  for (let i = 0; i < n; i++) parts += text.split(separator).length;
  bench.end(n);
  if (parts === 0) console.log(parts);
}

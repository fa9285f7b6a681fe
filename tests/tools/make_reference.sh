#!/usr/bin/env bash
# Regenerate the R reference data under tests/fixtures/analyze/ (needs R; CI does not).
#
# usage: tests/tools/make_reference.sh [PATH/TO/compare.R]
#
# For each canonical fixture FIXTURE.csv this writes FIXTURE.r.csv, R's own
# t.test/qt/p.adjust numbers (tests/tools/r_reference.R). Given the path of a
# Node checkout's benchmark/compare.R (with its _cli.R beside it; keep it outside
# this repository, e.g. under /tmp), it also stores what compare.R prints for the
# fixture as FIXTURE.compare-R.txt. compare.R runs with LC_COLLATE=C (byte-order
# rows, benchgate's order) and a UTF-8 LC_CTYPE (so R prints ± rather than escapes).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
fixtures="$here/../fixtures/analyze"
compare_r="${1:-}"
canonical=(quoting unequal-n scales small-n constant many sorting name-collision)
# compare.R stops on constant.csv ("data are essentially constant") and merges the
# two rows of name-collision.csv, so its output is kept only for the others.
with_compare_r=(quoting unequal-n scales small-n many sorting)

for name in "${canonical[@]}"; do
  Rscript "$here/r_reference.R" "$fixtures/$name.csv" "$fixtures/$name.r.csv"
done
if [[ -n "$compare_r" ]]; then
  for name in "${with_compare_r[@]}"; do
    env -u LC_ALL LANG=C.UTF-8 LC_CTYPE=C.UTF-8 LC_COLLATE=C \
      Rscript "$compare_r" < "$fixtures/$name.csv" > "$fixtures/$name.compare-R.txt"
  done
  # For the record: in a UTF-8 collation locale (C.UTF-8 included) R sorts with ICU instead of bytes.
  env -u LC_ALL -u LC_COLLATE LANG=C.UTF-8 LC_CTYPE=C.UTF-8 \
    Rscript "$compare_r" < "$fixtures/sorting.csv" > "$fixtures/sorting.compare-R-utf8-collation.txt"
fi
echo "reference data written to $fixtures"

#!/usr/bin/env bash
# Fold throughput: the Go benchmark on >100 MB of real perf script text
# (a MariaDB capture repeated), on one core and on all, with the ratio to
# stackcollapse-perf.pl. The Perl figure is 25 MB/s unless STACKCOLLAPSE_PL
# points at the script, in which case it is measured here on the same input.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test ./fold -run '^$' -bench 'BenchmarkFoldPerfScript' -benchtime 5x -count 3)
echo "$out" | grep -E '^Benchmark'
perl_mbps=25
if [ -n "${STACKCOLLAPSE_PL:-}" ]; then
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  for _ in $(seq 1 5); do zcat testdata/perf/mariadb-10.5-update-index.perf.script.gz; done > "$tmp"
  size=$(stat -c %s "$tmp")
  start=$(date +%s.%N); perl "$STACKCOLLAPSE_PL" "$tmp" > /dev/null; end=$(date +%s.%N)
  perl_mbps=$(echo "$size / ($end - $start) / 1000000" | bc -l)
  printf 'stackcollapse-perf.pl: %.1f MB/s (measured on %d MB)\n' "$perl_mbps" "$((size / 1000000))"
fi
echo "$out" | awk -v perl="$perl_mbps" '/^Benchmark/ { for (i = 1; i <= NF; i++) if ($(i) == "MB/s") { name = $1; sum[name] += $(i-1); n[name]++ } }
  END { for (k in sum) printf "%-45s mean of %d runs %7.1f MB/s  = %5.1fx stackcollapse-perf.pl (%.1f MB/s)\n", k, n[k], sum[k]/n[k], sum[k]/n[k]/perl, perl }' | sort

#!/usr/bin/env bash
# make demo: the version lab on three real MariaDB releases and MySQL.
# Installs what is missing (linux-perf, mariadb-server, sysbench), builds
# flamediff, fetches MariaDB 10.5 (Debian bullseye) and 11.8 (trixie) and
# MySQL 9.7 (sid) into the cache (~/.cache/flamediff, or FLAMEDIFF_CACHE),
# runs examples/lab/demo.yaml (update-nonindex and point-select on 10.5,
# 10.11, 11.8 and MySQL 9.7, three interleaved rounds, each cell an
# unprofiled then a profiled run) and writes the report to out/demo
# (replacing an earlier demo). DEMO_REPEAT changes the number of rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
out=${DEMO_OUT:-out/demo}

if [ "$(id -u)" != 0 ]; then
  echo "make demo needs root: it installs packages, starts servers and samples them with perf" >&2
  exit 1
fi
missing=()
for pkg in linux-perf mariadb-server sysbench; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "demo: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  # The packaged server is not used; the lab starts its own.
  systemctl stop mariadb 2>/dev/null || service mariadb stop 2>/dev/null || true
fi

go build -o bin/flamediff ./cmd/flamediff
rm -rf "$out"
start=$(date +%s)
echo "demo: load average $(cut -d' ' -f1-3 /proc/loadavg) (figures taken on a busy machine are noisier)"
args=(bench -c examples/lab/demo.yaml --out "$out" --repeat "${DEMO_REPEAT:-3}")
[ -n "${FLAMEDIFF_CACHE:-}" ] && args+=(--cache "$FLAMEDIFF_CACHE")
bin/flamediff "${args[@]}"
echo "demo: done in $(( $(date +%s) - start )) s, load average $(cut -d' ' -f1-3 /proc/loadavg); open $out/index.html (or read $out/report.md)"

#!/usr/bin/env bash
# Makes a perf script fixture from the installed MariaDB (Debian's
# mariadb-server) under sysbench, on a private datadir and unix socket.
# Usage: testdata/scripts/capture-mariadb.sh OUTDIR [sysbench-test] [seconds]
# Writes OUTDIR/NAME.perf.script.gz (default perf script fields) and
# OUTDIR/NAME.fields.perf.script.gz (perf script -F comm,pid,tid,time,event,ip,sym,dso,period).
# Needs root, linux-perf, mariadb-server and sysbench.
set -euo pipefail
out=${1:?usage: $0 OUTDIR [sysbench-test] [seconds]}
test=${2:-oltp_update_non_index}
secs=${3:-5}
work=$(mktemp -d /tmp/flamediff-capture.XXXXXX)
sock=$work/mysqld.sock
cleanup() {
  if [ -f "$work/mysqld.pid" ]; then kill "$(cat "$work/mysqld.pid")" 2>/dev/null || true; sleep 2; fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
mkdir -p "$work/data"
chown -R mysql:mysql "$work"
mariadb-install-db --no-defaults --user=mysql --datadir="$work/data" --auth-root-authentication-method=normal >"$work/install.log" 2>&1
mariadbd --no-defaults --user=mysql --datadir="$work/data" --socket="$sock" --pid-file="$work/mysqld.pid" \
  --skip-networking --innodb-buffer-pool-size=256M --skip-log-bin >"$work/err.log" 2>&1 &
for _ in $(seq 1 60); do mariadb-admin --socket="$sock" -uroot ping >/dev/null 2>&1 && break; sleep 0.5; done
mariadb --socket="$sock" -uroot -e 'CREATE DATABASE sbtest'
sb=(sysbench "$test" --db-driver=mysql --mysql-socket="$sock" --mysql-user=root --tables=1 --table-size=10000 --threads=1)
"${sb[@]}" prepare >/dev/null
"${sb[@]}" --time=$((secs + 6)) run >"$work/sysbench.log" &
sbpid=$!
sleep 3
pid=$(cat "$work/mysqld.pid")
perf record -F 499 -g -o "$work/perf.data" -p "$pid" -- sleep "$secs" 2>/dev/null
wait "$sbpid"
name="mariadb-$(mariadbd --version | sed -E 's/.*Ver ([0-9]+\.[0-9]+).*/\1/')-${test#oltp_}"
mkdir -p "$out"
perf script -i "$work/perf.data" 2>/dev/null | gzip -9 > "$out/$name.local.perf.script.gz"
perf script -i "$work/perf.data" -F comm,pid,tid,time,event,ip,sym,dso,period 2>/dev/null | gzip -9 > "$out/$name.local-fields.perf.script.gz"
echo "wrote $out/$name.local.perf.script.gz and $out/$name.local-fields.perf.script.gz"

#!/usr/bin/env bash
# Runs parsec bench's measurement matrix and prints it as Markdown tables on
# stdout, one table per group, each opening with a trivial-handler baseline
# (cmd/trivialhttp, `--workload trivial`) measured just before the group, in
# the same run:
#
#   point read         1 KB reads (durable server)
#   point write        1 KB creates, durable (--data DIR) and --in-memory
#   ycsb-a             50% read / 50% update
#   query-pk           all items of one partition key
#   query-cross        cross-partition TOP 10 ORDER BY
#   partitions         reads with 1, 4 and 16 physical partitions
#                      (10,000 / 40,000 / 160,000 RU/s containers)
#   item size          reads of 1 KB, 10 KB and 100 KB items
#
# It builds bin/parsec and bin/trivialhttp, starts the servers on free
# loopback ports (Parsec with --no-throttle, so that the throttle is not what
# is measured), waits for /_ready and stops them at the end. Progress goes
# to stderr.
#
# Environment:
#   BENCH_DURATION     duration of each run (default 10s; 2s with BENCH_SHORT=1)
#   BENCH_ITEMS        items loaded for 1 KB runs (default 10000; 1000 short);
#                      larger items are loaded in proportionally smaller
#                      numbers (at least 100), so each layout holds the same data
#   BENCH_CONCURRENCY  workers (default 32)
#   BENCH_CLIENT       bench HTTP client, raw or nethttp (default raw)
#   BENCH_SHORT=1      a quick smoke run
set -euo pipefail
cd "$(dirname "$0")/.."

short=${BENCH_SHORT:-0}
if [[ $short == 1 ]]; then
  duration=${BENCH_DURATION:-2s}
  items=${BENCH_ITEMS:-1000}
else
  duration=${BENCH_DURATION:-10s}
  items=${BENCH_ITEMS:-10000}
fi
concurrency=${BENCH_CONCURRENCY:-32}
client=${BENCH_CLIENT:-raw}

log() { echo "bench-record: $*" >&2; }

log "building bin/parsec and bin/trivialhttp"
mkdir -p bin
go build -o bin/parsec ./cmd/parsec
go build -o bin/trivialhttp ./cmd/trivialhttp

work=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_ready URL PID: polls URL/_ready until it answers 200 (30 s at most).
wait_ready() {
  python3 - "$1" "$2" <<'EOF'
import os, sys, time, urllib.request
url, pid = sys.argv[1] + "/_ready", int(sys.argv[2])
deadline = time.time() + 30
while time.time() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("the server exited before it was ready")
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            if r.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.1)
sys.exit(url + " did not answer within 30 s")
EOF
}

# start NAME CMD...: starts a server listening on 127.0.0.1:$port (the
# command's own --listen), waits until it is ready and sets $url.
start() {
  local name=$1
  shift
  "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  url="http://127.0.0.1:$port"
  if ! wait_ready "$url" "$pid"; then
    cat "$work/$name.log" >&2
    exit 1
  fi
  log "$name: ${*#bin/} (pid $pid) at $url"
}

port=$(free_port)
start trivialhttp bin/trivialhttp --listen "127.0.0.1:$port"
trivial_url=$url

port=$(free_port)
mkdir -p "$work/data"
start parsec-durable bin/parsec serve --data "$work/data" --no-throttle --listen "127.0.0.1:$port"
durable_url=$url

port=$(free_port)
start parsec-memory bin/parsec serve --in-memory --no-throttle --listen "127.0.0.1:$port"
memory_url=$url

# row LABEL URL BENCH-ARGS...: runs one bench and prints its table row.
row() {
  local label=$1 endpoint=$2
  shift 2
  local out status=0
  log "run: $label: bench $*"
  out=$(bin/parsec bench --endpoint "$endpoint" --json --no-progress --duration "$duration" \
    --concurrency "$concurrency" --client "$client" "$@" 2>"$work/bench.log") || status=$?
  if [[ $status != 0 ]]; then
    tail -5 "$work/bench.log" >&2
    echo "| $label \`bench $*\` | failed (exit $status) | | | | | |"
    return 0
  fi
  python3 -c '
import json, sys
label, args = sys.argv[1], sys.argv[2]
r = json.loads(sys.stdin.read())
label = label.replace("{ranges}", str(r.get("partitionKeyRanges", "?")))
lat = r["latencyMs"]
print("| %s `bench %s` | %.0f | %.3f | %.3f | %.0f | %d | %d |" % (
    label, args, r["throughput"], lat["p50"], lat["p99"], r["ruPerSecond"], r["throttled"], r["errors"]))
' "$label" "$*" <<<"$out"
}

group() {
  echo
  echo "### $1"
  echo
  echo "| command | ops/s | p50 ms | p99 ms | RU/s | 429s | errors |"
  echo "|---|---|---|---|---|---|---|"
  row "trivialhttp (baseline)" "$trivial_url" --workload trivial
}

echo "All runs: \`parsec bench --duration $duration --concurrency $concurrency --client $client --json\`;" \
  "Parsec servers \`serve --no-throttle\`, durable (\`--data DIR\`) unless marked in-memory; $(nproc) cores, $(go env GOVERSION)."

group "point read (1 KB)"
row "durable" "$durable_url" --workload read --items "$items" --item-size 1024 --container read

group "point write (1 KB)"
row "durable" "$durable_url" --workload write --item-size 1024 --container write
row "in-memory" "$memory_url" --workload write --item-size 1024 --container write

group "ycsb-a (1 KB)"
row "durable" "$durable_url" --workload ycsb-a --items "$items" --item-size 1024 --container ycsb

group "query-pk (1 KB)"
row "durable" "$durable_url" --workload query-pk --items "$items" --item-size 1024 --container ycsb

group "query-cross (1 KB)"
row "durable" "$durable_url" --workload query-cross --items "$items" --item-size 1024 --container ycsb

group "physical partitions (1 KB reads)"
for layout in "1 6000" "4 24000" "16 96000"; do
  set -- $layout
  row "durable, partition key ranges: {ranges}" "$durable_url" --workload read --items "$items" --item-size 1024 \
    --throughput "$2" --container "p$1"
done

group "item size (reads)"
for kb in 1 10 100; do
  n=$((items / kb))
  if ((n < 100)); then n=100; fi
  row "durable, $kb KB" "$durable_url" --workload read --items "$n" --item-size $((kb * 1024)) --container "s${kb}k"
done
